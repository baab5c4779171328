package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// Pauser is the lane's pause machinery (*pausing.Controller): it counts attempts,
// pauses the lane when its rule trips, says whether it is paused, and
// probes it on a schedule.
type Pauser interface {
	Observe(ctx context.Context, t pausing.Tally) (pausing.Change, error)
	Paused(ctx context.Context) (bool, error)
	Tick(ctx context.Context, probe pausing.ProbeFunc) (pausing.TickResult, error)
}

// lane is a pausing lane's machinery: its Pauser, the queue a paused lane
// sends fresh copies to, and how long a held message waits.
type lane struct {
	Pauser
	holdFor time.Duration
}

// RequeueAPI sends a fresh copy of a message to the lane's queue.
type RequeueAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// Timing of the lane calls. Each runs beside the deliveries and never
// fails one: a lane call that fails or times out is logged and skipped.
const (
	// LaneTimeout bounds the lane calls after a batch: counting, and the
	// pause (a write and the event source mapping's switch) when the rule
	// trips.
	LaneTimeout = 3 * time.Second
	// LaneReadTimeout bounds the read of the lane's mode before a batch.
	LaneReadTimeout = time.Second
	// MinLaneTime is the least time left worth counting a batch with.
	MinLaneTime = time.Second
	// RequeueTimeout bounds the SendMessage of a fresh copy.
	RequeueTimeout = 2 * time.Second
)

func checkPauseOptions(o Options) []error {
	_, pauses := o.Destination.PauseRule()
	_, paced := o.Destination.Pace()
	switch {
	case paced && o.Pacer == nil:
		return []error{errors.New("delivery: option Pacer is required when the destination is paced (destination.rateLimit)")}
	case !paced && o.Pacer != nil:
		return []error{errors.New("delivery: option Pacer is set but the destination has no rateLimit")}
	case paced && !o.Destination.Ordered() && o.Requeue == nil:
		return []error{errors.New("delivery: option Requeue is required when a standard lane is paced (destination.rateLimit): a deferred message is sent again as a fresh copy")}
	case pauses && (o.Lane == nil || o.Requeue == nil):
		return []error{errors.New("delivery: options Lane and Requeue are required when the destination pauses (destination.pause)")}
	case !pauses && o.Lane != nil:
		return []error{errors.New("delivery: option Lane is set but the destination has no pause settings")}
	}
	return nil
}

// attempts tallies a batch's attempts as they end.
type attempts struct {
	mu sync.Mutex
	t  pausing.Tally
}

func (a *attempts) add(o pausing.Outcome) {
	if o == pausing.NotCounted {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t.Add(o == pausing.Succeeded)
}

func (a *attempts) get() pausing.Tally {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.t
}

// lanePaused reports whether the lane is paused. When its state cannot be
// read, the batch is delivered: a pause only ever saves attempts.
func (h *Handler) lanePaused(ctx context.Context) bool {
	if h.lane == nil {
		return false
	}
	rctx, cancel := context.WithTimeout(ctx, h.timeouts.LaneRead)
	defer cancel()
	paused, err := h.lane.Paused(rctx)
	if err != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_unread", "reason", "the batch is delivered", "error", err.Error())
		return false
	}
	return paused
}

// MaxHoldDelay is SQS's longest DelaySeconds: a held message's copy waits
// at most this long before it can be received.
const MaxHoldDelay = 15 * time.Minute

// requeueHeld answers a batch a standard lane received while paused (its event source
// mapping winding down after the pause, or turned on behind the lane's
// back): nothing is sent. Such a receive is no attempt, but SQS counts it
// toward the message's maxReceiveCount, so a message only hidden until the
// next probe would lose one attempt of its schedule per hold. Instead each
// message is sent to the queue again as a fresh copy (same body and
// attributes, no receives yet) carrying the attempts it had made
// (message.AttrAttempted), delayed by Options.HoldFor, and the original is
// acknowledged: the copy goes on with the rest of its schedule, however
// often it is held. Should the copy fail, the message is hidden for
// HoldFor, spending that receive.
func (h *Handler) requeueHeld(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	started := h.now()
	// Each record on its own, at once: a batch's copies take one send's
	// time, not ten.
	fates := make([]holdFate, len(ev.Records))
	var wg sync.WaitGroup
	for i := range ev.Records {
		wg.Go(func() { fates[i] = h.holdOne(ctx, started, &ev.Records[i]) })
	}
	wg.Wait()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	count := map[holdFate]int{}
	for i, f := range fates {
		count[f]++
		if f != requeued {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	h.log.InfoContext(ctx, LogMessage, "outcome", "held", "reason", "the lane is paused", "held", count[hidden], "requeued", count[requeued], "spent", count[spent],
		"retry_in_s", visibilitySeconds(h.lane.holdFor))
	return resp
}

// holdFate is what a hold did with one message.
type holdFate int

const (
	requeued holdFate = iota // a copy carries it: acknowledged
	hidden                   // hidden for HoldFor, spending this receive
	spent                    // a copy past its last attempt: released for the DLQ
)

func (h *Handler) holdOne(ctx context.Context, started time.Time, rec *events.SQSMessage) holdFate {
	msg, perr := ParseMessage(*rec)
	switch {
	case perr == nil && msg.Carried > 0 && msg.Attempt > h.policy.Attempts():
		// Its attempts were made: on its way to the DLQ, as in delivery.
		h.changeVisibility(ctx, started, rec, 0)
		return spent
	case perr == nil:
		err := h.requeueCopy(ctx, rec, requeue{attempted: msg.Attempt - 1, paced: msg.Paced, delay: min(h.lane.holdFor, MaxHoldDelay),
			why: "held while the lane is paused; the copy keeps the rest of the schedule"})
		if err == nil {
			return requeued
		}
		h.log.ErrorContext(ctx, LogMessage, "outcome", "requeue_failed", "reason", "the message is hidden instead, spending this receive of its schedule",
			"message_id", rec.MessageId, "error", err.Error())
	}
	// A malformed message is hidden too: it fails on every receive until
	// the DLQ takes it.
	h.changeVisibility(ctx, started, rec, h.lane.holdFor)
	return hidden
}

// requeue is a fresh copy of a message: the attempts the event's message
// made so far, how often the rate limit deferred it, how long the copy
// waits (at most MaxHoldDelay) and why, for the log.
type requeue struct {
	attempted, paced int
	delay            time.Duration
	why              string
}

// requeueCopy sends a message's body and attributes to the queue as a new
// message, delayed by r.delay, carrying r.attempted and r.paced.
func (h *Handler) requeueCopy(ctx context.Context, rec *events.SQSMessage, r requeue) error {
	attrs := sqsattr.FromLambda(rec.MessageAttributes)
	delete(attrs, message.AttrAttempted)
	delete(attrs, message.AttrPaced)
	if r.attempted > 0 {
		attrs[message.AttrAttempted] = message.Attribute{Type: message.TypeString, Value: FormatAttempted(r.attempted, h.now())}
	}
	if r.paced > 0 {
		attrs[message.AttrPaced] = message.Attribute{Type: message.TypeString, Value: strconv.Itoa(min(r.paced, message.MaxPaced))}
	}
	sqsAttrs, err := sqsattr.ToSQS(attrs)
	if err != nil {
		return fmt.Errorf("send a fresh copy of %s: %w", rec.MessageId, err)
	}
	sctx, cancel := context.WithTimeout(ctx, h.timeouts.Requeue)
	defer cancel()
	body := rec.Body
	out, err := h.requeue.SendMessage(sctx, &sqs.SendMessageInput{QueueUrl: &h.queue.url, MessageBody: &body, MessageAttributes: sqsAttrs,
		DelaySeconds: visibilitySeconds(min(r.delay, MaxHoldDelay))})
	if err != nil {
		return fmt.Errorf("send a fresh copy of %s: %w", rec.MessageId, err)
	}
	attrsLog := []any{"outcome", "requeued", "reason", r.why, "message_id", rec.MessageId, "copy_message_id", aws.ToString(out.MessageId),
		"attempted", r.attempted, "delay_s", visibilitySeconds(min(r.delay, MaxHoldDelay))}
	if r.paced > 0 {
		attrsLog = append(attrsLog, "paced", r.paced)
	}
	h.log.InfoContext(ctx, LogMessage, attrsLog...)
	return nil
}

// observe counts a batch's attempts on the lane, which may pause it.
func (h *Handler) observe(ctx context.Context, t pausing.Tally) {
	if h.lane == nil || t.Attempts == 0 {
		return
	}
	budget := h.timeouts.Lane
	if deadline, ok := ctx.Deadline(); ok {
		budget = min(budget, time.Until(deadline)-500*time.Millisecond)
	}
	if budget < MinLaneTime {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_not_counted", "reason", "no time left in the invocation", "attempts", t.Attempts, "failures", t.Failures)
		return
	}
	lctx, cancel := context.WithTimeout(ctx, budget)
	defer cancel()
	c, err := h.lane.Observe(lctx, t)
	if err != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_not_counted", "attempts", t.Attempts, "failures", t.Failures, "error", err.Error())
	}
	h.laneChanged(ctx, c)
}

// laneChanged logs a change of the lane's mode and records its metrics.
func (h *Handler) laneChanged(ctx context.Context, c pausing.Change) {
	if c.NotPaused != "" {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_not_paused", "reason", c.NotPaused)
	}
	switch c.Kind {
	case pausing.Pausing:
		h.metrics.add(metrics.LanePaused, metrics.Count, 1)
		h.count(metrics.LanePauses)
		attrs := []any{"outcome", "lane_paused", "reason", c.Reason, "by", string(c.By), "resume_by", c.ResumeBy.UTC().Format(time.RFC3339)}
		if c.SwitchErr != nil {
			attrs = append(attrs, "error", "the event source mapping stays on until the next probe tick: "+c.SwitchErr.Error())
		}
		h.log.WarnContext(ctx, LogMessage, attrs...)
	case pausing.Resuming:
		h.metrics.add(metrics.LanePaused, metrics.Count, 0)
		h.count(metrics.LaneResumes)
		h.log.InfoContext(ctx, LogMessage, "outcome", "lane_resumed", "reason", c.Reason, "by", string(c.By), "paused_s", int64(c.PausedFor.Seconds()))
	}
}
