package delivery

import (
	"context"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/metrics"
)

// Pacer is a paced lane's rate limit (*pacing.Pacer): Take before each
// request, Observe after it.
type Pacer interface {
	// Take returns the time a token was charged at when a request may go
	// (a token is spent), or how long until one is due.
	Take(ctx context.Context) (at time.Time, wait time.Duration, err error)
	// Observe tells an adaptive lane how a request went.
	Observe(ctx context.Context, status int, retryAfter bool) (bool, error)
	// Effective is the lane's rate in force, in requests a second.
	Effective() float64
}

// Pacing decisions (docs/decisions.md#pacing-in-the-pipeline).
const (
	// MaxPaceWait is the longest a standard lane waits in the function for
	// a token; a longer wait re-queues a fresh copy of the message, delayed
	// until the token is due, which costs no receive.
	MaxPaceWait = time.Second
	// PaceUnavailableBackoff is how long a message waits when the bucket
	// cannot be read: it is not attempted, and never sent unpaced.
	PaceUnavailableBackoff = 5 * time.Second
	// PaceTimeout bounds one take from the bucket.
	PaceTimeout = 2 * time.Second
	// PaceAlign is how long after its token a paced request is sent when
	// its claim took less (alignToToken): above DynamoDB's usual claim
	// latency, so that the claim's jitter does not bunch requests.
	PaceAlign = 100 * time.Millisecond
)

// pace takes a token for a prepared record before its claim: a deferral
// holds no lease and writes no record. It waits in the function while
// the invocation can spare the wait (at most MaxPaceWait on a standard
// lane, which can defer for free; as long as it can on an ordered lane,
// whose deferral holds its key), and otherwise defers the message by the
// lane's ordering. When it returns !ok, stop says what happens to the
// message.
func (h *Handler) pace(ctx context.Context, p prepared) (tokenAt time.Time, stop decision, ok bool) {
	tokenAt, held, stop, ok := h.takeToken(ctx, p)
	if held > 0 {
		h.count(metrics.DeliveryPaced)
		return time.Time{}, h.order.deferPaced(ctx, h, p, held), false
	}
	return tokenAt, stop, ok
}

// takeToken takes a token for p (on a batched lane: for a batch p leads),
// waiting in the function as pace describes. When it returns !ok, held is
// how long the rate limit holds the message back (to defer it by the
// lane's ordering), or, when 0, stop says what happens to the message.
func (h *Handler) takeToken(ctx context.Context, p prepared) (tokenAt time.Time, held time.Duration, stop decision, ok bool) {
	if h.pacer == nil {
		return time.Time{}, 0, ack, true
	}
	for {
		// The send is aligned to the time the bucket charged the token at,
		// not to the take's answer.
		tctx, cancel := context.WithTimeout(ctx, h.timeouts.Pace)
		at, wait, err := h.pacer.Take(tctx)
		cancel()
		if err != nil {
			wait := h.hide(p.started, PaceUnavailableBackoff)
			p.log.ErrorContext(ctx, LogMessage, "outcome", "not_attempted", "reason", "the lane's rate limit could not be read; never sent unpaced",
				"error", err.Error(), "retry_in_s", visibilitySeconds(wait))
			return time.Time{}, 0, retryIn(wait), false
		}
		if wait <= 0 {
			return at, 0, ack, true
		}
		if wait > h.paceSpare(ctx, h.order.paceWaitLimit()) {
			return time.Time{}, wait, ack, false
		}
		if err := h.sleep(ctx, wait); err != nil {
			p.log.WarnContext(ctx, LogMessage, "outcome", "released", "reason", "the invocation ended while waiting for the rate limit")
			return time.Time{}, 0, retryIn(0), false
		}
	}
}

// alignToToken holds a paced request until PaceAlign after its token was
// taken, and returns the POST's timeout less that wait. The token is
// taken before the claim, whose time varies from one record to the next:
// sent at once, two requests whose tokens were an interval apart could
// reach the destination closer together than the rate allows. Sent a
// fixed time after its token, each request keeps its token's spacing.
// When the claim outlasted PaceAlign the token is stale: a fresh one is
// taken (the stale one is forfeited, which only slows the lane) and the
// request is sent PaceAlign after it. When no fresh token fits what the
// POST's budget leaves, or the bucket cannot be read, the request must
// not go: ok is false and stop says what becomes of the message, the
// lease given back uncounted (unpaced), so that waiting spends no attempt.
func (h *Handler) alignToToken(ctx context.Context, p prepared, lease dedupe.Lease, tokenAt time.Time, send time.Duration) (time.Duration, decision, bool) {
	send, held, ok, err := h.align(ctx, p, tokenAt, send)
	if !ok {
		return 0, h.unpaced(ctx, p, lease, held, err), false
	}
	return send, ack, true
}

// align is alignToToken but for the lease: when the request must not go
// (!ok), held is how long until a token is due (0 when none was learnt)
// and err why the bucket could not be read, or the invocation's end (a
// batched lane gives back each of its batch's leases: batch.go).
func (h *Handler) align(ctx context.Context, p prepared, tokenAt time.Time, send time.Duration) (_, held time.Duration, ok bool, err error) {
	if tokenAt.IsZero() {
		return send, 0, true, nil
	}
	for {
		d := tokenAt.Add(h.timeouts.PaceAlign).Sub(h.now())
		if d >= 0 {
			if send-d < MinSendTime {
				return 0, d, false, nil
			}
			if h.sleep(ctx, d) != nil {
				return 0, 0, false, ctx.Err()
			}
			// The allowance first, then the clock: the check must read the
			// time the request leaves at, after anything it waits for.
			allowed := h.paceLate()
			if late := h.now().Sub(tokenAt.Add(h.timeouts.PaceAlign)); late > allowed {
				// The function woke late (a stalled process, a busy
				// machine): requests whose tokens were an interval apart
				// would leave together. The token is stale: take again.
				p.log.DebugContext(ctx, LogMessage, "outcome", "token_renewed", "reason", "the send woke late for its token", "late_ms", late.Milliseconds())
				send -= d
				continue
			}
			return send - d, 0, true, nil
		}
		tctx, cancel := context.WithTimeout(ctx, h.timeouts.Pace)
		at, wait, err := h.pacer.Take(tctx)
		cancel()
		if err != nil {
			return 0, 0, false, err
		}
		if send-wait-h.timeouts.PaceAlign < MinSendTime {
			return 0, wait, false, nil
		}
		if wait > 0 {
			if h.sleep(ctx, wait) != nil {
				return 0, 0, false, ctx.Err()
			}
			send -= wait
			continue // take again
		}
		p.log.DebugContext(ctx, LogMessage, "outcome", "token_renewed", "reason", "the claim outlasted the token's alignment")
		tokenAt = at
	}
}

// paceLate is how late after its aligned time a paced request may still
// go on its token: half an interval at the rate in force. Each request
// then leaves within half an interval of its token's time, which the
// bucket's one-token margin covers (withMargin); a later one takes a
// fresh token.
func (h *Handler) paceLate() time.Duration {
	r := h.pacer.Effective()
	if r <= 0 {
		return 0
	}
	return time.Duration(float64(time.Second) / r / 2)
}

// unpaced gives back the lease of a claimed record the rate limit holds
// back after its claim (alignToToken), uncounted: the record reads as the
// claim found it and the next claim makes the same attempt. Then the
// message goes as pace sends one it holds back before its claim: deferred
// until the token is due when wait > 0, backed off unattempted when the
// bucket could not be read (err), released at once when the invocation
// ended. A lease that cannot be given back ends on its own; the claim's
// attempt then counts.
func (h *Handler) unpaced(ctx context.Context, p prepared, lease dedupe.Lease, wait time.Duration, err error) decision {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeouts.Finish)
	rerr := h.store.Release(rctx, lease)
	cancel()
	if rerr != nil {
		p.log.WarnContext(ctx, LogMessage, "outcome", "lease_not_released", "reason", "the lease ends on its own and the claim counts as an attempt", "error", rerr.Error())
	}
	switch {
	case ctx.Err() != nil:
		p.log.WarnContext(ctx, LogMessage, "outcome", "released", "reason", "the invocation ended while waiting for the rate limit")
		return retryIn(0)
	case err != nil:
		wait := h.hide(p.started, PaceUnavailableBackoff)
		p.log.ErrorContext(ctx, LogMessage, "outcome", "not_attempted", "reason", "the lane's rate limit could not be read; never sent unpaced",
			"error", err.Error(), "retry_in_s", visibilitySeconds(wait))
		return retryIn(wait)
	}
	h.count(metrics.DeliveryPaced)
	return h.order.deferPaced(ctx, h, p, wait)
}

// paceSpare is how long a record may wait in the function for a token:
// at most limit, and only what leaves the attempt its whole timeout and
// the calls around it before the function's deadline.
func (h *Handler) paceSpare(ctx context.Context, limit time.Duration) time.Duration {
	deadline, ok := ctx.Deadline()
	if !ok {
		return limit
	}
	left := deadline.Sub(h.now()) - h.timeouts.Claim - h.dest.Timeout() - h.timeouts.recordReserve() - h.timeouts.Visibility
	return min(limit, left)
}

// sleepCtx waits d, or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deferPacedCopy defers a standard lane's message the rate limit holds
// back as a paused lane holds one: a fresh copy, delayed until the token
// is due (at most MaxHoldDelay), carrying the attempts made unchanged and
// the count of deferrals plus one (message.AttrPaced), and the original
// acknowledged. It spends no receive and no attempt and counts nothing
// towards pausing. Should the copy fail, the message is hidden for the
// wait instead, spending this receive.
func (h *Handler) deferPacedCopy(ctx context.Context, p prepared, wait time.Duration) decision {
	err := h.requeueCopy(ctx, p.rec, requeue{attempted: p.msg.Attempt - 1, paced: p.msg.Paced + 1, delay: min(wait, MaxHoldDelay),
		why: "held back by the lane's rate limit; the copy comes back when a token is due"})
	if err == nil {
		return ack
	}
	p.log.ErrorContext(ctx, LogMessage, "outcome", "requeue_failed", "reason", "the message is hidden until a token is due instead, spending this receive",
		"error", err.Error(), "retry_in_s", visibilitySeconds(wait))
	return retryIn(wait)
}

// deferPacedInPlace defers an ordered lane's message the rate limit holds
// back: hidden in place, since a copy would join the back of its key.
// The key's later records of the batch wait behind it (deliverOrdered).
// Each hold spends a receive; the hold is stretched once the message's
// receives run low (pacedHold), so pacing alone never takes it to the DLQ.
func (h *Handler) deferPacedInPlace(ctx context.Context, p prepared, wait time.Duration) decision {
	hold := h.pacedHold(p.msg, wait)
	p.log.InfoContext(ctx, LogMessage, "outcome", "paced", "reason", "held back by the lane's rate limit; hidden in place to keep its key's order",
		"retry_in_s", visibilitySeconds(hold))
	d := retryIn(hold)
	d.paced = true
	return d
}

// pacedHold is how long an ordered lane's message is hidden when its rate
// limit holds it (or an earlier event of its key) back: the wait, while
// the receives its lane keeps for pacing (config.Destination.PacingRoom)
// are more than half left; past that, at least the queue's retention
// left shared out over the receives left, so that the holds alone cannot
// spend them before the queue would drop the message anyway
// (docs/decisions.md#paced-ordered-lanes).
func (h *Handler) pacedHold(msg Message, wait time.Duration) time.Duration {
	room := h.dest.PacingRoom()
	if room <= 0 {
		return wait
	}
	left := room - msg.Attempt // receives left for holds beyond the attempts' own
	if left > room/2 {
		return wait
	}
	at := msg.SentAt
	if at.IsZero() {
		at = msg.ReceivedAt
	}
	retention := h.dest.Retention() - h.now().Sub(at)
	return max(wait, retention/time.Duration(max(left, 1)))
}

// observePace tells an adaptive lane how an attempt went: a 429 (or a 503
// with Retry-After) slows the whole lane, a success speeds it up again.
// A failed write is logged; the attempt's outcome stands.
func (h *Handler) observePace(ctx context.Context, p prepared, res sender.Result) {
	if h.pacer == nil || res.Unsent || res.Err != nil {
		return
	}
	octx, cancel := context.WithTimeout(ctx, h.timeouts.Pace)
	defer cancel()
	if _, err := h.pacer.Observe(octx, res.Status, res.RetryAfter > 0); err != nil {
		p.log.WarnContext(ctx, LogMessage, "outcome", "pace_not_adjusted", "error", err.Error())
	}
}
