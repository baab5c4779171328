// Package pausingtest checks that a lane state store keeps the protocol the
// pausing package relies on. The memory store's unit tests and the
// integration tests (the DynamoDB store on the emulator) run the same
// checks.
package pausingtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/pausing"
)

// Store runs the protocol checks, each on a fresh destination name of
// newDest's on the store.
func Store(t *testing.T, store pausing.Store, newDest func() string) {
	ctx := context.Background()
	// Whole milliseconds: the DynamoDB store keeps epoch milliseconds.
	t0 := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	const width = time.Minute

	t.Run("a lane never written is active", func(t *testing.T) {
		d := newDest()
		s, err := store.Get(ctx, d)
		if err != nil {
			t.Fatal(err)
		}
		if s.Destination != d || s.Mode != pausing.Active || s.Version != 0 || s.Failures != 0 {
			t.Errorf("Get = %+v, want an active lane at version 0", s)
		}
	})

	t.Run("counts: consecutive failures and the rate windows", func(t *testing.T) {
		d := newDest()
		count := func(at time.Time, outcomes ...bool) pausing.State {
			t.Helper()
			var tl pausing.Tally
			for _, ok := range outcomes {
				tl.Add(ok)
			}
			s, err := store.Count(ctx, d, tl, at, width)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		idx := pausing.WindowIndex(t0, width)
		count(t0, false, false)
		s := count(t0.Add(time.Second), false)
		if s.Failures != 3 {
			t.Errorf("after 3 failures, Failures = %d", s.Failures)
		}
		s = count(t0.Add(2*time.Second), false, true, false)
		if s.Failures != 1 {
			t.Errorf("a batch with a success: Failures = %d, want the 1 failure after it", s.Failures)
		}
		if diff := cmp.Diff([]pausing.Window{{Index: idx, Attempts: 6, Failures: 5}}, s.Windows); diff != "" {
			t.Errorf("windows (-want +got):\n%s", diff)
		}
		s = count(t0.Add(width), true)
		if diff := cmp.Diff([]pausing.Window{{Index: idx, Attempts: 6, Failures: 5}, {Index: idx + 1, Attempts: 1}}, s.Windows); diff != "" {
			t.Errorf("windows one width later (-want +got):\n%s", diff)
		}
		s = count(t0.Add(2*width), false)
		if diff := cmp.Diff([]pausing.Window{{Index: idx + 1, Attempts: 1}, {Index: idx + 2, Attempts: 1, Failures: 1}}, s.Windows); diff != "" {
			t.Errorf("windows two widths later: the oldest is dropped (-want +got):\n%s", diff)
		}
		if got, err := store.Get(ctx, d); err != nil || got.Failures != 1 || !got.UpdatedAt.Equal(t0.Add(2*width)) {
			t.Errorf("Get = %+v, %v; want 1 failure, updated at %s", got, err, t0.Add(2*width))
		}
	})

	t.Run("pause, probe, take over, resume", func(t *testing.T) {
		d := newDest()
		in := pausing.PauseInput{At: t0, ResumeBy: t0.Add(time.Hour), Reason: "5 consecutive failed deliveries", By: pausing.ByDeliverer}
		p, err := store.Pause(ctx, d, in)
		if err != nil {
			t.Fatal(err)
		}
		want := pausing.State{Destination: d, Mode: pausing.Paused, Version: 1, PausedAt: t0, ResumeBy: t0.Add(time.Hour),
			Reason: in.Reason, By: pausing.ByDeliverer, UpdatedAt: t0}
		if diff := cmp.Diff(want, p); diff != "" {
			t.Errorf("after Pause (-want +got):\n%s", diff)
		}
		// A second deliverer decided from the same state: refused, told
		// what the lane is now.
		again, err := store.Pause(ctx, d, in)
		if !errors.Is(err, pausing.ErrChanged) || again.Version != 1 || !again.IsPaused() {
			t.Errorf("Pause from a stale version = %+v, %v; want ErrChanged with the paused state", again, err)
		}

		at := t0.Add(time.Minute)
		if _, err := store.StartProbe(ctx, d, at, at.Add(30*time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := store.StartProbe(ctx, d, at.Add(10*time.Second), at.Add(40*time.Second)); !errors.Is(err, pausing.ErrProbeBusy) {
			t.Errorf("StartProbe while one runs: %v, want ErrProbeBusy", err)
		}
		if err := store.FinishProbe(ctx, d, pausing.ProbeResult{At: at.Add(2 * time.Second), Status: 503, Error: "HTTP 503"}); err != nil {
			t.Fatal(err)
		}
		s, err := store.StartProbe(ctx, d, at.Add(3*time.Second), at.Add(33*time.Second))
		if err != nil {
			t.Fatalf("StartProbe after the last one finished: %v", err)
		}
		if s.Probes != 2 || s.LastProbeStatus != 503 || s.LastProbeError != "HTTP 503" || !s.LastProbeAt.Equal(at.Add(2*time.Second)) {
			t.Errorf("after two probes: %+v", s)
		}
		if err := store.FinishProbe(ctx, d, pausing.ProbeResult{At: at.Add(4 * time.Second), Error: "timeout"}); err != nil {
			t.Fatal(err)
		}

		// An operator takes the pause over: same pause, probes kept.
		h, err := store.Pause(ctx, d, pausing.PauseInput{At: t0, ResumeBy: t0.Add(time.Hour), Reason: "maintenance", By: pausing.ByOperator, Version: 1, Takeover: true})
		if err != nil {
			t.Fatal(err)
		}
		if h.Version != 2 || h.By != pausing.ByOperator || h.Reason != "maintenance" || h.Probes != 2 || !h.PausedAt.Equal(t0) {
			t.Errorf("after a takeover: %+v", h)
		}

		end := t0.Add(30 * time.Minute)
		kept := []pausing.Interval{{From: t0.Add(-2 * time.Hour), To: t0.Add(-time.Hour)}, {From: t0, To: end}}
		if _, err := store.Resume(ctx, d, pausing.ResumeInput{At: end, Reason: "by hand", By: pausing.ByOperator, Version: 1, Pauses: kept}); !errors.Is(err, pausing.ErrChanged) {
			t.Errorf("Resume from a stale version: %v, want ErrChanged", err)
		}
		r, err := store.Resume(ctx, d, pausing.ResumeInput{At: end, Reason: "by hand", By: pausing.ByOperator, Version: 2, Pauses: kept})
		if err != nil {
			t.Fatal(err)
		}
		want = pausing.State{Destination: d, Mode: pausing.Active, Version: 3, PausedAt: t0, Reason: "maintenance", By: pausing.ByOperator,
			Pauses: kept, Probes: 2, LastProbeAt: at.Add(4 * time.Second), LastProbeError: "timeout",
			ResumedAt: end, ResumeReason: "by hand", ResumedBy: pausing.ByOperator, UpdatedAt: end}
		if diff := cmp.Diff(want, r); diff != "" {
			t.Errorf("after Resume (-want +got):\n%s", diff)
		}
		if _, err := store.StartProbe(ctx, d, end, end.Add(time.Minute)); !errors.Is(err, pausing.ErrChanged) {
			t.Errorf("StartProbe on an active lane: %v, want ErrChanged", err)
		}
		if err := store.FinishProbe(ctx, d, pausing.ProbeResult{At: end, OK: true, Status: 200}); !errors.Is(err, pausing.ErrChanged) {
			t.Errorf("FinishProbe on an active lane: %v, want ErrChanged", err)
		}
		if _, err := store.Resume(ctx, d, pausing.ResumeInput{At: end, Version: 3}); !errors.Is(err, pausing.ErrChanged) {
			t.Errorf("Resume of an active lane: %v, want ErrChanged", err)
		}
	})

	t.Run("a resume starts the counters afresh", func(t *testing.T) {
		d := newDest()
		var tl pausing.Tally
		for range 4 {
			tl.Add(false)
		}
		s, err := store.Count(ctx, d, tl, t0, width)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := store.Pause(ctx, d, pausing.PauseInput{At: t0, ResumeBy: t0.Add(time.Hour), By: pausing.ByDeliverer}); err != nil {
			t.Fatal(err)
		}
		cleared := []int64{s.Windows[0].Index}
		r, err := store.Resume(ctx, d, pausing.ResumeInput{At: t0.Add(time.Minute), By: pausing.ByDeliverer, Version: 1, Clear: cleared})
		if err != nil {
			t.Fatal(err)
		}
		if r.Failures != 0 || len(r.Windows) != 0 || len(r.Pauses) != 0 || !r.ResumeBy.IsZero() {
			t.Errorf("after Resume: failures %d, windows %v, pauses %v, resume by %s; want none", r.Failures, r.Windows, r.Pauses, r.ResumeBy)
		}
	})
}
