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
	// fetch is held while a lease is fetched (Take).
	fetch sync.Mutex
	// leaseWait, when set (tests), runs as a take is about to wait for
	// the lease another record is fetching.
	leaseWait func()
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

// Take returns the time a token was charged at when the request may go
// (a token is spent: the caller sends aligned to that time), or how long
// until a token is due. A request told to wait must not be sent: the
// pipeline defers its message by that long, without spending an attempt.
//
// The store's round trip runs outside the Pacer's lock. Held across it, a
// slow write kept every other record of the instance waiting: their takes
// were charged when the lock let them in, later than the caller had
// begun to wait, and Effective, which the pipeline asks just before each
// paced send, blocked until the write ended, then let every waiting send
// go at once (on a loaded local stack 4 requests whose tokens were 200 ms
// apart left within 2 ms). Single tokens of one instance are taken at
// once, like takes of several instances: the bucket's conditional write
// orders them. A lease (at 20 a second and more) is fetched once for the
// instance, its other records waiting for it.
func (p *Pacer) Take(ctx context.Context) (at time.Time, wait time.Duration, err error) {
	now, spent, n, hold := p.fromLease()
	if spent {
		return now, 0, nil
	}
	if n > 1 {
		// A lease is fetched by one record at a time: the instance's other
		// records wait for it and spend from it, charged when they do.
		// Fetched by each at once, all but one of the leases would go
		// unspent, charged in the bucket all the same.
		if p.leaseWait != nil {
			p.leaseWait()
		}
		p.fetch.Lock()
		defer p.fetch.Unlock()
		if now, spent, n, hold = p.fromLease(); spent {
			return now, 0, nil
		}
	}
	g, err := p.store.Take(ctx, p.dest, TakeInput{Now: now, Pace: p.pace, N: n, Hold: hold})
	if err != nil {
		return time.Time{}, 0, err
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.see(g.State)
	if g.N == 0 {
		return time.Time{}, g.Wait, nil
	}
	if g.N > 1 {
		p.leased, p.leaseUntil = g.N-1, now.Add(hold)
	}
	return now, 0, nil
}

// fromLease spends a leased token at now when one is left within its
// span (spent); otherwise it drops what is left and says how many tokens
// a take at now asks for, over how long.
func (p *Pacer) fromLease() (now time.Time, spent bool, n int, hold time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now = p.now()
	if p.leased > 0 && !now.After(p.leaseUntil) {
		p.leased--
		return now, true, 0, 0
	}
	p.leased = 0
	n, hold = p.leaseSize(now)
	return now, false, n, hold
}

// see keeps s as the last state seen unless the one kept is newer: the
// answers of takes running at once may come back in any order.
func (p *Pacer) see(s State) {
	if s.Epoch < p.last.Epoch || (s.Epoch == p.last.Epoch && s.TAT.Before(p.last.TAT)) {
		return
	}
	p.last = s
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
	in := AdjustInput{Now: p.now(), Slower: slower}
	_, due := adjust(p.last, in)
	p.mu.Unlock()
	if !due {
		return false, nil
	}
	// Outside the lock, as Take's write is.
	s, changed, err := p.store.Adjust(ctx, p.dest, in)
	if err != nil {
		return false, err
	}
	p.mu.Lock()
	p.see(s)
	p.mu.Unlock()
	return changed, nil
}

// Effective is the lane's rate in requests a second by the state last
// seen (for the LaneEffectiveRate metric).
func (p *Pacer) Effective() float64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last.Effective(p.pace, p.now())
}
