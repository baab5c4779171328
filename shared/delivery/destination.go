package delivery

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
)

// Bodies stored in S3, and the destination's body filter.

// Payloads reads bodies stored in S3 (*payload.S3), checking each against
// its reference.
type Payloads interface {
	Get(ctx context.Context, ref payload.Reference) ([]byte, error)
}

// PayloadTimeout bounds reading one stored body (up to 4.5 MB).
const PayloadTimeout = 5 * time.Second

// loadBody reads the body of a message stored in S3. When it returns
// !ok, stop says what happens to the message: a body that cannot be read
// (an S3 outage, an object gone or not matching its reference) is backed
// off like any failure of ours, so it reaches the DLQ after the schedule.
func (h *Handler) loadBody(ctx context.Context, p *prepared) (stop decision, ok bool) {
	if p.msg.Ref == nil {
		return ack, true
	}
	if h.shape.payloads == nil {
		h.count(metrics.DeliveryFailed)
		return h.notAttempted(ctx, *p, "payload unavailable", errors.New("the message refers to a stored body but this function has no payload bucket")), false
	}
	pctx, cancel := context.WithTimeout(ctx, PayloadTimeout)
	defer cancel()
	body, err := h.shape.payloads.Get(pctx, *p.msg.Ref)
	if err != nil {
		h.count(metrics.DeliveryFailed)
		return h.notAttempted(ctx, *p, "payload unavailable", err), false
	}
	p.msg.Body = body
	return ack, true
}

// filtered reports whether the destination's body filter refuses the
// message's body; such a message is acknowledged without a POST or a
// record, counted (DeliveryFiltered) and logged.
func (h *Handler) filtered(ctx context.Context, p prepared) bool {
	if h.shape.bodyFilter == nil {
		return false
	}
	ok, err := h.shape.bodyFilter.Match(p.msg.Body)
	if ok {
		return false
	}
	h.count(metrics.DeliveryFiltered)
	attrs := []any{"outcome", "filtered", "reason", "the body does not match the destination's body filter"}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	p.log.InfoContext(ctx, LogMessage, attrs...)
	return true
}

// compileBodyFilter compiles the destination's body filter; nil when it
// has none.
func compileBodyFilter(d config.Destination) (*bodyfilter.Filter, error) {
	if len(d.Filter.Body) == 0 {
		return nil, nil
	}
	f, err := bodyfilter.Compile(d.Filter.Body)
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: %w", d.Name, err)
	}
	return f, nil
}
