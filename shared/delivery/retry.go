package delivery

import (
	"math"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// RetryPolicy is a destination's retry schedule, as the deliver function applies it.
type RetryPolicy struct {
	// Schedule holds the delay after each failed attempt but the last.
	Schedule []time.Duration
	// Jitter spreads each delay by up to ±Jitter of itself.
	Jitter float64
	// Retention is the part of the queue's message retention the schedule
	// may use (the rest is kept for pauses); a Retry-After never stretches a
	// delay so far that the rest of the schedule would outlive it. Zero
	// means no such bound.
	Retention time.Duration
	// Visibility is the queue's visibility timeout, the longest one attempt
	// may hold a message.
	Visibility time.Duration
}

// RetryPolicyFor derives the policy from a destination's config, with the same
// functions the CDK code uses for the queue.
func RetryPolicyFor(d config.Destination) RetryPolicy {
	return RetryPolicy{Schedule: d.Schedule(), Jitter: d.Jitter(), Retention: d.ScheduleRetention(), Visibility: d.VisibilityTimeout()}
}

// Attempts is the number of attempts: the first plus one per delay.
func (p RetryPolicy) Attempts() int { return len(p.Schedule) + 1 }

// Final reports whether attempt (1-based) is the last one.
func (p RetryPolicy) Final(attempt int) bool { return attempt >= p.Attempts() }

// Delay is the scheduled delay after failed attempt (1-based), spread by
// the jitter: r in [0, 1) maps to [-Jitter, +Jitter). It is at most SQS's
// 12 h visibility ceiling.
func (p RetryPolicy) Delay(attempt int, r float64) time.Duration {
	if len(p.Schedule) == 0 {
		return 0
	}
	i := min(max(attempt, 1), len(p.Schedule)) - 1
	d := float64(p.Schedule[i]) * (1 + p.Jitter*(2*r-1))
	return min(time.Duration(d), config.MaxVisibility)
}

// Backoff is the visibility delay after failed attempt (1-based): the
// scheduled delay, lengthened to the destination's Retry-After when that is
// longer. A Retry-After never shortens the schedule, and lengthens a delay
// at most to 12 h and only as far as the rest of the schedule still fits in
// the queue's retention, counted from the message's age.
func (p RetryPolicy) Backoff(attempt int, r float64, retryAfter, age time.Duration) time.Duration {
	d := p.Delay(attempt, r)
	if retryAfter <= d {
		return d
	}
	upper := config.MaxVisibility
	if p.Retention > 0 {
		budget := p.Retention - age - p.remainingNeed(attempt)
		upper = min(upper, max(d, budget))
	}
	return min(retryAfter, upper)
}

// remainingNeed is the time the attempts after attempt still need, at
// worst: their jittered delays and one visibility timeout each, plus the
// margin the CDK code keeps.
func (p RetryPolicy) remainingNeed(attempt int) time.Duration {
	var need time.Duration
	for i := attempt; i < len(p.Schedule); i++ {
		need += min(time.Duration(float64(p.Schedule[i])*(1+p.Jitter)), config.MaxVisibility)
	}
	return need + time.Duration(p.Attempts()-attempt)*p.Visibility + config.RetentionMargin
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return len(s) > 0
}

// visibilitySeconds renders a delay as a ChangeMessageVisibility value:
// whole seconds, rounded up, within 0..12 h.
func visibilitySeconds(d time.Duration) int32 {
	s := math.Ceil(d.Seconds())
	return int32(min(max(s, 0), config.MaxVisibility.Seconds()))
}

// wholeSeconds renders a limit in whole seconds, rounded down, within
// 0..12 h.
func wholeSeconds(d time.Duration) int32 {
	return int32(min(max(d, 0), config.MaxVisibility) / time.Second)
}
