package pacing

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Options build a Pacer.
type Options struct {
	Destination string
	Pace        config.Pace
	Store       Store
	// Now is the clock (time.Now when nil).
	Now func() time.Time
}

// Pacer paces one function instance's requests to a lane: the deliver
// pipeline calls Take before each request and Observe after it. It is
// safe for concurrent use by the records of a batch.
type Pacer struct {
	dest  string
	pace  config.Pace
	store Store
	now   func() time.Time

	mu sync.Mutex
	// leased tokens left, spendable until leaseUntil.
	leased     int
	leaseUntil time.Time
	// last is the lane's state as the store last returned it.
	last State
}

// New returns a Pacer.
func New(o Options) (*Pacer, error) {
	if o.Store == nil || o.Destination == "" || o.Pace.N < 1 {
		return nil, errors.New("pacing: a pacer needs a store, a destination and a rate")
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Pacer{dest: o.Destination, pace: o.Pace, store: o.Store, now: o.Now, last: State{Destination: o.Destination}}, nil
}

// Take returns 0 when the request may go now (a token is spent), or how
// long until a token is due. A request told to wait must not be sent: the
// pipeline defers its message by that long, without spending an attempt.
func (p *Pacer) Take(ctx context.Context) (time.Duration, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := p.now()
	if p.leased > 0 && !now.After(p.leaseUntil) {
		p.leased--
		return 0, nil
	}
	p.leased = 0
	n, hold := p.leaseSize(now)
	g, err := p.store.Take(ctx, p.dest, TakeInput{Now: now, Pace: p.pace, N: n, Hold: hold})
	if err != nil {
		return 0, err
	}
	p.last = g.State
	if g.N == 0 {
		return g.Wait, nil
	}
	if g.N > 1 {
		p.leased, p.leaseUntil = g.N-1, now.Add(hold)
	}
	return 0, nil
}

// leaseSize is how many tokens to ask for at now, and how long they may
// be spent over: LeaseSpan's worth of the rate (and at most half the
// burst at that rate, so a lease fits an idle bucket), or one token spent at once.
func (p *Pacer) leaseSize(now time.Time) (int, time.Duration) {
	iv := p.last.Interval(p.pace, now)
	k := min(int(LeaseSpan/iv), p.last.Burst(p.pace, now)/2)
	if k <= 1 {
		return 1, 0
	}
	return k, time.Duration(k) * iv
}

// Slows reports whether an answer lowers an adaptive lane's rate: a 429,
// or a 503 that carries Retry-After.
func Slows(status int, retryAfter bool) bool {
	return status == http.StatusTooManyRequests || (status == http.StatusServiceUnavailable && retryAfter)
}

// Observe tells an adaptive lane how a request went: a 429 (or a 503 with
// Retry-After) lowers the lane's level, a 2xx raises it back, each at most
// once per period for the whole lane. It writes only when a step is due by
// the state last seen; changed reports whether this call moved the level.
// On a lane that is not adaptive it does nothing.
func (p *Pacer) Observe(ctx context.Context, status int, retryAfter bool) (changed bool, err error) {
	if !p.pace.Adaptive {
		return false, nil
	}
	slower := Slows(status, retryAfter)
	if !slower && (status < 200 || status > 299) {
		return false, nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	in := AdjustInput{Now: p.now(), Slower: slower}
	if _, due := adjust(p.last, in); !due {
		return false, nil
	}
	s, changed, err := p.store.Adjust(ctx, p.dest, in)
	if err != nil {
		return false, err
	}
	p.last = s
	return changed, nil
}

// Effective is the lane's rate in requests a second by the state last
// seen (for the LaneEffectiveRate metric).
func (p *Pacer) Effective() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.Effective(p.pace, p.now())
}
