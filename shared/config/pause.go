package config

import (
	"fmt"
	"time"
)

// Pause settings: when a lane stops delivering because its destination
// keeps failing, how it is probed, and how long it may stay stopped.
const (
	// DefaultPauseAfterFailures is the threshold in force when a pause block
	// sets no trigger: consecutive failed deliveries. It stays below the
	// default schedule's 10 attempts, so one event failing alone pauses the
	// lane before its own attempts run out.
	DefaultPauseAfterFailures = 5
	MaxPauseAfterFailures     = 10000

	DefaultPauseWindow = 5 * time.Minute
	MinPauseWindow     = time.Minute
	MaxPauseWindow     = 24 * time.Hour

	DefaultPauseMinAttempts = 20
	MaxPauseMinAttempts     = 1000000

	// DefaultProbeEvery is how often a paused lane is probed. EventBridge
	// schedules run at most once a minute, in whole minutes.
	DefaultProbeEvery = time.Minute
	MinProbeEvery     = time.Minute
	MaxProbeEvery     = time.Hour

	// DLQRedriveWindow is the least time a message of a lane that pauses
	// stays in its DLQ, for an operator to redrive it: the DLQ keeps
	// messages DLQRetention from the event's arrival, so the queue's
	// retention, which grows by maxPause, must leave this much of it.
	DLQRedriveWindow = 3 * 24 * time.Hour

	// DefaultMaxPause bounds the time a lane may spend paused within any
	// span of its queue's retention: a weekend's outage.
	DefaultMaxPause = 72 * time.Hour
)

// Pause makes a lane stop delivering while its destination is down, so
// events wait in the queue without spending their attempts. The lane
// pauses after AfterFailures consecutive failed deliveries, or when the
// failure rate over Window reaches FailureRate (with at least MinAttempts
// attempts counted); a scheduled probe resumes it once the destination
// answers 2xx. With no trigger set, AfterFailures is
// DefaultPauseAfterFailures. Absent (nil), the lane never pauses.
type Pause struct {
	// AfterFailures is the number of consecutive failed deliveries (attempts
	// that reached the destination or failed to connect) that pause the lane.
	AfterFailures int `json:"afterFailures,omitempty"`
	// FailureRate (0 < rate ≤ 1) pauses the lane when that share of the
	// attempts over Window failed.
	FailureRate float64 `json:"failureRate,omitempty"`
	// Window is the span FailureRate is measured over (default 5m).
	Window Duration `json:"window,omitempty"`
	// MinAttempts is the fewest attempts over Window that FailureRate is
	// judged on (default 20).
	MinAttempts int `json:"minAttempts,omitempty"`
	// ProbeEvery is how often a paused lane is probed: whole minutes, 1m to
	// 1h (default 1m).
	ProbeEvery Duration `json:"probeEvery,omitempty"`
	// MaxPause is the longest the lane may spend paused within any span of
	// its queue's retention; when a pause reaches it, the lane resumes
	// whatever the probe says (default 72h). The queue's retention grows by
	// it.
	MaxPause Duration `json:"maxPause,omitempty"`
}

// PauseRule is a lane's pause settings with the defaults applied.
type PauseRule struct {
	// AfterFailures is 0 when consecutive failures do not pause the lane.
	AfterFailures int
	// FailureRate is 0 when the rate does not pause the lane; Window and
	// MinAttempts are then 0 too.
	FailureRate float64
	Window      time.Duration
	MinAttempts int
	ProbeEvery  time.Duration
	MaxPause    time.Duration
}

// PauseRule returns the destination's pause settings in force, and false
// when the lane never pauses.
func (d Destination) PauseRule() (PauseRule, bool) {
	p := d.Pause
	if p == nil {
		return PauseRule{}, false
	}
	r := PauseRule{AfterFailures: p.AfterFailures, ProbeEvery: p.ProbeEvery.D(), MaxPause: p.MaxPause.D()}
	if p.FailureRate > 0 {
		r.FailureRate, r.Window, r.MinAttempts = p.FailureRate, p.Window.D(), p.MinAttempts
		if r.Window == 0 {
			r.Window = DefaultPauseWindow
		}
		if r.MinAttempts == 0 {
			r.MinAttempts = DefaultPauseMinAttempts
		}
	} else if r.AfterFailures == 0 {
		r.AfterFailures = DefaultPauseAfterFailures
	}
	if r.ProbeEvery == 0 {
		r.ProbeEvery = DefaultProbeEvery
	}
	if r.MaxPause == 0 {
		r.MaxPause = DefaultMaxPause
	}
	return r, true
}

// PauseReserve is the part of the queue's retention kept for pauses: the
// longest time a message may spend paused (MaxPause), or 0 when the lane
// never pauses.
func (d Destination) PauseReserve() time.Duration {
	r, ok := d.PauseRule()
	if !ok {
		return 0
	}
	return r.MaxPause
}

// ScheduleRetention is the part of the queue's retention the retry
// schedule may use, Retry-After stretching included: the retention less
// the pause reserve.
func (d Destination) ScheduleRetention() time.Duration {
	return d.Retention() - d.PauseReserve()
}

func (p *Pause) validate(pr *problems, at string, d *Destination) {
	if p.AfterFailures < 0 || p.AfterFailures > MaxPauseAfterFailures {
		pr.add(at+".afterFailures", "%d is out of range; use 1 to %d consecutive failed deliveries (default %d when no failureRate is set)", p.AfterFailures, MaxPauseAfterFailures, DefaultPauseAfterFailures)
	}
	if p.FailureRate < 0 || p.FailureRate > 1 {
		pr.add(at+".failureRate", "%g is out of range; use a share of failed attempts above 0 and at most 1 (0.9 pauses at 90%% failures)", p.FailureRate)
	}
	if p.FailureRate == 0 {
		if p.Window != 0 {
			pr.add(at+".window", "%s is set without failureRate; set failureRate too, or remove window", p.Window.D())
		}
		if p.MinAttempts != 0 {
			pr.add(at+".minAttempts", "%d is set without failureRate; set failureRate too, or remove minAttempts", p.MinAttempts)
		}
	}
	if w := p.Window.D(); w != 0 && (w < MinPauseWindow || w > MaxPauseWindow) {
		pr.add(at+".window", "%s is out of range; use %s to %s (default %s)", w, MinPauseWindow, MaxPauseWindow, DefaultPauseWindow)
	}
	if p.MinAttempts < 0 || p.MinAttempts > MaxPauseMinAttempts {
		pr.add(at+".minAttempts", "%d is out of range; use 1 to %d attempts (default %d)", p.MinAttempts, MaxPauseMinAttempts, DefaultPauseMinAttempts)
	}
	probe := p.ProbeEvery.D()
	switch {
	case probe == 0:
	case probe < MinProbeEvery || probe > MaxProbeEvery:
		pr.add(at+".probeEvery", "%s is out of range; use %s to %s in whole minutes (default %s)", probe, MinProbeEvery, MaxProbeEvery, DefaultProbeEvery)
	case probe%time.Minute != 0:
		pr.add(at+".probeEvery", "%s is not a whole number of minutes, which an EventBridge schedule needs; use %s", probe, probe.Truncate(time.Minute))
	}
	if probe == 0 {
		probe = DefaultProbeEvery
	}
	longest := p.MaxPause.D()
	if longest == 0 {
		longest = DefaultMaxPause
	}
	if longest < probe {
		pr.add(at+".maxPause", "%s is shorter than probeEvery (%s); a pause must last until at least one probe, use %s or more", longest, probe, probe)
	}
	if d.Retry.valid() && d.TimeoutSeconds >= 0 {
		// A schedule that alone needs more than SQS keeps is reported on
		// retry.schedule.
		need := d.retentionNeeded()
		if need > MaxRetention {
			return
		}
		// A message reaches the DLQ at the latest when its queue's retention
		// runs out, and the DLQ's 14 days count from its arrival: the
		// retention (twice the schedule's need, plus the longest pause)
		// must leave the redrive window.
		forSchedule := 2 * need
		retention := roundUp(forSchedule+longest, time.Minute)
		if retention+DLQRedriveWindow > DLQRetention {
			most := (DLQRetention - DLQRedriveWindow - forSchedule).Truncate(time.Hour)
			if most < probe {
				pr.add(at+".maxPause", "%s cannot fit: the queue keeps a message for twice its retry schedule (%s) before any pause, and the DLQ, whose %s count from the event's arrival, must still keep it %s for a redrive; shorten the schedule to make room for pauses",
					longest, roundUp(forSchedule, time.Hour), DLQRetention, DLQRedriveWindow)
			} else {
				pr.add(at+".maxPause", "%s is too long: a message may stay in the queue up to its retention (%s: twice the retry schedule's %s, plus the longest pause) before it reaches the DLQ, whose %s count from the event's arrival, leaving it less than the %s kept for a redrive; use at most %s",
					longest, retention, roundUp(need, time.Minute), DLQRetention, DLQRedriveWindow, most)
			}
		}
	}
}

// String describes the rule for logs and the operator command.
func (r PauseRule) String() string {
	s := ""
	if r.AfterFailures > 0 {
		s = fmt.Sprintf("after %d consecutive failures", r.AfterFailures)
	}
	if r.FailureRate > 0 {
		if s != "" {
			s += " or "
		}
		s += fmt.Sprintf("at %g%% failures over %s (at least %d attempts)", r.FailureRate*100, r.Window, r.MinAttempts)
	}
	return fmt.Sprintf("pause %s; probe every %s; at most %s paused", s, r.ProbeEvery, r.MaxPause)
}
