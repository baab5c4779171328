// Package pacing holds a destination lane to its rate limit (rateLimit in
// the configuration) across every concurrent deliver function of the
// lane: over any window of t seconds the destination receives at most
// rate × t + burst requests.
//
// The bucket is a generic cell rate algorithm (GCRA): one number per lane,
// the theoretical arrival time (TAT) of the next request, kept in the lane's
// item of the record table (pausing.Key) beside its pause state. A take
// at now conforms when the TAT it would leave, less burst intervals, is
// not after now; it moves the TAT on by one interval per token. A Pacer,
// one per function instance, takes tokens a few at a time at high rates
// (a lease: k tokens charged as if sent at the end of the lease's span),
// so the bucket costs about ten writes a second at most, whatever the rate.
// Tokens of a lease that are not spent within its span are dropped, never
// returned: the bound holds whatever an instance does with them.
//
// With rateLimit.adaptive, a 429 (or a 503 with Retry-After) halves the
// lane's level and each run of successes raises it again, within
// [rate/10, rate]; the level is in the same item, so every instance paces
// by it. An operator's override (ops pace) caps the rate until it expires.
//
// DynamoDB stores the bucket on the record table and Memory in memory with
// the same semantics; pacingtest runs the same contract on both.
package pacing

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Tunables of the mechanism.
const (
	// LeaseSpan is the most time a lease covers: an instance leases at
	// most LeaseSpan's worth of the rate at once (and at most half the
	// burst), and must spend it within LeaseSpan.
	LeaseSpan = 100 * time.Millisecond
	// FullLevel is an adaptive lane's level at its configured rate, in
	// thousandths; MinLevel is its floor (rate/10).
	FullLevel = 1000
	MinLevel  = FullLevel / config.AdaptiveFloorDivisor
	// SlowDownEvery is the least time between two decreases of the level
	// (the 429s of one overload, seen by every instance at once, halve it
	// once); SpeedUpEvery the least time between two increases, of
	// SpeedUpStep each.
	SlowDownEvery = time.Second
	SpeedUpEvery  = 5 * time.Second
	SpeedUpStep   = 25
)

// Override is an operator's cap on a lane's rate until Until.
type Override struct {
	// N requests Per (time.Second or time.Minute).
	N     int
	Per   time.Duration
	At    time.Time
	Until time.Time
}

// PerSecond is the override's rate in requests a second.
func (o Override) PerSecond() float64 { return float64(o.N) / o.Per.Seconds() }

// State is a lane's pacing state as stored.
type State struct {
	Destination string
	// TAT is the theoretical arrival time of the next request; zero when
	// the lane never took a token.
	TAT time.Time
	// Level is the adaptive level in thousandths of the configured rate;
	// 0 when never adjusted (FullLevel).
	Level      int
	AdjustedAt time.Time
	// Override is the operator's cap, nil when none was set (it may have
	// expired: see Capped).
	Override *Override
	// Epoch counts the changes to the rate (adjustments and overrides);
	// a take is conditional on the epoch its interval was computed at.
	Epoch int64
}

// LevelOrFull is Level with its default.
func (s State) LevelOrFull() int {
	if s.Level == 0 {
		return FullLevel
	}
	return s.Level
}

// Capped reports whether an override caps the rate at now.
func (s State) Capped(now time.Time) bool {
	return s.Override != nil && now.Before(s.Override.Until)
}

// Effective is the lane's rate at now in requests a second: the
// configured one, lowered by the adaptive level and capped by an
// operator's override in force.
func (s State) Effective(p config.Pace, now time.Time) float64 {
	r := p.PerSecond()
	if p.Adaptive {
		r = r * float64(s.LevelOrFull()) / FullLevel
	}
	if s.Capped(now) {
		r = min(r, s.Override.PerSecond())
	}
	return r
}

// Burst is the lane's burst at now, in tokens: the configured burst
// scaled by the effective rate's share of the configured rate (rounded
// down, at least 1), so that a lane the adaptive level or an override
// slows keeps the same seconds' worth of burst, not the same count: a lane
// of 5 a second with a burst of 5, slowed to 2 a second by a receiver
// that allows 2, sends at most 2 at once, not 5
// (docs/decisions.md#paced-lanes).
func (s State) Burst(p config.Pace, now time.Time) int {
	b := max(1, p.Burst)
	full := p.PerSecond()
	if full <= 0 {
		return b
	}
	share := min(1, s.Effective(p, now)/full)
	return max(1, int(math.Floor(float64(b)*share+1e-9)))
}

// Interval is the time between two tokens at the effective rate, in whole
// microseconds (rounded up: the bucket errs on the slow side).
func (s State) Interval(p config.Pace, now time.Time) time.Duration {
	return time.Duration(math.Ceil(1e6/s.Effective(p, now))) * time.Microsecond
}

// TakeInput asks a lane's bucket for tokens.
type TakeInput struct {
	Now  time.Time
	Pace config.Pace
	// N is the most tokens wanted (1 without a lease).
	N int
	// Hold is how long after Now the tokens may be spent (0: at once).
	// The bucket charges them as if sent at Now+Hold; a store drops a
	// lease it cannot fit (Hold beyond burst−1 intervals) to one token
	// spent at once.
	Hold time.Duration
}

// Grant is a take's answer: N tokens (at least 1, at most asked), or none
// and Wait until one is due.
type Grant struct {
	N     int
	Wait  time.Duration
	State State
}

// AdjustInput is one adaptive step: Slower after a 429 (or a 503 with
// Retry-After), faster after a success.
type AdjustInput struct {
	Now    time.Time
	Slower bool
}

// Store keeps the lanes' buckets. Every method is atomic per lane.
type Store interface {
	Take(ctx context.Context, dest string, in TakeInput) (Grant, error)
	// Adjust moves the adaptive level by one step when one is due; changed
	// is false when it was not (too soon after the last, or at a bound).
	Adjust(ctx context.Context, dest string, in AdjustInput) (s State, changed bool, err error)
	SetOverride(ctx context.Context, dest string, o Override) (State, error)
	ClearOverride(ctx context.Context, dest string) (State, error)
	Get(ctx context.Context, dest string) (State, error)
}

// ErrBadOverride is returned for an override that is no rate.
var ErrBadOverride = errors.New("an override needs a rate of at least 1 per second or per minute and an end")

// µs is a time's microseconds since the Unix epoch (the bucket's unit).
func µs(t time.Time) int64 { return t.UnixMicro() }

// decision is what a take comes to against a state.
type decision struct {
	n        int   // tokens granted; 0 → wait
	base     int64 // the TAT the tokens start from (µs)
	interval int64 // µs
	tat      int64 // the TAT left after the grant (µs)
	wait     time.Duration
	fresh    bool // base is Now+Hold: the stored TAT was behind it
	hold     int64
	burst    int64 // tokens, at the effective rate (State.Burst)
}

// decide runs the GCRA over s for in: the largest m ≤ N with
// base + m×I − burst×I ≤ now, where base = max(TAT, now+hold) and burst
// is the lane's burst at the effective rate.
func decide(s State, in TakeInput) decision {
	iv := max(int64(1), s.Interval(in.Pace, in.Now).Microseconds())
	burst := int64(s.Burst(in.Pace, in.Now))
	n, hold := int64(max(1, in.N)), in.Hold.Microseconds()
	if hold < 0 || hold > (burst-1)*iv {
		n, hold = 1, 0
	}
	now := µs(in.Now)
	d := decision{interval: iv, hold: hold, burst: burst}
	d.base, d.fresh = now+hold, true
	if !s.TAT.IsZero() && µs(s.TAT) >= d.base {
		d.base, d.fresh = µs(s.TAT), false
	}
	ahead := d.base - now // ≥ 0
	room := burst - (ahead+iv-1)/iv
	if room < 1 {
		d.wait = time.Duration(ahead-(burst-1)*iv) * time.Microsecond
		return d
	}
	d.n = int(min(room, n))
	d.tat = d.base + int64(d.n)*iv
	return d
}

// adjust is the level an adaptive step leaves, and whether it moves.
func adjust(s State, in AdjustInput) (int, bool) {
	level := s.LevelOrFull()
	since := in.Now.Sub(s.AdjustedAt)
	if in.Slower {
		next := max(MinLevel, level/2)
		return next, next != level && (s.AdjustedAt.IsZero() || since >= SlowDownEvery)
	}
	next := min(FullLevel, level+SpeedUpStep)
	return next, next != level && (s.AdjustedAt.IsZero() || since >= SpeedUpEvery)
}

func validOverride(o Override) error {
	if o.N < 1 || (o.Per != time.Second && o.Per != time.Minute) || o.Until.IsZero() {
		return ErrBadOverride
	}
	return nil
}
