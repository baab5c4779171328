package pausing

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Rule is a lane's pause rule with its queue's retention, which the
// pause bound is counted over.
type Rule struct {
	config.PauseRule
	// Retention is the queue's message retention: a message spends at most
	// MaxPause paused, because the pauses within any span of Retention add
	// up to at most MaxPause.
	Retention time.Duration
}

// RuleFor derives a lane's policy from its destination; ok is false
// when the lane never pauses.
func RuleFor(d config.Destination) (p Rule, ok bool) {
	r, ok := d.PauseRule()
	if !ok {
		return Rule{}, false
	}
	return Rule{PauseRule: r, Retention: d.Retention()}, true
}

// Trip reports whether the counts in s pause the lane at now, and why.
func (p Rule) Trip(s State, now time.Time) (reason string, trips bool) {
	if p.AfterFailures > 0 && s.Failures >= p.AfterFailures {
		return fmt.Sprintf("%d consecutive failed deliveries", s.Failures), true
	}
	if p.FailureRate > 0 {
		attempts, failures := s.Rate(now, p.Window)
		if attempts >= float64(p.MinAttempts) && attempts > 0 && failures/attempts >= p.FailureRate {
			return fmt.Sprintf("%.0f%% of about %.0f deliveries failed over the last %s", 100*failures/attempts, attempts, p.Window), true
		}
	}
	return "", false
}

// Rate estimates the attempts and failures of the last width before now:
// the current window's counts plus the previous window's, weighted by the
// share of it that still lies within width of now.
func (s State) Rate(now time.Time, width time.Duration) (attempts, failures float64) {
	idx := WindowIndex(now, width)
	elapsed := now.Sub(time.UnixMilli(idx * width.Milliseconds()))
	weight := 1 - float64(elapsed)/float64(width)
	for _, w := range s.Windows {
		switch w.Index {
		case idx:
			attempts += float64(w.Attempts)
			failures += float64(w.Failures)
		case idx - 1:
			attempts += weight * float64(w.Attempts)
			failures += weight * float64(w.Failures)
		}
	}
	return attempts, failures
}

// WindowIndex is the failure-rate window holding t.
func WindowIndex(t time.Time, width time.Duration) int64 {
	return t.UnixMilli() / width.Milliseconds()
}

// Spent is the time the lane spent paused within the retention before
// now: its past pauses, and the one in force.
func (p Rule) Spent(s State, now time.Time) time.Duration {
	since := now.Add(-p.Retention)
	total := time.Duration(0)
	overlap := func(from, to time.Time) {
		from = later(from, since)
		if to.After(from) {
			total += to.Sub(from)
		}
	}
	for _, iv := range s.Pauses {
		overlap(iv.From, iv.To)
	}
	if s.IsPaused() {
		overlap(s.PausedAt, now)
	}
	return total
}

// Budget is how long a pause starting at now may last: MaxPause less the
// time spent paused within the retention.
func (p Rule) Budget(s State, now time.Time) time.Duration {
	return max(p.MaxPause-p.Spent(s, now), 0)
}

// MaxKept bounds the past pauses a lane keeps; past it, the oldest two
// are merged into one spanning both, which can only overcount the time
// spent paused.
const MaxKept = 100

// Keep returns the pauses that still count at now (those ending within the
// retention), with ended added, at most MaxKept of them.
func (p Rule) Keep(past []Interval, ended Interval, now time.Time) []Interval {
	since := now.Add(-p.Retention)
	out := make([]Interval, 0, len(past)+1)
	for _, iv := range append(slices.Clone(past), ended) {
		if iv.To.After(since) {
			out = append(out, iv)
		}
	}
	slices.SortFunc(out, func(a, b Interval) int { return a.From.Compare(b.From) })
	for len(out) > MaxKept {
		out[1] = Interval{From: out[0].From, To: later(out[0].To, out[1].To)}
		out = out[1:]
	}
	return out
}

func sortWindows(w []Window) {
	slices.SortFunc(w, func(a, b Window) int { return cmp.Compare(a.Index, b.Index) })
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
