package delivery

import (
	"context"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// An ordered lane (config.Destination.Ordering) reads a FIFO queue
// through an event source mapping, which hands a batch holding, for each
// message group (one ordering key), that group's oldest waiting messages
// in order, and hands none of a group while one of its messages is in
// flight. So the lane keeps order by:
//
//   - delivering one group's records one after another, in batch order,
//     and different groups at once (up to the handler's concurrency);
//   - once a record of a group must come back (failed, backed off, in
//     flight elsewhere, not attempted), reporting every later record of
//     that group failed without sending it, and making those visible at
//     once: the group stays locked by the failed record, hidden for its
//     retry delay, so its key waits exactly that long and no other key
//     waits at all. A record given up (its attempts spent, failed for
//     good, malformed: decision.dead) holds nothing back: it is on its
//     way to the DLQ and its key moves on in the same batch;
//   - numbering attempts by the delivery record, not by SQS's receive
//     count, which also counts the receives a record spent waiting behind
//     another (attemptOf), and releasing at once a record whose attempts
//     are spent until SQS's redrive takes it to the DLQ (spent);
//   - holding a batch received while the lane is paused by hiding it
//     rather than sending fresh copies, which would join the back of their
//     groups (holdOrdered).

// ordering is how a lane treats the order of its events, chosen once at
// assembly from the destination: standard (every record at once) or
// ordered (one key's records one after another).
type ordering interface {
	// deliver delivers a batch, setting failed[i] for each record that
	// must come back.
	deliver(ctx context.Context, h *Handler, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts)
	// hold answers a batch received while the lane is paused.
	hold(ctx context.Context, h *Handler, ev events.SQSEvent) events.SQSEventResponse
	// attemptOf is the attempt a claimed record makes.
	attemptOf(msg Message, lease dedupe.Lease) int
	// spent releases, unsent, a claimed record past its last attempt.
	spent(ctx context.Context, h *Handler, p prepared, lease dedupe.Lease) (decision, bool)
	// numbersByReceives reports whether an attempt's number is the
	// message's receive count, so that a final attempt not made sends
	// it to the DLQ at once (an ordered lane's message gets there by
	// SQS's count alone).
	numbersByReceives() bool
	// paceWaitLimit is the longest a record waits in the function for a
	// token before it is deferred.
	paceWaitLimit() time.Duration
	// deferPaced defers a record the lane's rate limit holds back (pace.go).
	deferPaced(ctx context.Context, h *Handler, p prepared, wait time.Duration) decision
}

func orderingOf(d config.Destination) ordering {
	if d.Ordered() {
		return keyOrder{}
	}
	return noOrder{}
}

// noOrder is a standard lane's ordering: none.
type noOrder struct{}

func (noOrder) deliver(ctx context.Context, h *Handler, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	h.deliverAll(ctx, started, ev, parsed, failed, tally)
}

func (noOrder) hold(ctx context.Context, h *Handler, ev events.SQSEvent) events.SQSEventResponse {
	return h.requeueHeld(ctx, ev) // pause.go
}

func (noOrder) attemptOf(msg Message, _ dedupe.Lease) int { return msg.Attempt }

func (noOrder) spent(context.Context, *Handler, prepared, dedupe.Lease) (decision, bool) {
	return ack, false
}

func (noOrder) numbersByReceives() bool { return true }

// A standard lane defers for free (a fresh copy), so it waits little.
func (noOrder) paceWaitLimit() time.Duration { return MaxPaceWait }

func (noOrder) deferPaced(ctx context.Context, h *Handler, p prepared, wait time.Duration) decision {
	return h.deferPacedCopy(ctx, p, wait)
}

// keyOrder is an ordered lane's ordering: each key's events in order.
type keyOrder struct{}

func (keyOrder) deliver(ctx context.Context, h *Handler, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	h.deliverOrdered(ctx, started, ev, parsed, failed, tally)
}

func (keyOrder) hold(ctx context.Context, h *Handler, ev events.SQSEvent) events.SQSEventResponse {
	return h.holdOrdered(ctx, ev)
}

func (keyOrder) numbersByReceives() bool { return false }

// An ordered lane's deferral holds its key and spends a receive, so it
// waits as long as the invocation allows.
func (keyOrder) paceWaitLimit() time.Duration { return config.MaxVisibility }

func (keyOrder) deferPaced(ctx context.Context, h *Handler, p prepared, wait time.Duration) decision {
	return h.deferPacedInPlace(ctx, p, wait)
}

// MessageGroupIDAttribute is the system attribute of an SQS FIFO record
// naming its message group.
const MessageGroupIDAttribute = "MessageGroupId"

// deliverOrdered delivers a batch of an ordered lane, setting failed[i]
// for each record that must come back.
func (h *Handler) deliverOrdered(ctx context.Context, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	carrier := copiesInBatch(parsed, true)
	var order []string
	groups := map[string][]int{}
	for i := range ev.Records {
		g := ev.Records[i].Attributes[MessageGroupIDAttribute]
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], i)
	}
	sem := make(chan struct{}, h.concurrency)
	var wg sync.WaitGroup
	for _, g := range order {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			blocked := ""
			for k, i := range groups[g] {
				rec := &ev.Records[i]
				switch {
				case carrier[i] != i:
					h.copyInBatch(ctx, parsed[i].msg, parsed[carrier[i]].msg)
				case blocked != "":
					failed[i] = true
					h.waitBehind(ctx, started, rec, g, blocked)
				default:
					d := h.process(ctx, started, rec, parsed[i], tally)
					failed[i] = d.release
					// A given-up event is on its way to the DLQ: its key
					// moves on. It is released at once on every receive
					// until SQS moves it, and a later event of its key
					// held back behind it would spend a receive each time
					// and reach maxReceiveCount with it, unattempted.
					if d.release && !d.dead {
						blocked = rec.MessageId
					}
					if d.paced {
						h.holdForFollowers(ctx, started, rec, d.visibility, groups[g][k+1:], parsed)
					}
				}
			}
		})
	}
	wg.Wait()
}

// waitBehind hands back, unsent, a record of a group whose earlier record
// came back: visible at once, since the earlier one keeps the group
// locked until its own retry.
func (h *Handler) waitBehind(ctx context.Context, started time.Time, rec *events.SQSMessage, group, behind string) {
	h.log.InfoContext(ctx, LogMessage, "outcome", "waiting", "reason", "an earlier event of its key comes back first",
		"message_id", rec.MessageId, "group", group, "behind_message_id", behind)
	h.changeVisibility(ctx, started, rec, 0)
}

// holdForFollowers lengthens the hold of a record the rate limit held
// back so that its key's later records of the batch are covered too:
// they come back visible at once (waitBehind), kept behind it by the
// group's lock, and spend a receive on each of its holds, so the hold
// lasts at least the longest pacedHold among them.
func (h *Handler) holdForFollowers(ctx context.Context, started time.Time, rec *events.SQSMessage, hold time.Duration, followers []int, parsed []parsedRecord) {
	longest := hold
	for _, j := range followers {
		if parsed[j].err == nil {
			longest = max(longest, h.pacedHold(parsed[j].msg, hold))
		}
	}
	if longest > hold {
		h.changeVisibility(ctx, started, rec, longest)
	}
}

// attemptOf is the attempt a claimed record makes. On a standard lane it
// is the receive count (msg.Attempt). On an ordered lane the receive count
// also counts receives spent waiting behind an earlier event of the key,
// so the attempt is the smaller of it and the record's claims (which count
// every attempt since the record was made, an earlier life in the queue
// before a redrive included: a redriven message, received afresh, gets
// its schedule again).
func (keyOrder) attemptOf(msg Message, lease dedupe.Lease) int {
	if lease.Attempts <= 0 {
		return msg.Attempt
	}
	return min(msg.Attempt, lease.Attempts)
}

// spent reports, on an ordered lane, a record past its last attempt: its
// record turned DEAD at the last one, and SQS, whose maxReceiveCount there
// leaves room for waiting receives, moves it to the DLQ only once its
// receives reach it. It is released at once and unsent, the lease given
// back DEAD, until then.
func (keyOrder) spent(ctx context.Context, h *Handler, p prepared, lease dedupe.Lease) (decision, bool) {
	if p.msg.Attempt <= h.policy.Attempts() {
		return ack, false
	}
	p.log.InfoContext(ctx, LogMessage, "outcome", "spent", "reason", "its last attempt was made; released for the DLQ", "claims", lease.Attempts)
	// The record keeps saying why the event died: its last attempt's
	// status and error.
	out := dedupe.Outcome{Status: dedupe.StatusDead, Error: "attempts spent; on its way to the DLQ", At: h.now()}
	if n := len(lease.History); n > 0 {
		last := lease.History[n-1]
		out.HTTPStatus, out.Error = last.HTTPStatus, last.Error
	}
	if err := h.finish(ctx, lease, out); err != nil {
		p.log.WarnContext(ctx, LogMessage, "outcome", "lease_not_released", "reason", "the lease ends on its own", "error", err.Error())
	}
	return toDLQ(), true
}

// holdOrdered answers a batch an ordered lane received while paused:
// every record is hidden until the next probe, unsent. The receive is
// spent (an ordered lane's maxReceiveCount has room for it), but a fresh
// copy would queue behind its key's later events.
func (h *Handler) holdOrdered(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	started := h.now()
	resp := events.SQSEventResponse{BatchItemFailures: make([]events.SQSBatchItemFailure, 0, len(ev.Records))}
	var wg sync.WaitGroup
	for i := range ev.Records {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: ev.Records[i].MessageId})
		wg.Go(func() { h.changeVisibility(ctx, started, &ev.Records[i], h.lane.holdFor) })
	}
	wg.Wait()
	h.log.InfoContext(ctx, LogMessage, "outcome", "held", "reason", "the lane is paused; an ordered lane hides its events in place", "held", len(ev.Records),
		"retry_in_s", visibilitySeconds(h.lane.holdFor))
	return resp
}
