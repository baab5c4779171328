// Package dedupetest checks that a delivery-record store keeps the protocol
// of shared/dedupe in the mode it runs: the Memory twin in unit tests and
// the DynamoDB store against an emulator in the integration tests run the
// same scenarios, those of ModeLease (Run) or of ModeCheck (Run with
// Options.Mode).
package dedupetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// Store is the protocol under test.
type Store interface {
	Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error)
	Finish(ctx context.Context, lease dedupe.Lease, out dedupe.Outcome) error
	Release(ctx context.Context, lease dedupe.Lease) error
	Get(ctx context.Context, pk string) (dedupe.Record, bool, error)
}

// Options tune Run.
type Options struct {
	// Destination names the keys' destination; a unique one lets several
	// runs share a table.
	Destination string
	// Concurrent also checks that of many simultaneous claims of one new
	// record exactly one wins, the others refused by its lease. That is
	// DynamoDB's per-item atomicity, which moto's conditional UpdateItem
	// lacks: leave it off against moto.
	Concurrent bool
	// Mode is the store's mode (dedupe.ModeLease when empty): ModeCheck runs
	// the scenarios of what that mode promises instead.
	Mode dedupe.Mode
	// Unindexed says the store writes no time index key (an Unindexed
	// view): every record's TimeBucket stays "". Otherwise a record's
	// first write files it under its first attempt's bucket.
	Unindexed bool
}

// bucket is the TimeBucket a record first attempted at first has in a
// store run with o.
func (o Options) bucket(pk string, first time.Time) string {
	if o.Unindexed {
		return ""
	}
	return dedupe.TimeBucket(pk, first)
}

// lease is how long a claim holds the record in the scenarios.
const lease = 30 * time.Second

// Run runs every scenario against s.
func Run(t *testing.T, s Store, o Options) {
	if o.Destination == "" {
		o.Destination = "dedupetest"
	}
	if o.Mode == dedupe.ModeCheck {
		runCheck(t, s, o)
		return
	}
	ctx := context.Background()
	// Whole seconds: the stores keep times to the millisecond and the
	// expiry to the second.
	start := time.Now().UTC().Truncate(time.Second)
	var n int
	var mu sync.Mutex
	key := func() string {
		mu.Lock()
		defer mu.Unlock()
		n++
		return dedupe.Key(o.Destination, fmt.Sprintf("evt_%d_%d", start.Unix(), n))
	}
	claimInput := func(pk string, now time.Time, replay string) dedupe.ClaimInput {
		return dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: now, LeaseUntil: now.Add(lease),
			ExpiresAt: now.Add(30 * 24 * time.Hour), Replay: replay, ClaimedBy: "req-" + replay}
	}
	claim := func(t *testing.T, pk string, at time.Duration, replay string) (dedupe.Lease, error) {
		t.Helper()
		return s.Claim(ctx, claimInput(pk, start.Add(at), replay))
	}
	mustClaim := func(t *testing.T, pk string, at time.Duration, replay string) dedupe.Lease {
		t.Helper()
		l, err := claim(t, pk, at, replay)
		if err != nil {
			t.Fatalf("claim at +%s (replay %q): %v", at, replay, err)
		}
		return l
	}
	finish := func(t *testing.T, l dedupe.Lease, status dedupe.Status, code int) error {
		t.Helper()
		out := dedupe.Outcome{Status: status, HTTPStatus: code, At: l.At.Add(time.Second), Latency: 250 * time.Millisecond}
		if status != dedupe.StatusDelivered {
			out.Error = fmt.Sprintf("HTTP %d", code)
		}
		if status == dedupe.StatusFailed {
			out.NextAttemptAt = l.At.Add(time.Minute)
		}
		return s.Finish(ctx, l, out)
	}
	mustFinish := func(t *testing.T, l dedupe.Lease, status dedupe.Status, code int) {
		t.Helper()
		if err := finish(t, l, status, code); err != nil {
			t.Fatalf("finish %s: %v", status, err)
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
	// refused checks a refusal: the sentinel it matches and the record's
	// state it reports.
	refused := func(t *testing.T, err, want error, status dedupe.Status) *dedupe.RefusedError {
		t.Helper()
		var r *dedupe.RefusedError
		if !errors.Is(err, want) || !errors.As(err, &r) {
			t.Fatalf("claim = %v, want a refusal matching %v", err, want)
		}
		for _, other := range []error{dedupe.ErrDuplicate, dedupe.ErrGone, dedupe.ErrInFlight} {
			if other != want && errors.Is(err, other) {
				t.Errorf("the refusal %v also matches %v", err, other)
			}
		}
		if r.Status != status {
			t.Errorf("the refusal reports status %s, want %s", r.Status, status)
		}
		return r
	}
	wantStatus := func(t *testing.T, pk string, status dedupe.Status, attempts int) dedupe.Record {
		t.Helper()
		r := get(t, pk)
		if r.Status != status || r.Attempts != attempts {
			t.Errorf("record %s after %d claims, want %s after %d", r.Status, r.Attempts, status, attempts)
		}
		return r
	}

	t.Run("a missing record reads as absent", func(t *testing.T) {
		if _, ok, err := s.Get(ctx, key()); ok || err != nil {
			t.Errorf("get of a new key: found %v, %v", ok, err)
		}
	})

	t.Run("a new event is claimed", func(t *testing.T) {
		pk := key()
		l := mustClaim(t, pk, 0, "")
		if l.PK != pk || l.Token == "" || l.Attempts != 1 || !l.Until.Equal(start.Add(lease)) || len(l.History) != 0 {
			t.Errorf("lease = %+v, want the key, a token, attempt 1, until +%s, no history", l, lease)
		}
		want := dedupe.Record{PK: pk, Status: dedupe.StatusInProgress, LeaseToken: l.Token, LeaseUntil: start.Add(lease), Attempts: 1,
			FirstAttemptAt: start, TimeBucket: o.bucket(pk, start), Source: "stripe", Type: "invoice.paid", ExpiresAt: start.Add(30 * 24 * time.Hour)}
		if diff := cmp.Diff(want, get(t, pk)); diff != "" {
			t.Errorf("record (-want +got):\n%s", diff)
		}
	})

	t.Run("a delivered event's copies are duplicates", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		_, err := claim(t, pk, time.Hour, "")
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusDelivered)
		_, err = claim(t, pk, 48*time.Hour, "") // a copy redriven much later
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusDelivered)
		wantStatus(t, pk, dedupe.StatusDelivered, 1)
	})

	t.Run("a live lease refuses, saying until when", func(t *testing.T) {
		pk := key()
		first := mustClaim(t, pk, 0, "")
		_, err := claim(t, pk, 10*time.Second, "")
		if r := refused(t, err, dedupe.ErrInFlight, dedupe.StatusInProgress); !r.LeaseUntil.Equal(first.Until) {
			t.Errorf("the refusal reports the lease until %s, want %s", r.LeaseUntil, first.Until)
		}
		// The lease's last millisecond still holds it.
		_, err = claim(t, pk, lease, "")
		refused(t, err, dedupe.ErrInFlight, dedupe.StatusInProgress)
		if r := wantStatus(t, pk, dedupe.StatusInProgress, 1); r.LeaseToken != first.Token {
			t.Errorf("the refused claims changed the lease token")
		}
	})

	t.Run("an expired lease is claimed again (a crash after the claim)", func(t *testing.T) {
		pk := key()
		first := mustClaim(t, pk, 0, "")
		second := mustClaim(t, pk, lease+time.Millisecond, "")
		if second.Attempts != 2 || second.Token == first.Token {
			t.Errorf("second lease = %+v, want attempt 2 with a new token", second)
		}
		if r := wantStatus(t, pk, dedupe.StatusInProgress, 2); !r.FirstAttemptAt.Equal(start) {
			t.Errorf("first attempt at %s, want the first claim's %s", r.FirstAttemptAt, start)
		}
	})

	t.Run("only the holder of the lease finishes", func(t *testing.T) {
		pk := key()
		stale := mustClaim(t, pk, 0, "")
		current := mustClaim(t, pk, lease+time.Second, "")
		if err := finish(t, stale, dedupe.StatusDelivered, 200); !errors.Is(err, dedupe.ErrLeaseLost) {
			t.Fatalf("finish with an expired lease = %v, want %v", err, dedupe.ErrLeaseLost)
		}
		if r := wantStatus(t, pk, dedupe.StatusInProgress, 2); r.LeaseToken != current.Token || len(r.History) != 0 {
			t.Errorf("the stale finish changed the record: %+v", r)
		}
		mustFinish(t, current, dedupe.StatusFailed, 503)
		if err := finish(t, current, dedupe.StatusDelivered, 200); !errors.Is(err, dedupe.ErrLeaseLost) {
			t.Errorf("a second finish with the same lease = %v, want %v", err, dedupe.ErrLeaseLost)
		}
		if err := finish(t, dedupe.Lease{PK: key(), Token: current.Token}, dedupe.StatusDelivered, 200); !errors.Is(err, dedupe.ErrLeaseLost) {
			t.Errorf("finish of a record never claimed = %v, want %v", err, dedupe.ErrLeaseLost)
		}
		wantStatus(t, pk, dedupe.StatusFailed, 2)
	})

	t.Run("a finish refuses a status that is not an outcome", func(t *testing.T) {
		pk := key()
		l := mustClaim(t, pk, 0, "")
		if err := finish(t, l, dedupe.StatusInProgress, 0); err == nil {
			t.Error("finish with IN_PROGRESS succeeded")
		}
		wantStatus(t, pk, dedupe.StatusInProgress, 1)
	})

	t.Run("FAILED releases the lease and records the attempt", func(t *testing.T) {
		pk := key()
		first := mustClaim(t, pk, 0, "")
		mustFinish(t, first, dedupe.StatusFailed, 503)
		r := wantStatus(t, pk, dedupe.StatusFailed, 1)
		if r.LeaseToken != "" || !r.LeaseUntil.IsZero() || r.LastStatus != 503 || r.LastError != "HTTP 503" || !r.NextAttemptAt.Equal(start.Add(time.Minute)) {
			t.Errorf("failed record = %+v, want no lease, 503, its error and the next attempt at +1m", r)
		}
		// The next receive of the message claims it at once.
		second := mustClaim(t, pk, 2*time.Second, "")
		if second.Attempts != 2 || len(second.History) != 1 {
			t.Errorf("claim after a failure = %+v, want attempt 2 carrying the first attempt", second)
		}
		mustFinish(t, second, dedupe.StatusDelivered, 204)
		want := dedupe.Record{PK: pk, Status: dedupe.StatusDelivered, Attempts: 2, LastStatus: 204,
			FirstAttemptAt: start, TimeBucket: o.bucket(pk, start), DeliveredAt: start.Add(3 * time.Second), Source: "stripe", Type: "invoice.paid",
			ExpiresAt: start.Add(2*time.Second + 30*24*time.Hour),
			History: []dedupe.Attempt{
				{At: start, Outcome: dedupe.StatusFailed, HTTPStatus: 503, Latency: 250 * time.Millisecond, Error: "HTTP 503", ClaimedBy: "req-"},
				{At: start.Add(2 * time.Second), Outcome: dedupe.StatusDelivered, HTTPStatus: 204, Latency: 250 * time.Millisecond, ClaimedBy: "req-"},
			},
		}
		if diff := cmp.Diff(want, get(t, pk)); diff != "" {
			t.Errorf("delivered record (-want +got):\n%s", diff)
		}
	})

	t.Run("a release uncounts the claim and restores what it found", func(t *testing.T) {
		// A new record: nothing attempted, claimable at once, no first attempt.
		pk := key()
		l := mustClaim(t, pk, 0, "")
		if err := s.Release(ctx, l); err != nil {
			t.Fatalf("release: %v", err)
		}
		want := dedupe.Record{PK: pk, Status: dedupe.StatusInProgress, Source: "stripe", Type: "invoice.paid", ExpiresAt: start.Add(30 * 24 * time.Hour)}
		if diff := cmp.Diff(want, get(t, pk)); diff != "" {
			t.Errorf("released new record (-want +got):\n%s", diff)
		}
		if again := mustClaim(t, pk, time.Second, ""); again.Attempts != 1 {
			t.Errorf("the claim after a release is attempt %d, want 1", again.Attempts)
		}
		if r := get(t, pk); !r.FirstAttemptAt.Equal(start.Add(time.Second)) || r.TimeBucket != o.bucket(pk, start.Add(time.Second)) {
			t.Errorf("first attempt at %s, bucket %q, want the claim after the release's", r.FirstAttemptAt, r.TimeBucket)
		}

		// A failed record: FAILED again, its attempt and history kept.
		pk = key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusFailed, 503)
		l = mustClaim(t, pk, 2*time.Second, "")
		if err := s.Release(ctx, l); err != nil {
			t.Fatalf("release: %v", err)
		}
		r := wantStatus(t, pk, dedupe.StatusFailed, 1)
		if r.LeaseToken != "" || !r.LeaseUntil.IsZero() || len(r.History) != 1 || !r.FirstAttemptAt.Equal(start) || !r.NextAttemptAt.Equal(start.Add(time.Minute)) {
			t.Errorf("released failed record = %+v, want no lease, one attempt in the history, the first attempt and next attempt kept", r)
		}
		if err := s.Release(ctx, l); !errors.Is(err, dedupe.ErrLeaseLost) {
			t.Errorf("a second release = %v, want %v", err, dedupe.ErrLeaseLost)
		}
		wantStatus(t, pk, dedupe.StatusFailed, 1)

		// A replay of a delivered event: DELIVERED again, its copies duplicates.
		pk = key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		l = mustClaim(t, pk, time.Hour, "replay-1")
		if err := s.Release(ctx, l); err != nil {
			t.Fatalf("release: %v", err)
		}
		wantStatus(t, pk, dedupe.StatusDelivered, 1)
		_, err := claim(t, pk, 2*time.Hour, "")
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusDelivered)

		// A lease another claim took after it expired is not given back.
		pk = key()
		stale := mustClaim(t, pk, 0, "")
		current := mustClaim(t, pk, lease+time.Second, "")
		if err := s.Release(ctx, stale); !errors.Is(err, dedupe.ErrLeaseLost) {
			t.Errorf("release of an expired lease another claim took = %v, want %v", err, dedupe.ErrLeaseLost)
		}
		if r := wantStatus(t, pk, dedupe.StatusInProgress, 2); r.LeaseToken != current.Token {
			t.Errorf("the stale release changed the lease")
		}
	})

	t.Run("DEAD is claimed again (a DLQ redrive)", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDead, 500)
		wantStatus(t, pk, dedupe.StatusDead, 1)
		mustClaim(t, pk, 24*time.Hour, "")
		wantStatus(t, pk, dedupe.StatusInProgress, 2)
	})

	t.Run("GONE (a 410) is final for copies", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusGone, 410)
		for _, at := range []time.Duration{time.Hour, 48 * time.Hour} {
			_, err := claim(t, pk, at, "")
			refused(t, err, dedupe.ErrGone, dedupe.StatusGone)
		}
		if r := wantStatus(t, pk, dedupe.StatusGone, 1); r.LastStatus != 410 {
			t.Errorf("last status %d, want 410", r.LastStatus)
		}
		// An operator's replay takes it again.
		mustFinish(t, mustClaim(t, pk, 49*time.Hour, "rpl_1"), dedupe.StatusDelivered, 204)
		wantStatus(t, pk, dedupe.StatusDelivered, 2)
	})

	t.Run("a replay re-delivers once; its copies are duplicates", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		replay := mustClaim(t, pk, time.Hour, "rpl_1")
		if replay.Attempts != 2 || replay.Replay != "rpl_1" {
			t.Errorf("replay lease = %+v, want attempt 2 of replay rpl_1", replay)
		}
		mustFinish(t, replay, dedupe.StatusDelivered, 204)
		_, err := claim(t, pk, 2*time.Hour, "rpl_1")
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusDelivered)
		_, err = claim(t, pk, 2*time.Hour, "")
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusDelivered)
		mustFinish(t, mustClaim(t, pk, 3*time.Hour, "rpl_2"), dedupe.StatusDelivered, 204)
		if r := wantStatus(t, pk, dedupe.StatusDelivered, 3); !cmp.Equal(r.Replays, []string{"rpl_1", "rpl_2"}) || r.History[2].Replay != "rpl_2" {
			t.Errorf("replays %v, history %+v; want both replays remembered", r.Replays, r.History)
		}
	})

	t.Run("a replay that ended GONE is remembered", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		mustFinish(t, mustClaim(t, pk, time.Hour, "rpl_1"), dedupe.StatusGone, 410)
		_, err := claim(t, pk, 2*time.Hour, "rpl_1")
		refused(t, err, dedupe.ErrDuplicate, dedupe.StatusGone)
		_, err = claim(t, pk, 2*time.Hour, "")
		refused(t, err, dedupe.ErrGone, dedupe.StatusGone)
	})

	t.Run("a replay respects a live lease", func(t *testing.T) {
		pk := key()
		first := mustClaim(t, pk, 0, "")
		_, err := claim(t, pk, 10*time.Second, "rpl_1")
		if r := refused(t, err, dedupe.ErrInFlight, dedupe.StatusInProgress); !r.LeaseUntil.Equal(first.Until) {
			t.Errorf("the refusal reports the lease until %s, want %s", r.LeaseUntil, first.Until)
		}
	})

	t.Run("a replay that failed is tried again by its own copies", func(t *testing.T) {
		pk := key()
		mustFinish(t, mustClaim(t, pk, 0, ""), dedupe.StatusDelivered, 204)
		mustFinish(t, mustClaim(t, pk, time.Hour, "rpl_1"), dedupe.StatusFailed, 503)
		mustFinish(t, mustClaim(t, pk, 2*time.Hour, "rpl_1"), dedupe.StatusDelivered, 204)
		if r := wantStatus(t, pk, dedupe.StatusDelivered, 3); !cmp.Equal(r.Replays, []string{"rpl_1"}) {
			t.Errorf("replays %v, want rpl_1 once, after it was delivered", r.Replays)
		}
	})

	if o.Concurrent {
		t.Run("of simultaneous claims of a new record one wins", func(t *testing.T) {
			pk := key()
			var wg sync.WaitGroup
			var wins, inFlight sync.Map
			for i := range 20 {
				wg.Go(func() {
					l, err := s.Claim(ctx, claimInput(pk, start, ""))
					switch {
					case err == nil:
						wins.Store(i, l)
					case errors.Is(err, dedupe.ErrInFlight):
						inFlight.Store(i, true)
					default:
						t.Errorf("claim %d: %v, want a lease or %v", i, err, dedupe.ErrInFlight)
					}
				})
			}
			wg.Wait()
			var won, refusedN int
			wins.Range(func(any, any) bool { won++; return true })
			inFlight.Range(func(any, any) bool { refusedN++; return true })
			if won != 1 || refusedN != 19 {
				t.Errorf("%d claims won and %d were refused as in flight, want 1 and 19", won, refusedN)
			}
			wantStatus(t, pk, dedupe.StatusInProgress, 1)
		})
	}
}

// IndexTurnedOn checks a record first attempted while the time index was
// off (through unindexed, a view of the same records without it) and
// attempted again once it is on (through indexed): the later attempt files
// it under its first attempt's hour, where a window over that hour finds
// it, not under its own. mode is the stores' mode.
func IndexTurnedOn(t *testing.T, indexed, unindexed Store, mode dedupe.Mode, destination string) {
	ctx := context.Background()
	first := time.Now().UTC().Truncate(time.Hour).Add(-5*time.Hour + 10*time.Minute)
	later := first.Add(2 * time.Hour)
	pk := dedupe.Key(destination, fmt.Sprintf("evt_turned_on_%d", first.UnixNano()))
	in := func(now time.Time) dedupe.ClaimInput {
		return dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: now, LeaseUntil: now.Add(lease), ExpiresAt: now.Add(30 * 24 * time.Hour)}
	}
	l, err := unindexed.Claim(ctx, in(first))
	if err != nil {
		t.Fatalf("claim while the index is off: %v", err)
	}
	if err := unindexed.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 500, Error: "HTTP 500", At: first.Add(time.Second), NextAttemptAt: later}); err != nil {
		t.Fatalf("finish while the index is off: %v", err)
	}
	if r, _, err := unindexed.Get(ctx, pk); err != nil || r.TimeBucket != "" {
		t.Fatalf("after an attempt while the index is off: bucket %q (%v), want none", r.TimeBucket, err)
	}
	l, err = indexed.Claim(ctx, in(later))
	if err != nil {
		t.Fatalf("claim once the index is on: %v", err)
	}
	if err := indexed.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 204, At: later.Add(time.Second)}); err != nil {
		t.Fatalf("finish once the index is on: %v", err)
	}
	r, _, err := indexed.Get(ctx, pk)
	if err != nil {
		t.Fatal(err)
	}
	if want := dedupe.TimeBucket(pk, first); r.TimeBucket != want || !r.FirstAttemptAt.Equal(first) {
		t.Errorf("%s (%s): first attempt %s in bucket %q; want %s in %q, its first attempt's hour", pk, mode, r.FirstAttemptAt, r.TimeBucket, first, want)
	}
}
