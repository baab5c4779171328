package delivery

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/lane"
	"github.com/hookfan/hookfan/shared/metrics"
)

// Lane is the lane's pause machinery (*lane.Lane): it counts attempts,
// pauses the lane when its rule trips, says whether it is paused, and
// probes it on a schedule.
type Lane interface {
	Observe(ctx context.Context, t lane.Tally) (lane.Change, error)
	Paused(ctx context.Context) (bool, error)
	Tick(ctx context.Context, probe lane.ProbeFunc) (lane.TickResult, error)
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
	switch {
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
	t  lane.Tally
}

func (a *attempts) add(o lane.Outcome) {
	if o == lane.NotCounted {
		return
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t.Add(o == lane.Succeeded)
}

func (a *attempts) get() lane.Tally {
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
	rctx, cancel := context.WithTimeout(ctx, LaneReadTimeout)
	defer cancel()
	paused, err := h.lane.Paused(rctx)
	if err != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_unread", "reason", "the batch is delivered", "error", err.Error())
		return false
	}
	return paused
}

// hold answers a batch received while the lane is paused (its event source
// mapping winding down, or turned on behind the lane's back): nothing is
// sent. Each message is hidden until about the next probe; that receive
// counts toward its maxReceiveCount, so a message at its last receive —
// which SQS would move to the DLQ when it is next received — is sent to
// the queue again as a fresh copy (same body and attributes, no receives
// yet, a full schedule again, as a redrive would give it) and the original
// acknowledged.
func (h *Handler) hold(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	started := h.now()
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	held, requeued := 0, 0
	for i := range ev.Records {
		rec := &ev.Records[i]
		if receives, err := strconv.Atoi(rec.Attributes[sqsReceiveCount]); err == nil && receives >= h.dest.MaxReceiveCount() {
			err := h.requeueCopy(ctx, rec)
			if err == nil {
				requeued++
				continue // acknowledged: the copy carries the event
			}
			h.log.ErrorContext(ctx, LogMessage, "outcome", "requeue_failed", "reason", "the message goes to the DLQ at its next receive; redrive it once the lane resumes",
				"message_id", rec.MessageId, "error", err.Error())
		}
		held++
		h.changeVisibility(ctx, started, rec, h.pause.ProbeEvery)
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: rec.MessageId})
	}
	h.log.InfoContext(ctx, LogMessage, "outcome", "held", "reason", "the lane is paused", "held", held, "requeued", requeued,
		"retry_in_s", visibilitySeconds(h.pause.ProbeEvery))
	return resp
}

// requeueCopy sends a message's body and attributes to the queue as a new
// message.
func (h *Handler) requeueCopy(ctx context.Context, rec *events.SQSMessage) error {
	attrs := make(map[string]sqstypes.MessageAttributeValue, len(rec.MessageAttributes))
	for k, v := range rec.MessageAttributes {
		dt := v.DataType
		attrs[k] = sqstypes.MessageAttributeValue{DataType: &dt, StringValue: v.StringValue, BinaryValue: v.BinaryValue}
	}
	sctx, cancel := context.WithTimeout(ctx, RequeueTimeout)
	defer cancel()
	body := rec.Body
	out, err := h.requeue.SendMessage(sctx, &sqs.SendMessageInput{QueueUrl: &h.queueURL, MessageBody: &body, MessageAttributes: attrs})
	if err != nil {
		return fmt.Errorf("send a fresh copy of %s: %w", rec.MessageId, err)
	}
	copyID := ""
	if out.MessageId != nil {
		copyID = *out.MessageId
	}
	h.log.InfoContext(ctx, LogMessage, "outcome", "requeued", "reason", "last receive while the lane is paused",
		"message_id", rec.MessageId, "copy_message_id", copyID)
	return nil
}

// observe counts a batch's attempts on the lane, which may pause it.
func (h *Handler) observe(ctx context.Context, t lane.Tally) {
	if h.lane == nil || t.Attempts == 0 {
		return
	}
	budget := LaneTimeout
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
func (h *Handler) laneChanged(ctx context.Context, c lane.Change) {
	if c.NotPaused != "" {
		h.log.WarnContext(ctx, LogMessage, "outcome", "lane_not_paused", "reason", c.NotPaused)
	}
	switch c.Kind {
	case lane.Pausing:
		h.metrics.Add(metrics.LanePaused, metrics.Count, 1, h.dim)
		h.count(metrics.LanePauses)
		attrs := []any{"outcome", "lane_paused", "reason", c.Reason, "by", string(c.By), "resume_by", c.ResumeBy.UTC().Format(time.RFC3339)}
		if c.SwitchErr != nil {
			attrs = append(attrs, "error", "the event source mapping stays on until the next probe tick: "+c.SwitchErr.Error())
		}
		h.log.WarnContext(ctx, LogMessage, attrs...)
	case lane.Resuming:
		h.metrics.Add(metrics.LanePaused, metrics.Count, 0, h.dim)
		h.count(metrics.LaneResumes)
		h.log.InfoContext(ctx, LogMessage, "outcome", "lane_resumed", "reason", c.Reason, "by", string(c.By), "paused_s", int64(c.PausedFor.Seconds()))
	}
}
