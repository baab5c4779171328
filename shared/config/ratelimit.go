package config

import (
	"fmt"
	"math"
	"time"
)

// Rate limit bounds. MaxRatePerSecond is the fastest limit one lane's
// bucket enforces: above it the bucket's item (one DynamoDB item, written
// about ten times a second with leases of pacing.LeaseSpan) is still
// within an item's write ceiling, but a limit that high protects no
// receiver a maxConcurrency of 1000 would not.
const (
	MaxRatePerSecond = 10000
	MaxRatePerMinute = MaxRatePerSecond * 60
	// AdaptiveFloorDivisor: an adaptive lane's effective rate never falls
	// below its configured rate divided by this.
	AdaptiveFloorDivisor = 10
)

// RateLimit paces a destination: at most PerSecond requests a second (or
// PerMinute a minute), with bursts of Burst, counted across every
// concurrent deliver function of the lane. Exactly one of PerSecond and
// PerMinute is set. Absent (nil), the lane is not paced.
type RateLimit struct {
	PerSecond int `json:"perSecond,omitempty"`
	PerMinute int `json:"perMinute,omitempty"`
	// Burst is how many requests may go at once after an idle spell
	// (default: one second's worth of the rate, at least 1).
	Burst int `json:"burst,omitempty"`
	// Adaptive lowers the lane's rate when the destination answers 429
	// (or 503 with Retry-After) and raises it back on success, between
	// a tenth of the rate and the rate.
	Adaptive bool `json:"adaptive,omitempty"`
}

// Pace is a destination's rate limit with its defaults applied.
type Pace struct {
	// N requests Per (time.Second or time.Minute).
	N   int
	Per time.Duration
	// Burst is at least 1.
	Burst    int
	Adaptive bool
}

// PerSecond is the rate in requests a second.
func (p Pace) PerSecond() float64 { return float64(p.N) / p.Per.Seconds() }

// String renders the rate as configured: "5/s", "30/min".
func (p Pace) String() string {
	if p.Per == time.Minute {
		return fmt.Sprintf("%d/min", p.N)
	}
	return fmt.Sprintf("%d/s", p.N)
}

// minBurst is the least burst of a rate: one second's worth, at least 1.
func minBurst(perSecond float64) int { return max(1, int(math.Ceil(perSecond))) }

// Pace returns the destination's rate limit in force, and false when the
// lane is not paced.
func (d Destination) Pace() (Pace, bool) {
	r := d.RateLimit
	if r == nil {
		return Pace{}, false
	}
	p := Pace{N: r.PerSecond, Per: time.Second, Burst: r.Burst, Adaptive: r.Adaptive}
	if r.PerMinute != 0 {
		p.N, p.Per = r.PerMinute, time.Minute
	}
	if p.Burst == 0 {
		p.Burst = minBurst(p.PerSecond())
	}
	return p, true
}

// validate checks a rateLimit block.
func (r *RateLimit) validate(p *problems, at string) {
	switch {
	case r.PerSecond != 0 && r.PerMinute != 0:
		p.add(at, "sets both perSecond (%d) and perMinute (%d); keep one", r.PerSecond, r.PerMinute)
		return
	case r.PerSecond == 0 && r.PerMinute == 0:
		p.add(at, "sets no rate; set perSecond or perMinute, e.g. {\"perSecond\": 5}, or remove rateLimit (no limit)")
		return
	case r.PerSecond < 0 || r.PerSecond > MaxRatePerSecond:
		p.add(at+".perSecond", "%d is out of range; use 1 to %d requests a second (or perMinute for slower limits)", r.PerSecond, MaxRatePerSecond)
		return
	case r.PerMinute < 0 || r.PerMinute > MaxRatePerMinute:
		p.add(at+".perMinute", "%d is out of range; use 1 to %d requests a minute", r.PerMinute, MaxRatePerMinute)
		return
	}
	perSecond := float64(r.PerSecond)
	if r.PerMinute != 0 {
		perSecond = float64(r.PerMinute) / 60
	}
	least := minBurst(perSecond)
	switch {
	case r.Burst < 0:
		p.add(at+".burst", "%d is negative; use %d or more, or leave it out (default %d)", r.Burst, least, least)
	case r.Burst != 0 && r.Burst < least:
		p.add(at+".burst", "%d is below the rate (%d a second): the lane could not send one second's worth at once after an idle spell; use %d or more, or leave it out (default %d)", r.Burst, least, least, least)
	case r.Burst > MaxRatePerSecond:
		p.add(at+".burst", "%d is out of range; use %d to %d", r.Burst, least, MaxRatePerSecond)
	}
}

// Paced reports whether any destination has a rate limit.
func (c *Config) Paced() bool {
	for _, d := range c.Destinations {
		if d.RateLimit != nil {
			return true
		}
	}
	return false
}
