package pacing_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func newPacer(t *testing.T, pace config.Pace, store pacing.Store, c *clock) *pacing.Pacer {
	t.Helper()
	p, err := pacing.New(pacing.Options{Destination: "d", Pace: pace, Store: store, Now: c.now})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// countingStore counts the takes that reach the store.
type countingStore struct {
	*pacing.Memory
	takes int
}

func (s *countingStore) Take(ctx context.Context, dest string, in pacing.TakeInput) (pacing.Grant, error) {
	s.takes++
	return s.Memory.Take(ctx, dest, in)
}

// TestLeaseSpentWithinItsSpan: at 100/s an instance leases 10 tokens
// (100 ms of the rate) in one write, spends them without writing, and
// drops what it has not spent when the span ends.
func TestLeaseSpentWithinItsSpan(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	store := &countingStore{Memory: pacing.NewMemory()}
	p := newPacer(t, config.Pace{N: 100, Per: time.Second, Burst: 100}, store, c)
	for i := range 10 {
		if _, wait, err := p.Take(ctx); err != nil || wait != 0 {
			t.Fatalf("take %d: %v, %v", i, wait, err)
		}
	}
	if store.takes != 1 {
		t.Errorf("10 takes within a lease wrote %d times, want 1", store.takes)
	}
	if _, wait, _ := p.Take(ctx); wait != 0 || store.takes != 2 {
		t.Errorf("the 11th take: wait %v after %d writes, want a new lease (2)", wait, store.takes)
	}
	// 9 tokens of the second lease left; past its span they are dropped.
	c.t = c.t.Add(101 * time.Millisecond)
	if _, _, err := p.Take(ctx); err != nil || store.takes != 3 {
		t.Errorf("a take past the lease's span did not write (%d writes): its tokens were spent late", store.takes)
	}
	s, _ := store.Get(ctx, "d")
	// Three leases of 10 at 10 ms: the first charged from the end of its
	// span (t0+100ms), the others after it.
	if want := start.Add(100*time.Millisecond + 3*100*time.Millisecond); !s.TAT.Equal(want) {
		t.Errorf("TAT %v, want %v", s.TAT, want)
	}
}

// TestSlowLaneTakesOneAtATime: below 20/s a take writes for one token,
// to be spent at once.
func TestSlowLaneTakesOneAtATime(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	store := &countingStore{Memory: pacing.NewMemory()}
	p := newPacer(t, config.Pace{N: 5, Per: time.Second, Burst: 5}, store, c)
	for range 5 {
		if _, wait, _ := p.Take(ctx); wait != 0 {
			t.Fatal("the burst was refused")
		}
	}
	if _, wait, _ := p.Take(ctx); wait != 200*time.Millisecond {
		t.Errorf("past the burst: wait %v, want 200ms", wait)
	}
	if store.takes != 6 {
		t.Errorf("%d writes for 6 takes, want 6", store.takes)
	}
}

func TestObserve(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, tt := range []struct {
		name       string
		adaptive   bool
		status     int
		retryAfter bool
		wantLevel  int
	}{
		{"429 slows an adaptive lane", true, http.StatusTooManyRequests, false, 500},
		{"503 with Retry-After slows it", true, http.StatusServiceUnavailable, true, 500},
		{"503 without Retry-After does not", true, http.StatusServiceUnavailable, false, pacing.FullLevel},
		{"500 does not", true, http.StatusInternalServerError, false, pacing.FullLevel},
		{"429 on a lane that is not adaptive does nothing", false, http.StatusTooManyRequests, false, pacing.FullLevel},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := &clock{t: start}
			store := pacing.NewMemory()
			p := newPacer(t, config.Pace{N: 10, Per: time.Second, Burst: 10, Adaptive: tt.adaptive}, store, c)
			if _, err := p.Observe(ctx, tt.status, tt.retryAfter); err != nil {
				t.Fatal(err)
			}
			if s, _ := store.Get(ctx, "d"); s.LevelOrFull() != tt.wantLevel {
				t.Errorf("level %d, want %d", s.LevelOrFull(), tt.wantLevel)
			}
		})
	}

	// Successes climb back, one step per SpeedUpEvery, and the pacer reads
	// the new rate.
	c := &clock{t: start}
	store := pacing.NewMemory()
	p := newPacer(t, config.Pace{N: 10, Per: time.Second, Burst: 10, Adaptive: true}, store, c)
	p.Observe(ctx, http.StatusTooManyRequests, false)
	if got := p.Effective(); got != 5 {
		t.Errorf("effective after a 429: %v, want 5", got)
	}
	c.t = c.t.Add(time.Second)
	if changed, _ := p.Observe(ctx, http.StatusOK, false); changed {
		t.Error("a success 1s after the 429 raised the level")
	}
	c.t = start.Add(pacing.SpeedUpEvery)
	if changed, _ := p.Observe(ctx, http.StatusOK, false); !changed || p.Effective() != 5.25 {
		t.Errorf("a success SpeedUpEvery after the 429: changed %v, effective %v; want 5.25", changed, p.Effective())
	}
}

func TestNewRefuses(t *testing.T) {
	for _, o := range []pacing.Options{
		{Pace: config.Pace{N: 1, Per: time.Second, Burst: 1}, Store: pacing.NewMemory()},
		{Destination: "d", Pace: config.Pace{N: 1, Per: time.Second, Burst: 1}},
		{Destination: "d", Store: pacing.NewMemory()},
	} {
		if _, err := pacing.New(o); err == nil {
			t.Errorf("New(%+v) accepted", o)
		}
	}
}

// blockingStore holds each take in the store until released, and says
// when one has entered.
type blockingStore struct {
	*pacing.Memory
	entered chan pacing.TakeInput
	release chan struct{}
}

func (s *blockingStore) Take(ctx context.Context, dest string, in pacing.TakeInput) (pacing.Grant, error) {
	s.entered <- in
	<-s.release
	return s.Memory.Take(ctx, dest, in)
}

// TestTakeDoesNotHoldTheInstanceDuringItsWrite: while one take's write is
// in flight, the instance's other records take their own tokens and
// Effective answers at once. On the code before, the Pacer's lock was held
// across the write: the second take waited for it (charged later than its
// caller had begun to wait) and Effective, asked just before each paced
// send, blocked until the write ended and then let every waiting send go
// at once.
func TestTakeDoesNotHoldTheInstanceDuringItsWrite(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	store := &blockingStore{Memory: pacing.NewMemory(), entered: make(chan pacing.TakeInput, 2), release: make(chan struct{})}
	p := newPacer(t, config.Pace{N: 5, Per: time.Second, Burst: 5}, store, c)
	type took struct {
		at   time.Time
		wait time.Duration
		err  error
	}
	results := make(chan took, 2)
	take := func() {
		at, wait, err := p.Take(ctx)
		results <- took{at, wait, err}
	}
	// A guard against the old code's deadlock, not a timing assertion.
	const guard = 30 * time.Second
	enter := func(what string) pacing.TakeInput {
		select {
		case in := <-store.entered:
			return in
		case <-time.After(guard):
			t.Fatalf("%s never reached the store: the first take's write holds the instance", what)
			return pacing.TakeInput{}
		}
	}
	go take()
	first := enter("the first take")
	effective := make(chan float64, 1)
	go func() { effective <- p.Effective() }()
	select {
	case r := <-effective:
		if r != 5 {
			t.Errorf("Effective() = %v during a take's write, want 5", r)
		}
	case <-time.After(guard):
		t.Fatal("Effective() waited for a take's write to end")
	}
	go take()
	second := enter("the second take")
	if !first.Now.Equal(start) || !second.Now.Equal(start) {
		t.Errorf("takes charged at %v and %v, want both at %v", first.Now, second.Now, start)
	}
	close(store.release)
	for range 2 {
		r := <-results
		if r.err != nil || r.wait != 0 || !r.at.Equal(start) {
			t.Errorf("Take() = %v, %v, %v; want a token charged at %v", r.at, r.wait, r.err, start)
		}
	}
	if s, _ := store.Get(ctx, "d"); !s.TAT.Equal(start.Add(2 * 200 * time.Millisecond)) {
		t.Errorf("TAT %v after two takes, want two intervals on", s.TAT.Sub(start))
	}
}

// TestLeaseFetchedOnceForTheInstance: at 1000/s, ten records of one
// instance finding no lease at once make one write, the lease it
// fetches serving all ten. Fetched by each, nine leases of 100 tokens
// would be charged in the bucket and go unspent, slowing the lane to a
// tenth of its rate.
func TestLeaseFetchedOnceForTheInstance(t *testing.T) {
	ctx := context.Background()
	start := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	c := &clock{t: start}
	const records = 10
	store := &blockingStore{Memory: pacing.NewMemory(), entered: make(chan pacing.TakeInput, records), release: make(chan struct{})}
	p := newPacer(t, config.Pace{N: 1000, Per: time.Second, Burst: 1000}, store, c)
	waiting := make(chan struct{}, records)
	pacing.SetLeaseWait(p, func() { waiting <- struct{}{} })
	type took struct {
		at   time.Time
		wait time.Duration
		err  error
	}
	results := make(chan took, records)
	take := func() {
		at, wait, err := p.Take(ctx)
		results <- took{at, wait, err}
	}
	const guard = 30 * time.Second // against a deadlock, not a timing assertion
	go take()
	select {
	case <-store.entered:
	case <-time.After(guard):
		t.Fatal("the first take never reached the store")
	}
	for range records - 1 {
		go take()
	}
	for i := range records {
		select {
		case <-waiting:
		case <-time.After(guard):
			t.Fatalf("%d of %d takes came to wait for the lease being fetched", i, records)
		}
	}
	close(store.release)
	for range records {
		if r := <-results; r.err != nil || r.wait != 0 || !r.at.Equal(start) {
			t.Errorf("Take() = %v, %v, %v; want a token from the lease", r.at, r.wait, r.err)
		}
	}
	if n := len(store.entered); n != 0 {
		t.Errorf("%d more takes reached the store, want the one lease's write only", n)
	}
	if s, _ := store.Get(ctx, "d"); !s.TAT.Equal(start.Add(100*time.Millisecond + 100*time.Millisecond)) {
		t.Errorf("TAT %v on, want one lease of 100 tokens charged from its span's end (200ms)", s.TAT.Sub(start))
	}
}
