// Package replayguardtest checks that a replay store keeps the protocol of
// shared/replayguard: the Memory twin in unit tests and the DynamoDB store
// against an emulator in the integration tests run the same scenarios.
package replayguardtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/replayguard"
)

// Store is the protocol under test.
type Store interface {
	Claim(ctx context.Context, in replayguard.ClaimInput) (replayguard.Lease, error)
	Confirm(ctx context.Context, l replayguard.Lease, at time.Time) error
	Release(ctx context.Context, l replayguard.Lease) error
	Get(ctx context.Context, key string) (replayguard.Record, bool, error)
}

// Options tune Run.
type Options struct {
	// Source names the keys' source; a unique one lets several runs share
	// a table.
	Source string
	// Concurrent also checks that of many simultaneous claims of one new
	// key exactly one wins (DynamoDB's per-item atomicity, which moto
	// lacks unless the store is serialized per key).
	Concurrent bool
}

// Run runs every scenario against s.
func Run(t *testing.T, s Store, o Options) {
	if o.Source == "" {
		o.Source = "replaytest"
	}
	ctx := context.Background()
	start := time.Now().Truncate(time.Millisecond)
	var n int
	key := func() string {
		n++
		return replayguard.Key(o.Source, fmt.Appendf(nil, "%s-%d", t.Name(), n))
	}
	original := replayguard.Event{ID: "evt_original", Type: "push", ContentType: "application/json"}
	copyOf := replayguard.Event{ID: "evt_copy", Type: "release", ContentType: "text/plain"}
	claim := func(t *testing.T, k string, ev replayguard.Event, now time.Time) (replayguard.Lease, error) {
		t.Helper()
		return s.Claim(ctx, replayguard.ClaimInput{Key: k, Source: o.Source, Event: ev, Now: now,
			LeaseUntil: now.Add(10 * time.Second), ExpiresAt: now.Add(time.Hour)})
	}
	mustClaim := func(t *testing.T, k string, ev replayguard.Event, now time.Time) replayguard.Lease {
		t.Helper()
		l, err := claim(t, k, ev, now)
		if err != nil {
			t.Fatalf("claim: %v", err)
		}
		return l
	}
	refusedWith := func(t *testing.T, err, want error, ev replayguard.Event) {
		t.Helper()
		var seen *replayguard.SeenError
		if !errors.Is(err, want) || !errors.As(err, &seen) {
			t.Fatalf("claim = %v, want %v", err, want)
		}
		if seen.Event != ev {
			t.Errorf("refusal carries %+v, want the original's %+v", seen.Event, ev)
		}
	}
	get := func(t *testing.T, k string) replayguard.Record {
		t.Helper()
		r, ok, err := s.Get(ctx, k)
		if err != nil || !ok {
			t.Fatalf("get %s: %v, found %v", k, err, ok)
		}
		return r
	}

	t.Run("first claim records the request pending", func(t *testing.T) {
		k := key()
		l := mustClaim(t, k, original, start)
		if l.Event != original || l.Takeover || l.Token == "" || l.Key != k {
			t.Errorf("lease = %+v, want the request's own event, no takeover", l)
		}
		r := get(t, k)
		if r.Status != replayguard.StatusPending || r.Event != original || r.Source != o.Source ||
			!r.LeaseUntil.Equal(start.Add(10*time.Second)) || r.ExpiresAt.Unix() != start.Add(time.Hour).Unix() || !r.FirstSeenAt.Equal(start) {
			t.Errorf("record = %+v", r)
		}
	})
	t.Run("a copy while the first publishes is in flight", func(t *testing.T) {
		k := key()
		mustClaim(t, k, original, start)
		_, err := claim(t, k, copyOf, start.Add(time.Second))
		refusedWith(t, err, replayguard.ErrInFlight, original)
	})
	t.Run("a copy after the publish is a replay of the original", func(t *testing.T) {
		k := key()
		l := mustClaim(t, k, original, start)
		if err := s.Confirm(ctx, l, start.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		for _, at := range []time.Duration{2 * time.Second, time.Hour - time.Second} {
			_, err := claim(t, k, copyOf, start.Add(at))
			refusedWith(t, err, replayguard.ErrReplay, original)
		}
		if r := get(t, k); r.Status != replayguard.StatusPublished || r.LeaseToken != "" || !r.PublishedAt.Equal(start.Add(time.Second)) || r.Event != original {
			t.Errorf("record = %+v, want PUBLISHED without a lease", r)
		}
		if err := s.Release(ctx, l); !errors.Is(err, replayguard.ErrLeaseLost) {
			t.Errorf("release after confirm = %v, want %v", err, replayguard.ErrLeaseLost)
		}
	})
	t.Run("a released claim is taken over with the original event", func(t *testing.T) {
		k := key()
		l := mustClaim(t, k, original, start)
		if err := s.Release(ctx, l); err != nil {
			t.Fatal(err)
		}
		retry := mustClaim(t, k, copyOf, start.Add(time.Second))
		if !retry.Takeover || retry.Event != original || retry.Token == l.Token {
			t.Errorf("lease after release = %+v, want a takeover publishing the original", retry)
		}
		if err := s.Confirm(ctx, l, start); !errors.Is(err, replayguard.ErrLeaseLost) {
			t.Errorf("the released lease confirms: %v, want %v", err, replayguard.ErrLeaseLost)
		}
		if err := s.Confirm(ctx, retry, start.Add(2*time.Second)); err != nil {
			t.Fatal(err)
		}
		_, err := claim(t, k, copyOf, start.Add(3*time.Second))
		refusedWith(t, err, replayguard.ErrReplay, original)
	})
	t.Run("a claim whose lease ended unconfirmed is taken over", func(t *testing.T) {
		k := key()
		dead := mustClaim(t, k, original, start)
		_, err := claim(t, k, copyOf, start.Add(10*time.Second)) // the lease's last millisecond
		refusedWith(t, err, replayguard.ErrInFlight, original)
		l := mustClaim(t, k, copyOf, start.Add(10*time.Second+time.Millisecond))
		if !l.Takeover || l.Event != original {
			t.Errorf("lease = %+v, want a takeover publishing the original", l)
		}
		for name, err := range map[string]error{"confirm": s.Confirm(ctx, dead, start), "release": s.Release(ctx, dead)} {
			if !errors.Is(err, replayguard.ErrLeaseLost) {
				t.Errorf("the dead claim's %s = %v, want %v", name, err, replayguard.ErrLeaseLost)
			}
		}
		if r := get(t, k); r.Status != replayguard.StatusPending || r.LeaseToken != l.Token {
			t.Errorf("record = %+v, want PENDING under the takeover's lease", r)
		}
	})
	t.Run("after the window the request is new again", func(t *testing.T) {
		k := key()
		l := mustClaim(t, k, original, start)
		if err := s.Confirm(ctx, l, start); err != nil {
			t.Fatal(err)
		}
		later := start.Add(time.Hour) // expires_at: gone at this second, whether or not TTL deleted it
		fresh := mustClaim(t, k, copyOf, later)
		if fresh.Takeover || fresh.Event != copyOf {
			t.Errorf("lease = %+v, want a new record for the copy", fresh)
		}
		if r := get(t, k); r.Status != replayguard.StatusPending || r.Event != copyOf || !r.PublishedAt.IsZero() || !r.FirstSeenAt.Equal(later) {
			t.Errorf("record = %+v, want the copy's, pending, never published", r)
		}
	})
	if o.Concurrent {
		t.Run("one of many simultaneous claims wins", func(t *testing.T) {
			for round := range 10 {
				k := key()
				var wg sync.WaitGroup
				var mu sync.Mutex
				wins, inFlight := 0, 0
				for range 4 {
					wg.Go(func() {
						_, err := claim(t, k, original, start)
						mu.Lock()
						defer mu.Unlock()
						switch {
						case err == nil:
							wins++
						case errors.Is(err, replayguard.ErrInFlight):
							inFlight++
						default:
							t.Errorf("claim: %v", err)
						}
					})
				}
				wg.Wait()
				if wins != 1 || inFlight != 3 {
					t.Fatalf("round %d: %d claims won and %d were in flight, want 1 and 3", round, wins, inFlight)
				}
			}
		})
	}
}
