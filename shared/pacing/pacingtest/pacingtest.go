// Package pacingtest is the contract every pacing.Store keeps, run on the
// memory twin in unit tests and on DynamoDB (the emulator) in integration
// tests.
package pacingtest

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

// Options tune the run.
type Options struct {
	// NewStore returns a store on the same lanes as the first one (each
	// instance of a lane has its own, as each function instance does); nil
	// shares the first.
	NewStore func() pacing.Store
	// Takers is the number of concurrent takers of the bound checks
	// (default 50); LeaseTakers that of the check with leases at 200/s
	// (default Takers), where each taker calls every few milliseconds.
	Takers, LeaseTakers int
}

var t0 = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// Run checks store against the contract; dest returns a fresh lane name
// per check.
func Run(t *testing.T, store pacing.Store, dest func() string, o Options) {
	if o.NewStore == nil {
		o.NewStore = func() pacing.Store { return store }
	}
	if o.Takers == 0 {
		o.Takers = 50
	}
	if o.LeaseTakers == 0 {
		o.LeaseTakers = o.Takers
	}
	ctx := context.Background()
	five := config.Pace{N: 5, Per: time.Second, Burst: 5}

	t.Run("a fresh lane has its burst, then one token an interval", func(t *testing.T) {
		d := dest()
		s, err := store.Get(ctx, d)
		if err != nil || !s.TAT.IsZero() || s.LevelOrFull() != pacing.FullLevel || s.Override != nil {
			t.Fatalf("fresh lane: %+v, %v", s, err)
		}
		for i := range 5 {
			g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0, Pace: five, N: 1})
			if err != nil || g.N != 1 {
				t.Fatalf("take %d of the burst: %+v, %v", i+1, g, err)
			}
		}
		g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0, Pace: five, N: 1})
		if err != nil || g.N != 0 || g.Wait != 200*time.Millisecond {
			t.Fatalf("take past the burst: %+v, %v; want a wait of 200ms", g, err)
		}
		if g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0.Add(199 * time.Millisecond), Pace: five, N: 1}); err != nil || g.N != 0 || g.Wait != time.Millisecond {
			t.Fatalf("take 1ms early: %+v, %v; want a wait of 1ms", g, err)
		}
		if g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0.Add(200 * time.Millisecond), Pace: five, N: 1}); err != nil || g.N != 1 {
			t.Fatalf("take when due: %+v, %v", g, err)
		}
		if s, _ := store.Get(ctx, d); !s.TAT.Equal(t0.Add(1200 * time.Millisecond)) {
			t.Errorf("TAT after 6 tokens = %v, want t0+1.2s", s.TAT.Sub(t0))
		}
	})

	t.Run("a lease is charged at the end of its span and never past the burst", func(t *testing.T) {
		d := dest()
		fifty := config.Pace{N: 50, Per: time.Second, Burst: 50}
		g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0, Pace: fifty, N: 5, Hold: 100 * time.Millisecond})
		if err != nil || g.N != 5 || !g.State.TAT.Equal(t0.Add(200*time.Millisecond)) {
			t.Fatalf("lease of 5: %+v, %v; want 5 and a TAT of t0+200ms", g, err)
		}
		// 50 burst less the 10 intervals charged: 40 more at once.
		var got int
		for range 20 {
			g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0, Pace: fifty, N: 5, Hold: 100 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			got += g.N
			if g.N == 0 {
				break
			}
		}
		if got != 40 {
			t.Errorf("leased %d more at t0, want 40", got)
		}
		// A lease longer than the burst allows is one token at once.
		one := config.Pace{N: 5, Per: time.Second, Burst: 1}
		if g, err := store.Take(ctx, dest(), pacing.TakeInput{Now: t0, Pace: one, N: 3, Hold: time.Second}); err != nil || g.N != 1 {
			t.Errorf("lease beyond the burst: %+v, %v; want 1 token", g, err)
		}
	})

	t.Run("adaptive steps are shared, spaced and bounded", func(t *testing.T) {
		d := dest()
		a := config.Pace{N: 10, Per: time.Second, Burst: 10, Adaptive: true}
		at := t0
		s, changed, err := store.Adjust(ctx, d, pacing.AdjustInput{Now: at, Slower: true})
		if err != nil || !changed || s.Level != 500 || s.Effective(a, at) != 5 {
			t.Fatalf("first 429: %+v, %v, %v; want level 500 (5/s)", s, changed, err)
		}
		if _, changed, _ := o.NewStore().Adjust(ctx, d, pacing.AdjustInput{Now: at.Add(500 * time.Millisecond), Slower: true}); changed {
			t.Error("a second 429 within SlowDownEvery halved the level again")
		}
		for i := range 10 {
			at = at.Add(pacing.SlowDownEvery)
			s, _, err = o.NewStore().Adjust(ctx, d, pacing.AdjustInput{Now: at, Slower: true})
			if err != nil {
				t.Fatalf("429 %d: %v", i, err)
			}
		}
		if s.Level != pacing.MinLevel || s.Effective(a, at) != 1 {
			t.Fatalf("after many 429s: level %d, effective %v; want %d (rate/10)", s.Level, s.Effective(a, at), pacing.MinLevel)
		}
		last := s.AdjustedAt
		if _, changed, _ := store.Adjust(ctx, d, pacing.AdjustInput{Now: last.Add(time.Second), Slower: false}); changed {
			t.Error("a success within SpeedUpEvery of the last step raised the level")
		}
		at = last.Add(pacing.SpeedUpEvery)
		if s, changed, _ = store.Adjust(ctx, d, pacing.AdjustInput{Now: at}); !changed || s.Level != pacing.MinLevel+pacing.SpeedUpStep {
			t.Fatalf("success after SpeedUpEvery: %+v, %v", s, changed)
		}
		for range 40 {
			at = at.Add(pacing.SpeedUpEvery)
			s, _, _ = store.Adjust(ctx, d, pacing.AdjustInput{Now: at})
		}
		if s.Level != pacing.FullLevel || s.Effective(a, at) != 10 {
			t.Errorf("after many successes: level %d, want %d", s.Level, pacing.FullLevel)
		}
		// The bucket paces by the level: at 5/s the interval is 200ms, and
		// the burst is half the configured one.
		s, _, _ = store.Adjust(ctx, d, pacing.AdjustInput{Now: at.Add(pacing.SlowDownEvery), Slower: true})
		if iv := s.Interval(a, at); iv != 200*time.Millisecond {
			t.Errorf("interval at level %d = %v, want 200ms", s.Level, iv)
		}
		if b := s.Burst(a, at); b != 5 {
			t.Errorf("burst at level %d = %d, want 5 (half of 10)", s.Level, b)
		}
		// An idle bucket at that level grants 5 at once, not 10.
		take := at.Add(time.Hour)
		for i := range 5 {
			if g, err := o.NewStore().Take(ctx, d, pacing.TakeInput{Now: take, Pace: a, N: 1}); err != nil || g.N != 1 {
				t.Fatalf("take %d of an idle bucket at half its level: %+v, %v", i+1, g, err)
			}
		}
		if g, err := store.Take(ctx, d, pacing.TakeInput{Now: take, Pace: a, N: 1}); err != nil || g.N != 0 || g.Wait != 200*time.Millisecond {
			t.Errorf("take 6 of an idle bucket at half its level: %+v, %v; want a wait of 200ms", g, err)
		}
	})

	t.Run("an override caps the rate and expires by itself", func(t *testing.T) {
		d := dest()
		if _, err := store.SetOverride(ctx, d, pacing.Override{N: 0, Per: time.Second, Until: t0.Add(time.Hour)}); err == nil {
			t.Error("an override of 0 was accepted")
		}
		s, err := store.SetOverride(ctx, d, pacing.Override{N: 1, Per: time.Second, At: t0, Until: t0.Add(2 * time.Hour)})
		if err != nil || !s.Capped(t0) || s.Effective(five, t0) != 1 {
			t.Fatalf("override: %+v, %v", s, err)
		}
		g, err := store.Take(ctx, d, pacing.TakeInput{Now: t0, Pace: five, N: 1})
		if err != nil || g.N != 1 {
			t.Fatalf("first take under the override: %+v, %v", g, err)
		}
		// The burst shrinks with the rate: five tokens at 5/s are one at
		// 1/s, so the next token is a second away.
		if b := s.Burst(five, t0); b != 1 {
			t.Errorf("burst under an override of 1/s on a lane of 5/s with a burst of 5: %d, want 1", b)
		}
		if g, _ = o.NewStore().Take(ctx, d, pacing.TakeInput{Now: t0, Pace: five, N: 1}); g.N != 0 || g.Wait != time.Second {
			t.Fatalf("past the burst under the override: %+v; want a wait of 1s", g)
		}
		if g, _ = store.Take(ctx, d, pacing.TakeInput{Now: t0.Add(time.Second), Pace: five, N: 1}); g.N != 1 {
			t.Fatalf("a second later under the override: %+v; want a token", g)
		}
		later := t0.Add(2 * time.Hour)
		if s, _ = store.Get(ctx, d); s.Capped(later) || s.Effective(five, later) != 5 {
			t.Errorf("override at its end: capped %v, effective %v", s.Capped(later), s.Effective(five, later))
		}
		if s, err = store.ClearOverride(ctx, d); err != nil || s.Override != nil || s.Capped(t0) {
			t.Errorf("clear: %+v, %v", s, err)
		}
	})

	t.Run("concurrent takers hold rate×t+burst at 5/s", func(t *testing.T) {
		bound(t, dest(), five, 4*time.Second, 10*time.Millisecond, o)
	})
	t.Run("concurrent takers hold rate×t+burst at 200/s with leases", func(t *testing.T) {
		lo := o
		lo.Takers = o.LeaseTakers
		bound(t, dest(), config.Pace{N: 200, Per: time.Second, Burst: 200}, 400*time.Millisecond, 2*time.Millisecond, lo)
	})
	t.Run("concurrent takers hold the bound of an adaptive lane slowing down", func(t *testing.T) {
		d := dest()
		a := config.Pace{N: 20, Per: time.Second, Burst: 20, Adaptive: true}
		if _, _, err := store.Adjust(ctx, d, pacing.AdjustInput{Now: t0.Add(-time.Hour), Slower: true}); err != nil {
			t.Fatal(err)
		}
		bound(t, d, a, 2*time.Second, 5*time.Millisecond, o)
	})
}

// bound runs o.Takers takers, each with a Pacer on a store of its own,
// over span of a clock stepped by step, and checks that no window of the
// grants holds more than rate×t + burst.
func bound(t *testing.T, dest string, pace config.Pace, span, step time.Duration, o Options) {
	ctx := context.Background()
	var clock atomic.Int64 // ns since t0
	now := func() time.Time { return t0.Add(time.Duration(clock.Load())) }
	st, err := o.NewStore().Get(ctx, dest)
	if err != nil {
		t.Fatal(err)
	}
	rate, burst := st.Effective(pace, t0), float64(st.Burst(pace, t0))
	type taker struct {
		p    *pacing.Pacer
		wake time.Duration
	}
	takers := make([]*taker, o.Takers)
	for i := range takers {
		p, err := pacing.New(pacing.Options{Destination: dest, Pace: pace, Store: o.NewStore(), Now: now})
		if err != nil {
			t.Fatal(err)
		}
		takers[i] = &taker{p: p}
	}
	var mu sync.Mutex
	var grants []time.Duration
	var calls atomic.Int64
	for at := time.Duration(0); at < span; at += step {
		clock.Store(int64(at))
		var wg sync.WaitGroup
		errs := make(chan error, len(takers))
		for _, tk := range takers {
			if tk.wake > at {
				continue
			}
			wg.Go(func() {
				calls.Add(1)
				_, wait, err := tk.p.Take(ctx)
				if err != nil {
					errs <- err
					return
				}
				if wait > 0 {
					tk.wake = at + wait
					return
				}
				mu.Lock()
				grants = append(grants, at)
				mu.Unlock()
			})
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
	}
	slices.Sort(grants)
	// The lane ran at its rate: every token due in the span was granted
	// to someone (a lease's unspent tokens aside).
	due := rate*span.Seconds() + burst
	if float64(len(grants)) < 0.8*due {
		t.Errorf("%d grants over %v, want about %.0f: the takers starved", len(grants), span, due)
	}
	for i := range grants {
		for j := i; j < len(grants); j++ {
			w := (grants[j] - grants[i]).Seconds()
			if limit := rate*w + burst; float64(j-i+1) > limit+1e-9 {
				t.Fatalf("%d grants within %.3fs (from %v to %v), over rate×t+burst = %.2f", j-i+1, w, grants[i], grants[j], limit)
			}
		}
	}
	t.Logf("%d takers, %d calls, %d grants over %v at %.1f/s (burst %.0f)", len(takers), calls.Load(), len(grants), span, rate, burst)
}

// Lanes returns a generator of fresh lane names.
func Lanes(prefix string) func() string {
	var n atomic.Int64
	return func() string { return fmt.Sprintf("%s-%d", prefix, n.Add(1)) }
}
