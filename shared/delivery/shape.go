package delivery

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/transform"
)

// What the lane does to an event's body before its sender gets it: reads
// it from S3 when it was stored there (destination.go), drops it when the
// destination's body filter refuses it, and reshapes it with the
// destination's jq transform.

// shape is the lane's body stages, each nil when the destination has none.
type shape struct {
	payloads   Payloads
	bodyFilter *bodyfilter.Filter
	transform  transformer // the destination's, compiled once
}

// transformer is a compiled transform (*transform.Program).
type transformer interface {
	Apply(ctx context.Context, body []byte) ([]byte, error)
}

// newShape compiles the destination's body filter and transform (bounded
// for memoryMB among concurrency events at once: compileTransform).
func newShape(d config.Destination, payloads Payloads, memoryMB, concurrency int) (shape, error) {
	bf, err := compileBodyFilter(d)
	if err != nil {
		return shape{}, err
	}
	tf, err := compileTransform(d, memoryMB, concurrency)
	if err != nil {
		return shape{}, err
	}
	sh := shape{payloads: payloads, bodyFilter: bf}
	if tf != nil {
		sh.transform = tf
	}
	return sh, nil
}

// compileTransform compiles the destination's transform; nil when it has
// none. Each event's transform may use its share of half the function's
// memory (memoryMB; config.DefaultDeliverMemoryMB when unknown) among the
// events delivered at once: concurrency, or the lane's batch if smaller.
func compileTransform(d config.Destination, memoryMB, concurrency int) (*transform.Program, error) {
	if d.Transform == "" {
		return nil, nil
	}
	if memoryMB <= 0 {
		memoryMB = config.DefaultDeliverMemoryMB
	}
	p, err := transform.Compile(d.Transform, transform.WithBudget(transform.Budget(memoryMB, min(concurrency, d.ReceiveBatch()))))
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: transform %w", d.Name, err)
	}
	return p, nil
}

// reshape applies the destination's transform to the claimed message's
// body: the signature and the POST then carry the transformed bytes, as
// application/json. When it returns !ok, the transform failed on this
// event: the same body fails the same way on every attempt, so the record
// is DEAD at once, with the error, nothing is sent and no retry delay is
// spent: the message is released at once, and SQS's redrive policy moves it
// to the DLQ once its receives pass maxReceiveCount (every DLQ message gets
// there that way, so a DLQ redrive returns it to its queue). Each of those
// receives applies the transform again, so a transform fixed meanwhile
// delivers the event; one that fails again the same way is a pass-through
// (passThrough).
func (h *Handler) reshape(ctx context.Context, p *prepared, lease dedupe.Lease) (stop decision, ok bool) {
	if h.shape.transform == nil {
		return ack, true
	}
	out, err := h.shape.transform.Apply(ctx, p.msg.Body)
	if err == nil {
		p.msg.Body, p.msg.ContentType = out, transform.ContentType
		return ack, true
	}
	if errors.Is(err, transform.ErrInterrupted) {
		// The invocation ended first: the event is not at fault.
		return h.releaseUnsent(ctx, *p, lease, "transform interrupted", err), false
	}
	desc := "transform: " + strings.TrimPrefix(err.Error(), transform.ErrEvent.Error()+": ")
	var te *transform.Error
	if errors.As(err, &te) && te.Detail != "" {
		// gojq's own words may preview the body: DEBUG only.
		p.log.DebugContext(ctx, LogMessage, "outcome", "transform_detail", "detail", te.Detail)
	}
	if kept, same := passThrough(lease, desc); same {
		attrs := []any{"outcome", "spent", "reason", "the destination's transform failed on the event again; passing to the DLQ", "error", desc}
		if ferr := h.finish(ctx, kept, dedupe.Outcome{Status: dedupe.StatusDead, Error: desc, At: h.now()}); ferr != nil {
			attrs = append(attrs, "record_error", ferr.Error())
		}
		p.log.InfoContext(ctx, LogMessage, attrs...)
		return toDLQ(), false
	}
	h.count(metrics.DeliveryFailed)
	h.count(metrics.DeliveryDead)
	attrs := []any{"outcome", "dead", "reason", "the destination's transform failed on the event; released for the DLQ", "error", desc}
	if ferr := h.finish(ctx, lease, dedupe.Outcome{Status: dedupe.StatusDead, Error: desc, At: h.now()}); ferr != nil {
		attrs = append(attrs, "record_error", ferr.Error())
	}
	p.log.WarnContext(ctx, LogMessage, attrs...)
	return toDLQ(), false
}

// passThrough reports whether a transform failure with error desc repeats
// the record's latest attempt: DEAD with the same error, for the same
// replay (a receive of a message on its way to the DLQ, or a copy of it).
// The failure was counted and logged then; the finish that releases the
// lease then rewrites that attempt as it was (kept), so the remaining
// receives do not fill the history with identical DEAD entries and push
// out the earlier ones.
func passThrough(lease dedupe.Lease, desc string) (kept dedupe.Lease, same bool) {
	n := len(lease.History)
	if n == 0 {
		return lease, false
	}
	last := lease.History[n-1]
	if last.Outcome != dedupe.StatusDead || last.Replay != lease.Replay || !sameError(last.Error, desc) {
		return lease, false
	}
	kept = lease
	kept.History = lease.History[:n-1]
	kept.At, kept.ClaimedBy = last.At, last.ClaimedBy
	return kept, true
}

// sameError reports whether a history entry's error (cut to
// dedupe.MaxHistoryErrorLen, at a rune boundary) is desc.
func sameError(stored, desc string) bool {
	if stored == desc {
		return true
	}
	return len(desc) > dedupe.MaxHistoryErrorLen && len(stored) > dedupe.MaxHistoryErrorLen-utf8.UTFMax && strings.HasPrefix(desc, stored)
}

// shapeProbe applies the destination's transform to a probe, as to an
// event, so a destination that accepts only its own format (a chat
// webhook) can answer it; a transform that fails on the probe's body
// (written for one provider's fields) leaves the probe as it is, so the
// lane is still probed.
func (h *Handler) shapeProbe(ctx context.Context, msg Message) Message {
	if h.shape.transform == nil {
		return msg
	}
	if out, err := h.shape.transform.Apply(ctx, msg.Body); err == nil {
		msg.Body, msg.ContentType = out, transform.ContentType
	}
	return msg
}
