// Package sender is what reaches a lane's destination: one Sender per
// kind of destination, each in a package of its own (https, and the AWS
// targets sqstarget, eventbridgetarget, lambdatarget), behind one small
// interface. The deliver pipeline (shared/delivery) keeps the policy —
// the claim, the record, the retry schedule, the pause, ordering — and a
// sender the mechanism of one attempt, as net/http's Client keeps
// redirects and timeouts and its RoundTripper makes the request.
package sender

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strconv"
	"time"
)

// Sender makes the attempts of one lane. It is safe for concurrent use;
// a lane builds it once, at assembly, with only the clients and options
// its destination uses.
type Sender interface {
	// Prepare reads, through their caches, what an attempt needs from
	// stores of ours (secrets), before the event is claimed: an error, a
	// *NotReadyError, backs the message off unattempted, for a reason of
	// ours, instead of failing an attempt.
	Prepare(ctx context.Context) error
	// Send makes one attempt within d.Timeout and says what it came to.
	Send(ctx context.Context, d Delivery) Result
}

// Delivery is one attempt's event, as the lane sends it.
type Delivery struct {
	ID, Source, Type string
	ContentType      string
	Body             []byte
	// Attempt is the attempt's number (a probe's: its count).
	Attempt int
	// Replay is the operator's replay id, when the event is replayed.
	Replay string
	// Reconciled marks an event a reconciliation run brought in: the
	// provider sent it, but it never reached ingest.
	Reconciled bool
	// ReceivedAt is when ingest accepted the event.
	ReceivedAt time.Time
	// TraceHeader is the X-Ray trace header the event's message carries.
	TraceHeader string
	// Group is the message group an ordered lane received the event in.
	Group string
	// Timeout bounds the attempt.
	Timeout time.Duration
	// Events is, on a batch an https sender sends as one delivery, how
	// many events its body (the envelope) holds; 0 on one event.
	Events int
}

// NotReadyError says why Prepare could not ready an attempt: Reason is
// what the pipeline logs ("signing secret unavailable"), Err the cause
// (naming a secret, never a value).
type NotReadyError struct {
	Reason string
	Err    error
}

func (e *NotReadyError) Error() string { return e.Reason + ": " + e.Err.Error() }

func (e *NotReadyError) Unwrap() error { return e.Err }

// Result is what one attempt came to.
type Result struct {
	Status     int           // the HTTP status (200 for an AWS call that succeeded); 0 when no answer arrived
	Err        error         // why no answer arrived
	Latency    time.Duration // from sending to the end of the answer
	RetryAfter time.Duration // how long the destination asked us to wait (Retry-After on a 429 or 503; Lambda's throttle)
	// Unsent marks an attempt refused before anything left (an address
	// the guard refuses, a port the lane does not open, a URL secret
	// holding no usable URL or unreadable for good): a failed attempt
	// with no latency to publish.
	Unsent bool
	// Answer is the first bytes of the receiver's answer to a failed
	// attempt (a non-2xx response's body), at most MaxAnswer; nil when it
	// said nothing or the attempt succeeded.
	Answer []byte
}

// MaxAnswer bounds Result.Answer: what the record keeps of why a
// receiver refused an attempt.
const MaxAnswer = 1 << 10

// Verdict classifies a result.
type Verdict int

// The verdicts.
const (
	Failed Verdict = iota
	Delivered
	Gone
)

// Verdict classifies a result: 2xx delivered; 410 gone (stop retrying);
// everything else — 1xx, 3xx, 4xx, 5xx, timeouts, connection errors —
// failed.
func (r Result) Verdict() Verdict {
	switch {
	case r.Err != nil:
		return Failed
	case r.Status >= 200 && r.Status < 300:
		return Delivered
	case r.Status == http.StatusGone:
		return Gone
	default:
		return Failed
	}
}

// Describe is the short error recorded and logged for a result: "" when
// delivered, "HTTP <status>", "timeout", or the error's text (a sender
// returns errors that name no URL and no secret's value).
func (r Result) Describe() string {
	if r.Err == nil {
		if r.Status >= 200 && r.Status < 300 {
			return ""
		}
		return "HTTP " + strconv.Itoa(r.Status)
	}
	var netErr net.Error
	if errors.Is(r.Err, context.DeadlineExceeded) || errors.As(r.Err, &netErr) && netErr.Timeout() {
		return "timeout"
	}
	return r.Err.Error()
}
