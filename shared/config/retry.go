package config

import (
	"fmt"
	"strings"
	"time"
)

// DefaultSchedule is the retry schedule used when a destination gives none:
// about a day in total.
var DefaultSchedule = []Duration{
	Duration(5 * time.Second), Duration(30 * time.Second), Duration(2 * time.Minute),
	Duration(10 * time.Minute), Duration(30 * time.Minute), Duration(time.Hour),
	Duration(2 * time.Hour), Duration(4 * time.Hour), Duration(8 * time.Hour),
}

// DefaultJitter is the retry jitter when a destination sets none.
const DefaultJitter = 0.2

// MaxScheduleLength bounds a retry schedule.
const MaxScheduleLength = 50

// Retry is a destination's retry policy.
type Retry struct {
	// Schedule holds the delays before each retry, as Go durations ("30s",
	// "2m"); one attempt plus one per delay. Each delay at most
	// Destination.MaxDelay (12h less the function timeout, the batch window
	// and a minute).
	Schedule []Duration `json:"schedule,omitempty"`
	// Jitter spreads each delay by up to ±Jitter of itself (0..1). Default 0.2.
	Jitter *float64 `json:"jitter,omitempty"`
}

// Schedule is the retry schedule in force: the delays before each retry.
func (d Destination) Schedule() []time.Duration {
	src := d.Retry.Schedule
	if len(src) == 0 {
		src = DefaultSchedule
	}
	out := make([]time.Duration, len(src))
	for i, v := range src {
		out[i] = v.D()
	}
	return out
}

// Jitter is the retry jitter fraction in force.
func (d Destination) Jitter() float64 {
	if d.Retry.Jitter == nil {
		return DefaultJitter
	}
	return *d.Retry.Jitter
}

func (r *Retry) valid() bool {
	for _, d := range r.Schedule {
		if d <= 0 || d.D() > MaxVisibility {
			return false
		}
	}
	return r.Jitter == nil || (*r.Jitter >= 0 && *r.Jitter < 1)
}

func (r *Retry) validate(p *problems, at string) {
	if r.Schedule != nil && len(r.Schedule) == 0 {
		p.add(at+".schedule", "is empty; list at least one delay, or omit it for the default (%s)", formatSchedule(DefaultSchedule))
	}
	if len(r.Schedule) > MaxScheduleLength {
		p.add(at+".schedule", "has %d delays; use at most %d", len(r.Schedule), MaxScheduleLength)
	}
	for i, d := range r.Schedule {
		// A delay too long is the destination's to judge: how long depends
		// on its timeout and batch window (validateQueueTiming).
		if d <= 0 {
			p.add(fmt.Sprintf("%s.schedule[%d]", at, i), "%s is out of range; each delay must be more than 0", d.D())
		}
	}
	if r.Jitter != nil && (*r.Jitter < 0 || *r.Jitter >= 1) {
		p.add(at+".jitter", "%g is out of range; use 0 (none) up to but not including 1 (default %g)", *r.Jitter, DefaultJitter)
	}
}

func formatSchedule(s []Duration) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.D().String()
	}
	return strings.Join(parts, ", ")
}
