package delivery

import (
	"context"
	"errors"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
)

// queue is the lane's queue: its URL and the client that changes the
// visibility of its records.
type queue struct {
	url string
	api VisibilityAPI
}

// visibilityLimit is the longest a released message may be hidden for now.
// SQS hides a message at most 12 h from its receive and refuses a
// ChangeMessageVisibility past that. The event carries no receive time; the
// event source mapping receives the messages of a batch at most its
// batching window before the invocation starts, plus the invoke call's own
// time (a cold start included), which VisibilityCapMargin covers. So the
// time since the receive is at most the time since the invocation started
// plus the window plus the margin.
func (h *Handler) visibilityLimit(started time.Time) time.Duration {
	return config.MaxVisibility - h.now().Sub(started) - h.dest.BatchWindow() - config.VisibilityCapMargin
}

// pessimisticLimit is the longest a released message may be hidden if the
// event source mapping held it for the queue's whole visibility timeout
// before invoking (it retries a throttled invocation within it; any longer
// and the message would have been received again, leaving this receipt
// handle stale).
func (h *Handler) pessimisticLimit(started time.Time) time.Duration {
	return config.MaxVisibility - h.now().Sub(started) - h.policy.Visibility - config.VisibilityCapMargin
}

// hide cuts a delay to what SQS allows now.
func (h *Handler) hide(started time.Time, d time.Duration) time.Duration {
	return max(min(d, h.visibilityLimit(started)), 0)
}

// changeVisibility hides a released message for d, cut to what SQS allows
// (visibilityLimit). Should SQS refuse the value all the same, it asks once
// more for the largest value under the pessimistic bound. If the call
// fails, the message still comes back, after the queue's default
// visibility timeout.
func (h *Handler) changeVisibility(ctx context.Context, started time.Time, rec *events.SQSMessage, d time.Duration) {
	secs := min(visibilitySeconds(d), wholeSeconds(h.visibilityLimit(started)))
	err := h.setVisibility(ctx, rec, secs)
	if refusedValue(err) && secs > 0 {
		h.log.InfoContext(ctx, LogMessage, "outcome", "visibility_refused", "reason", "past SQS's 12 h limit; asking for less", "message_id", rec.MessageId, "visibility_s", secs)
		secs = min(secs, wholeSeconds(h.pessimisticLimit(started)))
		err = h.setVisibility(ctx, rec, secs)
	}
	if err != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "visibility_not_changed", "reason", "the message returns after the queue's default visibility timeout",
			"message_id", rec.MessageId, "visibility_s", secs, "error", err.Error())
	}
}

func (h *Handler) setVisibility(ctx context.Context, rec *events.SQSMessage, secs int32) error {
	vctx, cancel := context.WithTimeout(ctx, h.timeouts.Visibility)
	defer cancel()
	_, err := h.queue.api.ChangeMessageVisibility(vctx, &sqs.ChangeMessageVisibilityInput{
		QueueUrl: &h.queue.url, ReceiptHandle: &rec.ReceiptHandle, VisibilityTimeout: secs,
	})
	return err
}

// refusedValue reports whether SQS refused a ChangeMessageVisibility for its
// value: the error code SQS sends when the total visibility would pass 12 h
// from the receive.
func refusedValue(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == errCodeInvalidParameterValue
}

// errCodeInvalidParameterValue is the SQS error code of a refused value; the
// SDK has no type of its own for it.
const errCodeInvalidParameterValue = "InvalidParameterValue"
