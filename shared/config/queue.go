package config

import (
	"fmt"
	"time"
)

// Queue timing: the deliver function's timeout, the queue's visibility and
// retention.
const (
	// FunctionOverheadSeconds is added to a destination's timeout to get the
	// deliver function's timeout: claim, record and backoff calls around the POST.
	FunctionOverheadSeconds = 10
	// VisibilityFactor is how many deliver-function timeouts a queue's
	// visibility timeout spans (AWS recommends at least six).
	VisibilityFactor = 6

	MaxVisibility = 12 * time.Hour // SQS's ceiling for a message's visibility, counted from its receive
	// VisibilityCapMargin is kept below MaxVisibility for what may pass
	// between SQS handing a message to the event source mapping and the
	// invocation starting, beyond the batching window (the invoke call, a
	// cold start), and for clock differences.
	VisibilityCapMargin = time.Minute
	MaxRetention        = 14 * 24 * time.Hour // SQS's ceiling for message retention
	MinRetention        = time.Minute
	DLQRetention        = 14 * 24 * time.Hour
	RetentionMargin     = time.Hour
)

// FunctionTimeout is the deliver function's timeout: the delivery deadline
// plus room for the claim, record and visibility calls.
func (d Destination) FunctionTimeout() time.Duration {
	return d.Timeout() + FunctionOverheadSeconds*time.Second
}

// VisibilityTimeout is the queue's default visibility timeout: six function
// timeouts plus the batching window, as AWS advises for an SQS event source
// (the mapping may hold a message for the whole window before the
// invocation starts, and retries throttled invocations within the rest), so
// a message is never redelivered while a function may still hold it.
func (d Destination) VisibilityTimeout() time.Duration {
	return VisibilityFactor*d.FunctionTimeout() + d.BatchWindow()
}

// MaxDelay is the longest retry delay the queue can honour. SQS lets a
// message stay hidden at most MaxVisibility from its receive, and the
// receive can precede the delay's ChangeMessageVisibility call by the
// batching window, the whole function timeout and VisibilityCapMargin.
func (d Destination) MaxDelay() time.Duration {
	return MaxVisibility - d.FunctionTimeout() - d.BatchWindow() - VisibilityCapMargin
}

// defaultMaxDelay is MaxDelay for a destination with the default timeout
// and no batch window (11h58m40s).
func defaultMaxDelay() time.Duration {
	return Destination{}.MaxDelay()
}

// Attempts is the number of delivery attempts: the first plus one per
// scheduled delay.
func (d Destination) Attempts() int { return len(d.Schedule()) + 1 }

// MaxReceiveCount is the queue redrive policy's maxReceiveCount: one receive
// per attempt. After the last attempt the deliver function marks the record
// DEAD and releases the message, and SQS moves it to the DLQ on the next
// receive.
func (d Destination) MaxReceiveCount() int {
	if d.Ordered() {
		return d.orderedReceiveCount()
	}
	return d.Attempts()
}

// retentionNeeded is the longest a message can legitimately spend in the
// queue when every attempt fails: each delay stretched by the jitter, plus a
// full visibility timeout per attempt, plus a margin.
func (d Destination) retentionNeeded() time.Duration {
	var total time.Duration
	j := d.Jitter()
	for _, delay := range d.Schedule() {
		total += min(time.Duration(float64(delay)*(1+j)), MaxVisibility)
	}
	total += time.Duration(d.Attempts()) * d.VisibilityTimeout()
	return total + RetentionMargin
}

// Retention is the queue's message retention: twice what the schedule needs
// (the other half is headroom for a backlog waiting for its first attempt),
// plus the longest time a message may spend paused when the lane pauses
// (PauseReserve), rounded up to the minute, capped at SQS's 14 days.
// Validate rejects a schedule whose need alone, plus the pause reserve,
// exceeds 14 days. An expired message is lost silently, so the headroom
// errs long; the DLQ's own 14 days count from the original enqueue time,
// which is why the source queue is not simply 14 days.
func (d Destination) Retention() time.Duration {
	if d.Ordered() {
		return orderedRetention
	}
	r := roundUp(2*d.retentionNeeded()+d.PauseReserve(), time.Minute)
	return max(MinRetention, min(r, MaxRetention))
}

func roundUp(d, unit time.Duration) time.Duration {
	if r := d % unit; r != 0 {
		return d + unit - r
	}
	return d
}

// validateQueueTiming refuses a retry schedule the queue cannot honour: a
// delay longer than MaxDelay, or a schedule needing more retention than SQS
// keeps. Each check runs only when the fields it reads are in range; the
// range checks report them otherwise.
func (d *Destination) validateQueueTiming(p *problems, at string) {
	timing := d.TimeoutSeconds >= 0 && d.TimeoutSeconds <= MaxTimeoutSeconds && d.BatchWindowSeconds >= 0 && d.BatchWindowSeconds <= MaxBatchWindowSeconds &&
		(d.Batch == nil || d.Batch.Window >= 0 && d.Batch.Window <= MaxBatchWindow)
	for i, delay := range d.Retry.Schedule {
		switch {
		case timing && delay.D() > d.MaxDelay():
			p.add(fmt.Sprintf("%s.retry.schedule[%d]", at, i), "%s cannot be honoured: SQS hides a message at most %s from its receive, which can precede this delay by the function timeout (%s), the batch window (%s) and a %s margin; use at most %s",
				delay.D(), MaxVisibility, d.FunctionTimeout(), d.BatchWindow(), VisibilityCapMargin, d.MaxDelay())
		case !timing && delay.D() > MaxVisibility:
			// The timeout or window is out of range (reported there), so the
			// exact bound is unknown; it is below SQS's ceiling.
			p.add(fmt.Sprintf("%s.retry.schedule[%d]", at, i), "%s is more than SQS hides a message (%s from its receive, less the function timeout, the batch window and a %s margin); use at most %s with the default timeout and no batch window",
				delay.D(), MaxVisibility, VisibilityCapMargin, defaultMaxDelay())
		}
	}
	if d.Retry.valid() && d.TimeoutSeconds >= 0 {
		if need := d.retentionNeeded(); need > MaxRetention {
			p.add(at+".retry.schedule", "needs %s of queue retention (delays with jitter plus one visibility timeout per attempt plus %s), more than SQS's maximum of %s; shorten the schedule", roundUp(need, time.Hour), RetentionMargin, MaxRetention)
		}
	}
}
