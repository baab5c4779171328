package dedupetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// runCheck runs what ModeCheck promises: a claim reads and writes nothing;
// the one write after the attempt keeps the record's states as ModeLease
// does (FAILED with its next attempt, DEAD claimed again, DELIVERED and
// GONE final for copies, replays once each); copies that arrive one after
// another are refused; copies handled at the same moment may each be
// attempted, but the first to end the event keeps the record: a DELIVERED
// or GONE record is never overwritten.
func runCheck(t *testing.T, s Store, o Options) {
	ctx := context.Background()
	start := time.Now().UTC().Truncate(time.Second)
	var n atomic.Int64
	key := func() string {
		return dedupe.Key(o.Destination, fmt.Sprintf("chk_%d_%d", start.Unix(), n.Add(1)))
	}
	claimInput := func(pk string, at time.Duration, replay string) dedupe.ClaimInput {
		now := start.Add(at)
		return dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: now, LeaseUntil: now.Add(lease),
			ExpiresAt: now.Add(30 * 24 * time.Hour), Replay: replay, ClaimedBy: "req-" + replay}
	}
	claim := func(t *testing.T, pk string, at time.Duration, replay string) dedupe.Lease {
		t.Helper()
		l, err := s.Claim(ctx, claimInput(pk, at, replay))
		if err != nil {
			t.Fatalf("claim at +%s (replay %q): %v", at, replay, err)
		}
		return l
	}
	outcome := func(l dedupe.Lease, status dedupe.Status, code int) dedupe.Outcome {
		out := dedupe.Outcome{Status: status, HTTPStatus: code, At: l.At.Add(time.Second), Latency: 250 * time.Millisecond}
		if status != dedupe.StatusDelivered {
			out.Error = fmt.Sprintf("HTTP %d", code)
		}
		if status == dedupe.StatusFailed {
			out.NextAttemptAt = l.At.Add(time.Minute)
		}
		return out
	}
	finish := func(t *testing.T, l dedupe.Lease, status dedupe.Status, code int) {
		t.Helper()
		if err := s.Finish(ctx, l, outcome(l, status, code)); err != nil {
			t.Fatalf("finish %s: %v", status, err)
		}
	}
	settled := func(t *testing.T, l dedupe.Lease, status dedupe.Status, code int) {
		t.Helper()
		if err := s.Finish(ctx, l, outcome(l, status, code)); !errors.Is(err, dedupe.ErrSettled) {
			t.Fatalf("finish %s after another attempt ended the event = %v, want %v", status, err, dedupe.ErrSettled)
		}
	}
	refused := func(t *testing.T, pk string, at time.Duration, replay string, want error) {
		t.Helper()
		_, err := s.Claim(ctx, claimInput(pk, at, replay))
		if !errors.Is(err, want) {
			t.Fatalf("claim at +%s (replay %q) = %v, want a refusal matching %v", at, replay, err, want)
		}
	}
	get := func(t *testing.T, pk string) dedupe.Record {
		t.Helper()
		r, ok, err := s.Get(ctx, pk)
		if err != nil || !ok {
			t.Fatalf("get %s: %v, found %v", pk, err, ok)
		}
		return r
	}
	wantStatus := func(t *testing.T, pk string, status dedupe.Status, attempts int) dedupe.Record {
		t.Helper()
		r := get(t, pk)
		if r.Status != status || r.Attempts != attempts {
			t.Errorf("record %s after %d attempts, want %s after %d", r.Status, r.Attempts, status, attempts)
		}
		if r.LeaseToken != "" || !r.LeaseUntil.IsZero() {
			t.Errorf("record holds a lease (%q until %s); ModeCheck takes none", r.LeaseToken, r.LeaseUntil)
		}
		return r
	}

	t.Run("a claim writes nothing", func(t *testing.T) {
		pk := key()
		l := claim(t, pk, 0, "")
		if l.Token != "" || l.Attempts != 1 || l.PK != pk {
			t.Errorf("lease = %+v, want no token, attempt 1", l)
		}
		if _, ok, err := s.Get(ctx, pk); ok || err != nil {
			t.Errorf("after a claim the record exists (%v, %v); want it written only after the attempt", ok, err)
		}
		// Nothing was written, so a release writes nothing either.
		if err := s.Release(ctx, l); err != nil {
			t.Errorf("release of a check lease: %v", err)
		}
		if _, ok, err := s.Get(ctx, pk); ok || err != nil {
			t.Errorf("after a release the record exists (%v, %v); want nothing written", ok, err)
		}
	})

	t.Run("the attempt is written once, and its copies are duplicates", func(t *testing.T) {
		pk := key()
		finish(t, claim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		want := dedupe.Record{PK: pk, Status: dedupe.StatusDelivered, Attempts: 1, LastStatus: 204,
			FirstAttemptAt: start, TimeBucket: o.bucket(pk, start), DeliveredAt: start.Add(time.Second), Source: "stripe", Type: "invoice.paid",
			ExpiresAt: start.Add(30 * 24 * time.Hour),
			History:   []dedupe.Attempt{{At: start, Outcome: dedupe.StatusDelivered, HTTPStatus: 204, Latency: 250 * time.Millisecond, ClaimedBy: "req-"}},
		}
		if diff := cmp.Diff(want, get(t, pk)); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
		refused(t, pk, 2*time.Second, "", dedupe.ErrDuplicate)
		refused(t, pk, 48*time.Hour, "", dedupe.ErrDuplicate)
		wantStatus(t, pk, dedupe.StatusDelivered, 1)
	})

	t.Run("FAILED records the attempt and its next; the next copy is attempted", func(t *testing.T) {
		pk := key()
		finish(t, claim(t, pk, 0, ""), dedupe.StatusFailed, 503)
		r := wantStatus(t, pk, dedupe.StatusFailed, 1)
		if r.LastStatus != 503 || r.LastError != "HTTP 503" || !r.NextAttemptAt.Equal(start.Add(time.Minute)) {
			t.Errorf("failed record = %+v, want 503, its error and the next attempt at +1m", r)
		}
		second := claim(t, pk, time.Minute, "")
		if second.Attempts != 2 || len(second.History) != 1 {
			t.Errorf("claim after a failure = %+v, want attempt 2 carrying the first attempt", second)
		}
		finish(t, second, dedupe.StatusDelivered, 200)
		r = wantStatus(t, pk, dedupe.StatusDelivered, 2)
		if !r.FirstAttemptAt.Equal(start) || !r.NextAttemptAt.IsZero() || r.LastError != "" || len(r.History) != 2 {
			t.Errorf("delivered record = %+v, want the first attempt's time, no next attempt or error, two attempts in the history", r)
		}
	})

	t.Run("DEAD is claimed again (a DLQ redrive)", func(t *testing.T) {
		pk := key()
		finish(t, claim(t, pk, 0, ""), dedupe.StatusDead, 500)
		wantStatus(t, pk, dedupe.StatusDead, 1)
		finish(t, claim(t, pk, 24*time.Hour, ""), dedupe.StatusDelivered, 204)
		wantStatus(t, pk, dedupe.StatusDelivered, 2)
	})

	t.Run("GONE (a 410) is final for copies; a replay takes it again", func(t *testing.T) {
		pk := key()
		finish(t, claim(t, pk, 0, ""), dedupe.StatusGone, 410)
		refused(t, pk, time.Hour, "", dedupe.ErrGone)
		refused(t, pk, 48*time.Hour, "", dedupe.ErrGone)
		if r := wantStatus(t, pk, dedupe.StatusGone, 1); r.LastStatus != 410 {
			t.Errorf("last status %d, want 410", r.LastStatus)
		}
		finish(t, claim(t, pk, 49*time.Hour, "rpl_1"), dedupe.StatusDelivered, 204)
		wantStatus(t, pk, dedupe.StatusDelivered, 2)
		refused(t, pk, 50*time.Hour, "rpl_1", dedupe.ErrDuplicate)
	})

	t.Run("a replay re-delivers once; its copies are duplicates", func(t *testing.T) {
		pk := key()
		finish(t, claim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		finish(t, claim(t, pk, time.Hour, "rpl_1"), dedupe.StatusDelivered, 204)
		refused(t, pk, 2*time.Hour, "rpl_1", dedupe.ErrDuplicate)
		refused(t, pk, 2*time.Hour, "", dedupe.ErrDuplicate)
		if r := wantStatus(t, pk, dedupe.StatusDelivered, 2); !cmp.Equal(r.Replays, []string{"rpl_1"}) {
			t.Errorf("replays %v, want rpl_1", r.Replays)
		}
	})

	t.Run("copies at the same moment are both attempted; the first outcome that ends the event stays", func(t *testing.T) {
		for _, c := range []struct {
			name          string
			first, second dedupe.Status
			want          dedupe.Status
			secondWritten bool
		}{
			{"delivered, then delivered", dedupe.StatusDelivered, dedupe.StatusDelivered, dedupe.StatusDelivered, false},
			{"delivered, then failed", dedupe.StatusDelivered, dedupe.StatusFailed, dedupe.StatusDelivered, false},
			{"gone, then delivered", dedupe.StatusGone, dedupe.StatusDelivered, dedupe.StatusGone, false},
			{"failed, then delivered", dedupe.StatusFailed, dedupe.StatusDelivered, dedupe.StatusDelivered, true},
		} {
			t.Run(c.name, func(t *testing.T) {
				pk := key()
				a, b := claim(t, pk, 0, ""), claim(t, pk, 0, "")
				code := map[dedupe.Status]int{dedupe.StatusDelivered: 204, dedupe.StatusFailed: 503, dedupe.StatusGone: 410}
				finish(t, a, c.first, code[c.first])
				attempts := 1
				if c.secondWritten {
					finish(t, b, c.second, code[c.second])
					attempts = 2
				} else {
					settled(t, b, c.second, code[c.second])
				}
				if r := wantStatus(t, pk, c.want, attempts); r.LastStatus != code[c.want] {
					t.Errorf("last status %d, want %d", r.LastStatus, code[c.want])
				}
			})
		}
	})

	if o.Concurrent {
		t.Run("of simultaneous finishes one ends the event", func(t *testing.T) {
			pk := key()
			var leases []dedupe.Lease
			for range 20 {
				leases = append(leases, claim(t, pk, 0, ""))
			}
			var wg sync.WaitGroup
			var won, lost atomic.Int64
			for _, l := range leases {
				wg.Go(func() {
					switch err := s.Finish(ctx, l, outcome(l, dedupe.StatusDelivered, 204)); {
					case err == nil:
						won.Add(1)
					case errors.Is(err, dedupe.ErrSettled):
						lost.Add(1)
					default:
						t.Errorf("finish: %v", err)
					}
				})
			}
			wg.Wait()
			if won.Load() != 1 || lost.Load() != 19 {
				t.Errorf("%d finishes wrote and %d were settled, want 1 and 19", won.Load(), lost.Load())
			}
			wantStatus(t, pk, dedupe.StatusDelivered, 1)
		})
	}
}
