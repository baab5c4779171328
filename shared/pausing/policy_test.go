package pausing_test

import (
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

func TestTripConsecutive(t *testing.T) {
	p := pausing.Rule{PauseRule: config.PauseRule{AfterFailures: 5}}
	for _, tt := range []struct {
		failures int
		trips    bool
	}{{0, false}, {4, false}, {5, true}, {9, true}} {
		reason, trips := p.Trip(pausing.State{Failures: tt.failures}, t0)
		if trips != tt.trips {
			t.Errorf("%d failures: trips = %v, want %v", tt.failures, trips, tt.trips)
		}
		if trips && reason != strconv.Itoa(tt.failures)+" consecutive failed deliveries" {
			t.Errorf("%d failures: reason %q", tt.failures, reason)
		}
	}
}

// TestTripRate: the rate over the last window is the current window's
// counts plus the previous window's, weighted by how much of it is still
// within one width of now.
func TestTripRate(t *testing.T) {
	const width = 10 * time.Minute
	p := pausing.Rule{PauseRule: config.PauseRule{FailureRate: 0.9, Window: width, MinAttempts: 20}}
	idx := pausing.WindowIndex(t0, width)
	start := time.UnixMilli(idx * width.Milliseconds())
	now := start.Add(width / 4) // three quarters of the previous window count
	tests := []struct {
		name               string
		windows            []pausing.Window
		attempts, failures float64
		trips              bool
	}{
		{"too few attempts to judge", []pausing.Window{{Index: idx, Attempts: 19, Failures: 19}}, 19, 19, false},
		{"enough, all failed", []pausing.Window{{Index: idx, Attempts: 20, Failures: 20}}, 20, 20, true},
		{"the previous window weighs three quarters", []pausing.Window{{Index: idx - 1, Attempts: 20, Failures: 20}, {Index: idx, Attempts: 8, Failures: 4}},
			23, 19, false},
		{"older windows do not count", []pausing.Window{{Index: idx - 2, Attempts: 100, Failures: 100}, {Index: idx - 1, Attempts: 40, Failures: 40}, {Index: idx, Attempts: 2, Failures: 2}},
			32, 32, true},
		{"at the rate exactly", []pausing.Window{{Index: idx, Attempts: 30, Failures: 27}}, 30, 27, true},
		{"just under it", []pausing.Window{{Index: idx, Attempts: 30, Failures: 26}}, 30, 26, false},
	}
	for _, tt := range tests {
		s := pausing.State{Windows: tt.windows}
		a, f := s.Rate(now, width)
		if diff := cmp.Diff([]float64{tt.attempts, tt.failures}, []float64{a, f}); diff != "" {
			t.Errorf("%s: Rate (-want +got):\n%s", tt.name, diff)
		}
		if _, trips := p.Trip(s, now); trips != tt.trips {
			t.Errorf("%s: trips = %v, want %v", tt.name, trips, tt.trips)
		}
	}
}

// TestBudget: a lane may spend at most MaxPause paused within any span of
// its queue's retention, so no message waits paused longer than that.
func TestBudget(t *testing.T) {
	p := pausing.Rule{PauseRule: config.PauseRule{MaxPause: 3 * time.Hour}, Retention: 10 * time.Hour}
	s := pausing.State{Mode: pausing.Paused, PausedAt: t0.Add(-30 * time.Minute), Pauses: []pausing.Interval{
		{From: t0.Add(-12 * time.Hour), To: t0.Add(-11 * time.Hour)},                              // outside the retention
		{From: t0.Add(-10*time.Hour - 30*time.Minute), To: t0.Add(-9*time.Hour - 30*time.Minute)}, // half inside: 30m
		{From: t0.Add(-2 * time.Hour), To: t0.Add(-time.Hour)},                                    // 1h
	}}
	if got, want := p.Spent(s, t0), 2*time.Hour; got != want {
		t.Errorf("Spent = %s, want %s (30m + 1h + the 30m in force)", got, want)
	}
	if got, want := p.Budget(s, t0), time.Hour; got != want {
		t.Errorf("Budget = %s, want %s", got, want)
	}
	s.Pauses = append(s.Pauses, pausing.Interval{From: t0.Add(-5 * time.Hour), To: t0.Add(-3 * time.Hour)})
	if got := p.Budget(s, t0); got != 0 {
		t.Errorf("Budget past the bound = %s, want 0", got)
	}
}

func TestKeep(t *testing.T) {
	p := pausing.Rule{Retention: 10 * time.Hour}
	old := pausing.Interval{From: t0.Add(-12 * time.Hour), To: t0.Add(-11 * time.Hour)}
	edge := pausing.Interval{From: t0.Add(-11 * time.Hour), To: t0.Add(-9 * time.Hour)}
	ended := pausing.Interval{From: t0.Add(-time.Hour), To: t0}
	if diff := cmp.Diff([]pausing.Interval{edge, ended}, p.Keep([]pausing.Interval{old, edge}, ended, t0)); diff != "" {
		t.Errorf("Keep (-want +got):\n%s", diff)
	}
	// Past MaxKept the oldest merge: the time counted can only grow.
	var many []pausing.Interval
	for i := range pausing.MaxKept + 5 {
		from := t0.Add(-9*time.Hour + time.Duration(i)*time.Minute)
		many = append(many, pausing.Interval{From: from, To: from.Add(10 * time.Second)})
	}
	kept := p.Keep(many, ended, t0)
	if len(kept) != pausing.MaxKept {
		t.Fatalf("kept %d, want %d", len(kept), pausing.MaxKept)
	}
	before := p.Spent(pausing.State{Pauses: append(many, ended)}, t0)
	after := p.Spent(pausing.State{Pauses: kept}, t0)
	if after < before {
		t.Errorf("merging undercounts: %s kept, %s before", after, before)
	}
}
