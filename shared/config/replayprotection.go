package config

import (
	"time"

	"github.com/hookfan/hookfan/shared/provider"
)

// Replay protection's window, in days.
const (
	DefaultReplayWindowDays = 7
	MaxReplayWindowDays     = 365
)

// ReplayProtection is a source's replay protection. The kinds that sign no timestamp
// (github, shopify, hmac, token) have it on by default: a copy of a
// verified request within the window is answered as the original and not
// published. The timestamped kinds refuse the block: their tolerance
// already refuses a replayed request.
type ReplayProtection struct {
	// Enabled false turns it off for this source. Default true.
	Enabled *bool `json:"enabled,omitempty"`
	// WindowDays is how long a verified request is remembered, 1 to 365.
	// Default 7.
	WindowDays int `json:"windowDays,omitempty"`
}

// On reports whether the block leaves protection on (the default).
func (r ReplayProtection) On() bool { return r.Enabled == nil || *r.Enabled }

// Window is how long a verified request is remembered.
func (r ReplayProtection) Window() time.Duration {
	days := r.WindowDays
	if days == 0 {
		days = DefaultReplayWindowDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// ReplayWindow is how long this source's verified requests are remembered;
// 0 when it has no replay protection (its kind signs a timestamp, or the
// source turned it off).
func (s Source) ReplayWindow() time.Duration {
	k, ok := provider.Lookup(s.Verify.Kind)
	if !ok || k.Fingerprint == nil || !s.ReplayProtection.On() {
		return 0
	}
	return s.ReplayProtection.Window()
}

// ReplayProtected reports whether any of sources has replay protection,
// and so needs the replay table.
func ReplayProtected(sources []Source) bool {
	for _, s := range sources {
		if s.ReplayWindow() > 0 {
			return true
		}
	}
	return false
}

func (r *ReplayProtection) validate(p *problems, at, kind string, k provider.Kind, known bool) {
	if *r == (ReplayProtection{}) {
		return
	}
	if known && k.Fingerprint == nil {
		p.add(at, "set for kind %q, which signs a timestamp: its tolerance (verify.toleranceSeconds) already refuses a replayed request; remove it (it applies to %s)",
			kind, kindList(func(k provider.Kind) bool { return k.Fingerprint != nil }))
		return
	}
	switch d := r.WindowDays; {
	case d == 0:
	case !r.On():
		p.add(at+".windowDays", "set while replayProtection.enabled is false; remove it, or turn replay protection back on")
	case d < 1 || d > MaxReplayWindowDays:
		p.add(at+".windowDays", "%d is out of range; use 1 to %d days (default %d)", d, MaxReplayWindowDays, DefaultReplayWindowDays)
	}
}
