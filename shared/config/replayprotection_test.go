package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// replayConfig is a configuration with one source of each kind named after
// it, the given replay block on the named source.
func replayConfig(source, block string) string {
	var b strings.Builder
	b.WriteString(`{"sources": [`)
	for i, s := range [][2]string{
		{"stripe", `"kind": "stripe"`}, {"github", `"kind": "github"`}, {"shopify", `"kind": "shopify"`},
		{"slack", `"kind": "slack"`}, {"standard-webhooks", `"kind": "standard-webhooks"`},
		{"hmac", `"kind": "hmac", "header": "X-Sig"`}, {"token", `"kind": "token", "header": "X-Token"`},
	} {
		if i > 0 {
			b.WriteString(",")
		}
		extra := ""
		if s[0] == source {
			extra = `, "replayProtection": ` + block
		}
		b.WriteString(`{"name": "` + s[0] + `", "verify": {` + s[1] + `, "secretName": "hookfan/sources/` + s[0] + `"}` + extra + `}`)
	}
	b.WriteString(`]}`)
	return b.String()
}

func TestReplayInvalid(t *testing.T) {
	timestamped := func(kind string) string {
		return `: set for kind "` + kind + `", which signs a timestamp: its tolerance (verify.toleranceSeconds) already refuses a replayed request; remove it (it applies to github, shopify, hmac and token)`
	}
	tests := []struct {
		source, block string
		want          []string
	}{
		{"stripe", `{"enabled": false}`, []string{"sources[0].replayProtection" + timestamped("stripe")}},
		{"slack", `{"windowDays": 3}`, []string{"sources[3].replayProtection" + timestamped("slack")}},
		{"standard-webhooks", `{"enabled": true}`, []string{"sources[4].replayProtection" + timestamped("standard-webhooks")}},
		{"github", `{"windowDays": 0.5}`, []string{`sources[1].replayProtection.windowDays: 0.5 is not a whole number; write one without a fraction or exponent`}},
		{"github", `{"windowDays": -1}`, []string{`sources[1].replayProtection.windowDays: -1 is out of range; use 1 to 365 days (default 7)`}},
		{"shopify", `{"windowDays": 366}`, []string{`sources[2].replayProtection.windowDays: 366 is out of range; use 1 to 365 days (default 7)`}},
		{"hmac", `{"enabled": false, "windowDays": 30}`, []string{`sources[5].replayProtection.windowDays: set while replayProtection.enabled is false; remove it, or turn replay protection back on`}},
		{"token", `{"enabled": "no"}`, []string{`sources[6].replayProtection.enabled: "no" is a string; want true or false`}},
		{"token", `{"window": "7d"}`, []string{`sources[6].replayProtection.window: unknown field; did you mean windowDays?`}},
	}
	for _, tt := range tests {
		t.Run(tt.source+" "+tt.block, func(t *testing.T) {
			_, err := Parse([]byte(replayConfig(tt.source, tt.block)))
			if err == nil {
				t.Fatal("Parse accepted an invalid replay block")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestReplayWindows: on by default, 7 days, for the kinds that sign no
// timestamp; never for the others; off or longer per source.
func TestReplayWindows(t *testing.T) {
	const day = 24 * time.Hour
	tests := []struct {
		source, block string
		want          map[string]time.Duration
	}{
		{"", "", map[string]time.Duration{"github": 7 * day, "shopify": 7 * day, "hmac": 7 * day, "token": 7 * day}},
		{"github", `{"enabled": false}`, map[string]time.Duration{"shopify": 7 * day, "hmac": 7 * day, "token": 7 * day}},
		{"token", `{"windowDays": 30}`, map[string]time.Duration{"github": 7 * day, "shopify": 7 * day, "hmac": 7 * day, "token": 30 * day}},
		{"hmac", `{"enabled": true, "windowDays": 1}`, map[string]time.Duration{"github": 7 * day, "shopify": 7 * day, "hmac": day, "token": 7 * day}},
	}
	for _, tt := range tests {
		t.Run(tt.source+" "+tt.block, func(t *testing.T) {
			c, err := Parse([]byte(replayConfig(tt.source, tt.block)))
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]time.Duration{}
			for _, s := range c.Sources {
				if w := s.ReplayWindow(); w != 0 {
					got[s.Name] = w
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("windows (-want +got):\n%s", diff)
			}
			if !ReplayProtected(c.Sources) {
				t.Error("ReplayProtected = false")
			}
			// The block reaches ingest unchanged.
			back, err := DecodeSources("HOOKFAN_SOURCES", EncodeSources(c.Sources))
			if err != nil {
				t.Fatal(err)
			}
			for i := range back {
				if back[i].ReplayWindow() != c.Sources[i].ReplayWindow() {
					t.Errorf("%s: window %s after the environment round trip, want %s", back[i].Name, back[i].ReplayWindow(), c.Sources[i].ReplayWindow())
				}
			}
		})
	}
	c, err := Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}},
	  {"name": "github", "verify": {"kind": "github", "secretName": "g"}, "replayProtection": {"enabled": false}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if ReplayProtected(c.Sources) {
		t.Error("ReplayProtected = true for timestamped and opted-out sources only")
	}
}
