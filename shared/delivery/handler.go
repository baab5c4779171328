// Package delivery is the deliver function's pipeline: for each SQS record
// of a batch it claims the event in the delivery record, hands it to the
// lane's sender (sender/https signs it per Standard Webhooks and POSTs it;
// an AWS target's sender calls its API), records the outcome, and on
// failure backs off with ChangeMessageVisibility before reporting the
// record in the batch response. The pipeline is the policy — claim, send,
// record, the retry schedule, the pause, the lane's ordering — and the
// sender the mechanism of one attempt.
package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// Store is the delivery record (dedupe.DynamoDB, or dedupe.Memory locally).
type Store interface {
	Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error)
	Finish(ctx context.Context, lease dedupe.Lease, out dedupe.Outcome) error
	Release(ctx context.Context, lease dedupe.Lease) error
}

// VisibilityAPI is the part of the SQS client the handler uses.
type VisibilityAPI interface {
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Metrics records metric points and publishes them once per invocation
// (*metrics.Recorder).
type Metrics interface {
	Add(name string, unit metrics.Unit, value float64, dims ...metrics.Dimension)
	Flush(ctx context.Context) error
}

// Timing and sizing decisions (docs/decisions.md#delivery).
const (
	// DefaultConcurrency delivers a whole batch at once.
	DefaultConcurrency = config.MaxBatchSize
	// ClaimTimeout bounds the claim's conditional write, the SDK's retries
	// included; the lease covers it.
	ClaimTimeout = 2 * time.Second
	// FinishTimeout bounds the write of an attempt's outcome.
	FinishTimeout = 4 * time.Second
	// RecordReserve is kept between the POST's deadline and the end of the
	// lease for the outcome's write: a write that succeeds within its
	// timeout lands while the lease still holds, so no other deliverer can
	// claim the event before its outcome is recorded.
	RecordReserve = FinishTimeout + time.Second
	// VisibilityCallTimeout bounds each ChangeMessageVisibility call; the
	// lease ends this long before the function's deadline, so the release
	// fits after it.
	VisibilityCallTimeout = 2 * time.Second
	// MinSendTime is the least time worth attempting a POST with; with less
	// left, the record is released untouched for a fresh invocation.
	MinSendTime = time.Second
	// InFlightMargin is added to another deliverer's lease before the
	// message is seen again.
	InFlightMargin = time.Second
)

// Handler delivers SQS batches for one destination. It is safe for
// concurrent use; build it once per process.
type Handler struct {
	dest        config.Destination
	policy      RetryPolicy
	order       ordering      // standard or ordered, chosen at assembly (ordered.go)
	sender      sender.Sender // what reaches the destination
	shape       shape         // what the lane does to a body before its send (shape.go)
	store       Store
	ttl         time.Duration
	queue       queue // the lane's queue (visibility.go)
	lane        *lane // the pause machinery; nil when the destination does not pause (pause.go)
	pacer       Pacer // the lane's rate limit; nil when it is not paced (pace.go)
	requeue     RequeueAPI
	sleep       func(ctx context.Context, d time.Duration) error
	metrics     meter // the lane's metrics (lanemetrics.go)
	log         *slog.Logger
	timeouts    CallTimeouts
	concurrency int
	// shapeSlots bounds the transforms a batched lane runs at once to
	// concurrency (batch.go).
	shapeSlots chan struct{}
	now        func() time.Time
	random     func() float64
}

// Handle delivers the records of a batch concurrently and returns the ones
// that must come back (failed, backed off, malformed or in flight
// elsewhere). It never returns an error: an error would fail the whole
// batch, delivered records included.
func (h *Handler) Handle(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
	if h.lanePaused(ctx) {
		return h.order.hold(ctx, h, ev), nil
	}
	failed := make([]bool, len(ev.Records))
	parsed := make([]parsedRecord, len(ev.Records))
	for i := range ev.Records {
		parsed[i].msg, parsed[i].err = ParseMessage(ev.Records[i])
		parsed[i].rec = &ev.Records[i]
	}
	var tally attempts
	// SQS counts a message's 12 h visibility ceiling from its receive, which
	// came before this invocation started (see visibilityLimit).
	started := h.now()
	h.order.deliver(ctx, h, started, ev, parsed, failed, &tally)
	h.observe(ctx, tally.get())
	if h.pacer != nil {
		h.metrics.add(metrics.LaneEffectiveRate, metrics.CountPerSecond, h.pacer.Effective())
	}
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for i, f := range failed {
		if f {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		}
	}
	if err := h.metrics.m.Flush(ctx); err != nil {
		h.log.WarnContext(ctx, LogMessage, "outcome", "metrics_not_published", "error", err.Error())
	}
	return resp, nil
}

// deliverAll delivers a batch of a standard lane, every record at once
// (up to the handler's concurrency).
func (h *Handler) deliverAll(ctx context.Context, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	carrier := copiesInBatch(parsed, false)
	sem := make(chan struct{}, h.concurrency)
	var wg sync.WaitGroup
	for i := range ev.Records {
		if c := carrier[i]; c != i {
			h.copyInBatch(ctx, parsed[i].msg, parsed[c].msg)
			continue // acknowledged: the carrier's outcome is the event's
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			failed[i] = h.process(ctx, started, &ev.Records[i], parsed[i], tally).release
		})
	}
	wg.Wait()
}

// parsedRecord is a record's message, or why it is not one.
type parsedRecord struct {
	msg Message
	err error
	rec *events.SQSMessage // as received
}

// copiesInBatch finds the records of a batch that carry the same event
// (the same id and, for an operator's replay, the same replay; SNS and
// providers deliver at least once, so two copies can land in one batch).
// For each record it returns the index of the record that is attempted
// for its event: its own index, or, for a copy, the copy with the fewest
// receives (the most attempts left; the first of those in batch order).
// With firstInOrder (an ordered lane, which numbers attempts by its
// record, not by receives) it is the first copy in batch order: a later
// copy sits behind events of its key accepted after the first, and
// carrying the event there would send it after them. Malformed records
// are always their own.
func copiesInBatch(recs []parsedRecord, firstInOrder bool) []int {
	carrier := make([]int, len(recs))
	first := make(map[string]int, len(recs))
	key := func(m Message) string { return m.ID + "\x00" + m.Replay }
	for i, r := range recs {
		carrier[i] = i
		if r.err != nil {
			continue
		}
		j, seen := first[key(r.msg)]
		switch {
		case !seen:
			first[key(r.msg)] = i
		case !firstInOrder && r.msg.Attempt < recs[j].msg.Attempt:
			first[key(r.msg)] = i
		}
	}
	for i, r := range recs {
		if r.err == nil {
			carrier[i] = first[key(r.msg)]
		}
	}
	return carrier
}

// copyInBatch acknowledges a copy of an event another record of the batch
// carries. Nothing is lost: the carrier stays in the queue until its own
// attempt succeeds or ends the event, and a crash before the batch's answer
// returns every record.
func (h *Handler) copyInBatch(ctx context.Context, msg, carrier Message) {
	h.count(metrics.DeliveryDuplicate)
	h.log.InfoContext(ctx, LogMessage, "outcome", "duplicate", "reason", "another copy in this batch is attempted",
		"id", msg.ID, "message_id", msg.MessageID, "attempt", msg.Attempt, "carrier_message_id", carrier.MessageID)
}

// LogMessage is the message of every line the deliver function logs; the
// "outcome" attribute says what happened (as ingest's lines do).
const LogMessage = "deliver"

// process delivers one record and says what happens to its message (its
// release reports it failed). A panic fails the record alone.
func (h *Handler) process(ctx context.Context, started time.Time, rec *events.SQSMessage, p parsedRecord, tally *attempts) (d decision) {
	defer func() {
		if p := recover(); p != nil {
			h.log.ErrorContext(ctx, LogMessage, "outcome", "panicked", "message_id", rec.MessageId, "panic", fmt.Sprint(p))
			d = decision{release: true}
		}
	}()
	d = h.deliver(ctx, started, p)
	tally.add(d.counted)
	if d.release {
		h.changeVisibility(ctx, started, rec, d.visibility)
	}
	return d
}

// decision is what happens to a record's message.
type decision struct {
	release    bool          // report the item failed
	visibility time.Duration // and show it again after this long
	// dead: the event is given up (its attempts spent, it failed for
	// good, or the message is malformed) and released only for SQS's
	// redrive to take it to the DLQ. On an ordered lane it holds no later
	// event of its key back (ordered.go).
	dead bool
	// counted is what the attempt counts for the lane's pause rule: only
	// attempts that reached the destination or failed to.
	counted pausing.Outcome
	// paced: the lane's rate limit held the message back, unattempted
	// (an ordered lane holds its key's later records behind it as long).
	paced bool
}

var ack = decision{}

func retryIn(d time.Duration) decision { return decision{release: true, visibility: d} }

// toDLQ releases a given-up message at once: SQS's redrive moves it to
// the DLQ once its receives pass maxReceiveCount (every DLQ message gets
// there that way, so a DLQ redrive returns it to its queue).
func toDLQ() decision { return decision{release: true, dead: true} }

// deliver runs prepare → pace → claim → send → record for one record.
func (h *Handler) deliver(ctx context.Context, started time.Time, rec parsedRecord) decision {
	p, stop, ok := h.prepare(ctx, started, rec)
	if !ok {
		return stop
	}
	tokenAt, stop, ok := h.pace(ctx, p)
	if !ok {
		return stop
	}
	if stop, ok := h.schedule(ctx, &p); !ok {
		return stop
	}
	lease, sendTimeout, stop, ok := h.claim(ctx, p)
	if !ok {
		return stop
	}
	unclaimed := p // as the claim found it, should the rate limit hold it back after all
	p.msg.Attempt = h.order.attemptOf(p.msg, lease)
	if stop, ok := h.order.spent(ctx, h, p, lease); ok {
		return stop
	}
	sendBy := h.now().Add(sendTimeout) // the lease's deadline for the POST
	if stop, ok := h.reshape(ctx, &p, lease); !ok {
		return stop
	}
	if sendTimeout, stop, ok = h.sendLeft(ctx, p, lease, sendBy, sendTimeout); !ok {
		return stop
	}
	if sendTimeout, stop, ok = h.alignToToken(ctx, unclaimed, lease, tokenAt, sendTimeout); !ok {
		return stop
	}
	res := h.sender.Send(ctx, p.msg.delivery(sendTimeout))
	h.count(metrics.DeliveryAttempts)
	if !res.Unsent {
		h.metrics.add(metrics.DeliveryLatency, metrics.Milliseconds, float64(res.Latency.Milliseconds()))
	}
	h.observePace(ctx, p, res)
	return h.record(ctx, p, lease, res)
}

// prepared is a record ready to be claimed and sent.
type prepared struct {
	msg     Message
	rec     *events.SQSMessage // as received
	log     *slog.Logger
	started time.Time // the invocation's start
	now     time.Time // the claim's time
	// send is the longest the POST may take; leaseUntil covers the claim,
	// the POST and the outcome's write.
	send       time.Duration
	leaseUntil time.Time
	// batch is the webhook-id of the batch the event is sent in, on a
	// batched lane (batch.go).
	batch string
}

// prepare parses the record, readies the sender and gets the time the
// attempt may take. When it returns !ok, stop says what happens to the message.
func (h *Handler) prepare(ctx context.Context, started time.Time, rec parsedRecord) (p prepared, stop decision, ok bool) {
	msg, err := rec.msg, rec.err
	p.started = started
	if err != nil {
		h.count(metrics.DeliveryFailed)
		h.log.WarnContext(ctx, LogMessage, "message_id", msg.MessageID, "outcome", "malformed",
			"attempt", msg.Attempt, "error", err.Error())
		return p, toDLQ(), false
	}
	p.msg, p.rec = msg, rec.rec
	p.log = h.log.With("id", msg.ID, "source", msg.Source, "type", msg.Type, "attempt", msg.Attempt, "message_id", msg.MessageID)
	if msg.Replay != "" {
		p.log = p.log.With("replay", msg.Replay)
	}
	if msg.Carried > 0 && msg.Attempt > h.policy.Attempts() {
		// A copy a paused lane sent, which carried its earlier attempts,
		// made its last one; SQS counts only the copy's receives and moves
		// it to the DLQ once they reach maxReceiveCount. Until then each
		// receive is released at once, unsent.
		p.log.InfoContext(ctx, LogMessage, "outcome", "spent", "reason", "its last attempt was made; released for the DLQ", "carried", msg.Carried)
		return p, toDLQ(), false
	}
	if stop, ok := h.loadBody(ctx, &p); !ok {
		return p, stop, false
	}
	if h.filtered(ctx, p) {
		return p, ack, false
	}
	if err = h.sender.Prepare(ctx); err != nil {
		h.count(metrics.DeliveryFailed)
		reason, cause := "sender not ready", err
		var nr *sender.NotReadyError
		if errors.As(err, &nr) {
			reason, cause = nr.Reason, nr.Err
		}
		return p, h.notAttempted(ctx, p, reason, cause), false
	}
	return p, ack, true
}

// schedule gets the time the attempt may take, from now.
func (h *Handler) schedule(ctx context.Context, p *prepared) (stop decision, ok bool) {
	p.now = h.now()
	if p.send, p.leaseUntil, ok = h.budget(ctx, p.now); !ok {
		p.log.WarnContext(ctx, LogMessage, "outcome", "released", "reason", "no time left to attempt")
		return retryIn(0), false
	}
	return ack, true
}

// claim takes the event's lease, within ClaimTimeout, and returns how long
// the POST may take: its budget, cut so that it ends RecordReserve before
// the lease does, counted from when the claim returned. When it returns
// !ok, stop says what happens to the message: acknowledged as a duplicate,
// or backed off.
func (h *Handler) claim(ctx context.Context, p prepared) (lease dedupe.Lease, send time.Duration, stop decision, ok bool) {
	cctx, cancel := context.WithTimeout(ctx, h.timeouts.Claim)
	lease, err := h.store.Claim(cctx, dedupe.ClaimInput{
		PK: dedupe.Key(h.dest.Name, p.msg.ID), Source: p.msg.Source, Type: p.msg.Type,
		Now: p.now, LeaseUntil: p.leaseUntil, ExpiresAt: p.now.Add(h.ttl),
		Replay: p.msg.Replay, ClaimedBy: claimedBy(ctx),
	})
	cancel()
	var refused *dedupe.RefusedError
	switch {
	case err == nil:
		p.msg.Attempt = h.order.attemptOf(p.msg, lease)
		send = min(p.send, lease.Until.Sub(h.now())-h.timeouts.recordReserve())
		if send < MinSendTime {
			err := fmt.Errorf("the claim took %s; too little of the lease is left for a POST", h.now().Sub(p.now).Round(time.Millisecond))
			return lease, 0, h.releaseUnsent(ctx, p, lease, "delivery record slow", err), false
		}
		return lease, send, ack, true
	case errors.As(err, &refused) && refused.Replay != "":
		// A copy of a replayed message whose replay already ended.
		h.count(metrics.DeliveryDuplicate)
		p.log.InfoContext(ctx, LogMessage, "outcome", "duplicate", "reason", "this replay already delivered the event")
		return lease, 0, ack, false
	case errors.Is(err, dedupe.ErrDuplicate):
		h.count(metrics.DeliveryDuplicate)
		p.log.InfoContext(ctx, LogMessage, "outcome", "duplicate", "reason", "already delivered")
		return lease, 0, ack, false
	case errors.Is(err, dedupe.ErrGone):
		// The destination answered 410 for this event: a copy is never sent.
		h.count(metrics.DeliveryDuplicate)
		p.log.InfoContext(ctx, LogMessage, "outcome", "duplicate", "reason", "the destination answered 410 Gone for this event")
		return lease, 0, ack, false
	case errors.As(err, &refused):
		// Another function holds the event: look again once its lease ends.
		wait := max(refused.LeaseUntil.Sub(p.now), 0) + InFlightMargin
		p.log.InfoContext(ctx, LogMessage, "outcome", "in_flight", "reason", "in flight elsewhere", "retry_in_s", visibilitySeconds(wait))
		return lease, 0, retryIn(wait), false
	default:
		// A claim that timed out may still have landed: its lease then ends
		// on its own, and the next copy waits for it.
		h.count(metrics.DeliveryFailed)
		return lease, 0, h.notAttempted(ctx, p, "delivery record unavailable", err), false
	}
}

// sendLeft is the POST's timeout once the body is reshaped: what the
// lease's deadline for the POST (sendBy, fixed when the claim returned)
// still leaves, so that time spent transforming the body never lets the
// POST outlive its lease. When less than MinSendTime is left, the lease
// is given back unsent (releaseUnsent).
func (h *Handler) sendLeft(ctx context.Context, p prepared, lease dedupe.Lease, sendBy time.Time, send time.Duration) (time.Duration, decision, bool) {
	left := min(send, sendBy.Sub(h.now()))
	if left < MinSendTime {
		err := fmt.Errorf("reshaping the body took %s of the POST's %s; too little of the lease is left for a POST",
			(send - sendBy.Sub(h.now())).Round(time.Millisecond), send.Round(time.Millisecond))
		return 0, h.releaseUnsent(ctx, p, lease, "transform slow", err), false
	}
	return left, ack, true
}

// releaseUnsent gives back a lease that cannot be used for a POST (the
// claim took so long that a POST could outlive it, or the invocation ended
// while the body was reshaped). Nothing is sent; the record is released at
// once, so a copy need not wait for the lease, and the message is backed
// off like any failure of ours.
func (h *Handler) releaseUnsent(ctx context.Context, p prepared, lease dedupe.Lease, why string, err error) decision {
	d := h.notAttempted(ctx, p, why, err)
	status := dedupe.StatusFailed
	if h.policy.Final(p.msg.Attempt) {
		status = dedupe.StatusDead
	}
	if ferr := h.finish(ctx, lease, dedupe.Outcome{Status: status, Error: "not attempted: " + err.Error(), At: h.now()}); ferr != nil {
		p.log.WarnContext(ctx, LogMessage, "outcome", "lease_not_released", "reason", "the lease ends on its own", "error", ferr.Error())
	}
	return d
}

// finish writes an attempt's outcome within FinishTimeout.
func (h *Handler) finish(ctx context.Context, lease dedupe.Lease, out dedupe.Outcome) error {
	fctx, cancel := context.WithTimeout(ctx, h.timeouts.Finish)
	defer cancel()
	return h.store.Finish(fctx, lease, out)
}

// notAttempted backs off a message that could not be attempted for a
// reason of ours (secret or record store unavailable).
func (h *Handler) notAttempted(ctx context.Context, p prepared, why string, err error) decision {
	wait := h.hide(p.started, h.policy.Delay(p.msg.Attempt, h.random()))
	// An ordered lane's receive count is no attempt number (ordered.go):
	// its message reaches the DLQ by SQS's count alone.
	if h.policy.Final(p.msg.Attempt) && h.order.numbersByReceives() {
		// Released to the DLQ.
		wait = 0
		h.count(metrics.DeliveryDead)
	}
	p.log.ErrorContext(ctx, LogMessage, "outcome", "not_attempted", "reason", why, "error", err.Error(), "retry_in_s", visibilitySeconds(wait))
	return retryIn(wait)
}

// budget returns how long the POST may take and when the lease ends. The
// lease covers the claim, the POST and the outcome's write, and ends
// VisibilityCallTimeout before the function's deadline, so the release
// after it fits too; the POST gets the destination's timeout, cut to fit.
func (h *Handler) budget(ctx context.Context, now time.Time) (send time.Duration, leaseUntil time.Time, ok bool) {
	send = h.dest.Timeout()
	if deadline, has := ctx.Deadline(); has {
		send = min(send, deadline.Sub(now)-h.timeouts.Claim-h.timeouts.recordReserve()-h.timeouts.Visibility)
	}
	if send < MinSendTime {
		return 0, time.Time{}, false
	}
	return send, now.Add(h.timeouts.Claim + send + h.timeouts.recordReserve()), true
}

// record writes the attempt's outcome, logs the attempt and returns the
// message's fate.
func (h *Handler) record(ctx context.Context, p prepared, lease dedupe.Lease, res sender.Result) decision {
	out, outcome, d := h.judge(p, res)
	out.Batch = p.batch
	attrs := []any{"outcome", outcome, "status", res.Status, "latency_ms", res.Latency.Milliseconds()}
	if p.batch != "" {
		attrs = append(attrs, "batch", p.batch)
	}
	if out.Error != "" {
		attrs = append(attrs, "error", out.Error)
	}
	if d.release {
		attrs = append(attrs, "retry_in_s", visibilitySeconds(d.visibility))
		if out.Status == dedupe.StatusFailed {
			out.NextAttemptAt = out.At.Add(time.Duration(visibilitySeconds(d.visibility)) * time.Second)
		}
	}
	level := slog.LevelInfo
	if outcome != "delivered" {
		level = slog.LevelWarn
	}
	if err := h.finish(ctx, lease, out); err != nil {
		// After a 2xx the message is still acknowledged: the event was
		// delivered. The record stays IN_PROGRESS until its lease ends, so
		// only a later copy of the message (the function dying before its
		// batch response, or the provider resending) could repeat it, with
		// the same webhook-id: the one documented duplicate window. The
		// line is a warning, so functions.logLevel WARN keeps it.
		attrs = append(attrs, "record_error", err.Error())
		level = slog.LevelWarn
	}
	p.log.Log(ctx, level, LogMessage, attrs...)
	return d
}

// judge turns a result into the record's outcome, the outcome's log name
// and the message's fate, and counts it.
func (h *Handler) judge(p prepared, res sender.Result) (out dedupe.Outcome, outcome string, d decision) {
	msg, now := p.msg, h.now()
	out = dedupe.Outcome{HTTPStatus: res.Status, Error: res.Describe(), At: now, Latency: res.Latency, Paced: msg.Paced, Answer: res.Answer}
	switch v := res.Verdict(); {
	case v == sender.Delivered:
		h.count(metrics.DeliverySucceeded)
		h.metrics.add(metrics.EventAge, metrics.Milliseconds, float64(now.Sub(msg.ReceivedAt).Milliseconds()))
		out.Status, out.Error = dedupe.StatusDelivered, ""
		return out, "delivered", decision{counted: pausing.Succeeded}
	case v == sender.Gone:
		// 410: the destination wants no more of this event, from any copy;
		// only an operator's replay sends it again.
		h.count(metrics.DeliveryFailed)
		h.count(metrics.DeliveryDead)
		out.Status = dedupe.StatusGone
		return out, "gone", ack
	case h.policy.Final(msg.Attempt):
		// Released now; SQS's redrive moves it to the DLQ on the next receive.
		h.count(metrics.DeliveryFailed)
		h.count(metrics.DeliveryDead)
		out.Status = dedupe.StatusDead
		d = toDLQ()
		d.counted = pausing.Failed
		return out, "dead", d
	default:
		h.count(metrics.DeliveryFailed)
		age := now.Sub(msg.ReceivedAt)
		if !msg.SentAt.IsZero() {
			age = now.Sub(msg.SentAt) // retention counts from the enqueue time
		}
		out.Status = dedupe.StatusFailed
		d = retryIn(h.hide(p.started, h.policy.Backoff(msg.Attempt, h.random(), res.RetryAfter, age)))
		d.counted = pausing.Failed
		return out, "failed", d
	}
}

func (h *Handler) count(name string) { h.metrics.add(name, metrics.Count, 1) }

// claimedBy names the invocation that claims, for the record's history:
// its request id, as its log lines carry it.
func claimedBy(ctx context.Context) string {
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		return lc.AwsRequestID
	}
	return ""
}
