package delivery

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// A batched lane (config.Destination.Batch) sends the records of an
// invocation in batches: one attempt, one request, for up to maxEvents
// events and maxBytes of body (docs/decisions.md#batched-delivery).
// Each event keeps its own claim, record, schedule and fate:
//
//   - each record is prepared (parsed, its body read, filtered) on its
//     own; one token of the lane's rate limit is taken for the batch
//     (a batch is one request); then each is claimed and reshaped on its
//     own, so an event already delivered (the records decide) is never
//     sent again in a later batch;
//   - the claimed events are packed, in batch order, into batches of at
//     most maxEvents events whose envelope fits maxBytes; an event whose
//     item alone does not fit goes alone;
//   - a batch's result is each of its events' (all or nothing): a 2xx
//     delivers every one of them, anything else fails every one, each
//     backed off on its own schedule; each attempt's history entry names
//     the batch's webhook-id;
//   - on an ordered lane a key's claimed events go in one batch, in order
//     (split over consecutive batches only when they do not fit one),
//     batches are sent one after another, and a batch that fails holds
//     its keys: their later events come back unsent, behind it.

// batchClaimConcurrency bounds the records of a batched lane's
// invocation prepared and claimed at once: thousands may come in one
// invocation, and each takes a DynamoDB round trip.
const batchClaimConcurrency = 64

// batchOrder is a batched lane's ordering: its base's (standard or
// ordered) but for how an invocation's records are delivered.
type batchOrder struct{ ordering }

func (b batchOrder) deliver(ctx context.Context, h *Handler, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	h.deliverBatched(ctx, started, ev, parsed, failed, tally)
}

// batchItem is a claimed event ready to go in a batch.
type batchItem struct {
	i int // the record's index in the invocation
	p prepared
	// unclaimed is p as its claim found it, should the lease be given
	// back uncounted (unpaced, release).
	unclaimed prepared
	lease     dedupe.Lease
	sendBy    time.Time // the latest its POST may end: its lease's budget
	size      int       // its envelope item's bytes
	key       string    // its message group, on an ordered lane
}

// deliverBatched delivers an invocation of a batched lane, setting
// failed[i] for each record that must come back.
func (h *Handler) deliverBatched(ctx context.Context, started time.Time, ev events.SQSEvent, parsed []parsedRecord, failed []bool, tally *attempts) {
	ordered := h.dest.Ordered()
	carrier := copiesInBatch(parsed, ordered)
	settle := func(i int, d decision) {
		failed[i] = d.release
		if d.release && d.visibility != keepVisibility {
			h.changeVisibility(ctx, started, &ev.Records[i], d.visibility)
		}
	}
	// On an ordered lane, a record that must come back (not given up)
	// holds its key: key → the message id its later records wait behind.
	blocked := map[string]string{}
	// Prepare each record (its own parse, body, filter and sender).
	preps := make([]*prepared, len(ev.Records))
	h.each(len(ev.Records), ordered, func(i int) {
		if c := carrier[i]; c != i {
			h.copyInBatch(ctx, parsed[i].msg, parsed[c].msg)
			return
		}
		key := ev.Records[i].Attributes[MessageGroupIDAttribute]
		if behind, ok := blocked[key]; ok && ordered {
			h.waitBehind(ctx, started, &ev.Records[i], key, behind)
			settleNoVisibility(settle, i)
			return
		}
		p, stop, ok := h.prepare(ctx, started, parsed[i])
		if !ok {
			settle(i, stop)
			if ordered && stop.release && !stop.dead {
				blocked[key] = ev.Records[i].MessageId
			}
			return
		}
		preps[i] = &p
	}, func(i int) {
		settle(i, decision{release: true})
		if ordered {
			blocked[ev.Records[i].Attributes[MessageGroupIDAttribute]] = ev.Records[i].MessageId
		}
	})
	var ready []int
	for i, p := range preps {
		if p != nil {
			ready = append(ready, i)
		}
	}
	if len(ready) == 0 {
		return
	}
	// One token for the batch: a batch is one request.
	tokenAt, held, stop, ok := h.takeToken(ctx, *preps[ready[0]])
	if !ok {
		for _, i := range ready {
			d := stop
			if held > 0 {
				h.count(metrics.DeliveryPaced)
				d = h.order.deferPaced(ctx, h, *preps[i], held)
			}
			settle(i, d)
		}
		return
	}
	items := h.claimBatch(ctx, ev, preps, ready, blocked, settle)
	batches := h.packBatches(items, ordered)
	if ordered {
		h.sendOrdered(ctx, started, ev, batches, tokenAt, settle, tally)
		return
	}
	sem := make(chan struct{}, h.concurrency)
	var wg sync.WaitGroup
	for k, b := range batches {
		at := tokenAt
		if k > 0 && h.pacer != nil {
			at = staleToken // every further request takes a token of its own
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			defer h.recoverBatch(ctx, b, settle)
			h.sendBatch(ctx, b, at, settle, tally)
		})
	}
	wg.Wait()
}

// staleToken is a token time alignToToken finds stale, so that it takes a
// fresh token: for a batch beyond an invocation's first on a paced lane.
var staleToken = time.Unix(1, 0)

// each runs f for the records 0..n-1, batchClaimConcurrency at a time (one
// after another when ordered: the pipeline's calls keep batch order),
// and fail for a record whose f panicked.
func (h *Handler) each(n int, ordered bool, f, fail func(i int)) {
	run := func(i int) {
		defer func() {
			if p := recover(); p != nil {
				h.log.Error(LogMessage, "outcome", "panicked", "index", i, "panic", fmt.Sprint(p))
				fail(i)
			}
		}()
		f(i)
	}
	if ordered {
		for i := range n {
			run(i)
		}
		return
	}
	sem := make(chan struct{}, batchClaimConcurrency)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			run(i)
		})
	}
	wg.Wait()
}

// claimBatch claims and reshapes each prepared record, and returns the
// events ready to send, in batch order. On an ordered lane a record that
// must come back (not given up) holds its key: the key's later records
// come back unclaimed, behind it.
func (h *Handler) claimBatch(ctx context.Context, ev events.SQSEvent, preps []*prepared, ready []int, blocked map[string]string, settle func(int, decision)) []batchItem {
	ordered := h.dest.Ordered()
	out := make([]*batchItem, len(ready))
	h.each(len(ready), ordered, func(k int) {
		i := ready[k]
		p := *preps[i]
		key := ev.Records[i].Attributes[MessageGroupIDAttribute]
		if behind, ok := blocked[key]; ok && ordered {
			h.waitBehind(ctx, p.started, &ev.Records[i], key, behind)
			settleNoVisibility(settle, i)
			return
		}
		it, stop, ok := h.claimOne(ctx, p)
		if !ok {
			settle(i, stop)
			if ordered && stop.release && !stop.dead {
				blocked[key] = ev.Records[i].MessageId
			}
			return
		}
		it.i, it.key = i, key
		out[k] = &it
	}, func(k int) {
		i := ready[k]
		settle(i, decision{release: true})
		if ordered {
			blocked[ev.Records[i].Attributes[MessageGroupIDAttribute]] = ev.Records[i].MessageId
		}
	})
	var items []batchItem
	for _, it := range out {
		if it != nil {
			items = append(items, *it)
		}
	}
	return items
}

// settleNoVisibility reports record i failed without changing its
// visibility (waitBehind did).
func settleNoVisibility(settle func(int, decision), i int) {
	settle(i, decision{release: true, visibility: keepVisibility})
}

// keepVisibility marks a released record whose visibility was already set.
const keepVisibility = -1

// claimOne runs schedule → claim → spent → reshape for a prepared record,
// as deliver does for one sent alone.
func (h *Handler) claimOne(ctx context.Context, p prepared) (it batchItem, stop decision, ok bool) {
	if stop, ok := h.schedule(ctx, &p); !ok {
		return it, stop, false
	}
	lease, send, stop, ok := h.claim(ctx, p)
	if !ok {
		return it, stop, false
	}
	claimed, unclaimed := h.now(), p
	p.msg.Attempt = h.order.attemptOf(p.msg, lease)
	if stop, ok := h.order.spent(ctx, h, p, lease); ok {
		return it, stop, false
	}
	// The transform's memory budget is shared among the handler's
	// concurrency (compileTransform), fewer than the claims at once.
	h.shapeSlots <- struct{}{}
	stop, ok = h.reshape(ctx, &p, lease)
	<-h.shapeSlots
	if !ok {
		return it, stop, false
	}
	item, err := sender.BatchItem(p.msg.delivery(send))
	if err != nil {
		return it, h.releaseUnsent(ctx, p, lease, "batch item not encoded", err), false
	}
	return batchItem{p: p, unclaimed: unclaimed, lease: lease, sendBy: claimed.Add(send), size: len(item)}, ack, true
}

// packBatches packs the claimed events, in batch order, into batches of at
// most maxEvents events whose envelope fits maxBytes; an event whose item
// alone does not fit goes alone. On an ordered lane a key's events start
// a new batch when they do not all fit the current one, so that a key
// spans two batches only when its events fill more than one.
func (h *Handler) packBatches(items []batchItem, ordered bool) [][]batchItem {
	b, _ := h.dest.Batching()
	var out [][]batchItem
	var cur []batchItem
	size := sender.BatchOverhead
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, size = nil, sender.BatchOverhead
	}
	fits := func(n, bytes int) bool { return len(cur)+n <= b.MaxEvents && size+bytes <= b.MaxBytes }
	add := func(it batchItem) {
		if sender.BatchOverhead+it.size > b.MaxBytes {
			out = append(out, []batchItem{it}) // too big to share a batch
			return
		}
		extra := it.size
		if len(cur) > 0 {
			extra++ // the comma
		}
		if !fits(1, extra) {
			flush()
			extra = it.size
		}
		cur = append(cur, it)
		size += extra
	}
	if !ordered {
		for _, it := range items {
			add(it)
		}
		flush()
		return out
	}
	for _, group := range groupByKey(items) {
		bytes := 0
		for _, it := range group {
			bytes += it.size + 1
		}
		if len(cur) > 0 && !fits(len(group), bytes) {
			flush()
		}
		for _, it := range group {
			add(it)
		}
	}
	flush()
	return out
}

// groupByKey groups items by key, keys in the order they first appear,
// each key's items in order.
func groupByKey(items []batchItem) [][]batchItem {
	var keys []string
	groups := map[string][]batchItem{}
	for _, it := range items {
		if _, ok := groups[it.key]; !ok {
			keys = append(keys, it.key)
		}
		groups[it.key] = append(groups[it.key], it)
	}
	out := make([][]batchItem, len(keys))
	for k, key := range keys {
		out[k] = groups[key]
	}
	return out
}

// sendOrdered sends an ordered lane's batches one after another: a batch
// that fails holds its keys, whose events in later batches come back
// unsent, behind it (their leases given back).
func (h *Handler) sendOrdered(ctx context.Context, started time.Time, ev events.SQSEvent, batches [][]batchItem, tokenAt time.Time, settle func(int, decision), tally *attempts) {
	blocked := map[string]string{}
	for k, b := range batches {
		var send []batchItem
		for _, it := range b {
			if behind, ok := blocked[it.key]; ok {
				h.release(ctx, it)
				h.waitBehind(ctx, started, &ev.Records[it.i], it.key, behind)
				settleNoVisibility(settle, it.i)
				continue
			}
			send = append(send, it)
		}
		if len(send) == 0 {
			continue
		}
		at := tokenAt
		if k > 0 && h.pacer != nil {
			at = staleToken
		}
		ds := h.sendBatchGuarded(ctx, send, at, settle, tally)
		for j, d := range ds {
			if d.release && !d.dead {
				if _, ok := blocked[send[j].key]; !ok {
					blocked[send[j].key] = ev.Records[send[j].i].MessageId
				}
			}
		}
	}
}

func (h *Handler) sendBatchGuarded(ctx context.Context, b []batchItem, tokenAt time.Time, settle func(int, decision), tally *attempts) (ds []decision) {
	defer func() {
		if p := recover(); p != nil {
			h.log.ErrorContext(ctx, LogMessage, "outcome", "panicked", "batch_size", len(b), "panic", fmt.Sprint(p))
			ds = make([]decision, len(b))
			for j, it := range b {
				ds[j] = decision{release: true}
				settle(it.i, ds[j])
			}
		}
	}()
	return h.sendBatch(ctx, b, tokenAt, settle, tally)
}

// recoverBatch fails every record of a batch whose send panicked.
func (h *Handler) recoverBatch(ctx context.Context, b []batchItem, settle func(int, decision)) {
	if p := recover(); p != nil {
		h.log.ErrorContext(ctx, LogMessage, "outcome", "panicked", "batch_size", len(b), "panic", fmt.Sprint(p))
		for _, it := range b {
			settle(it.i, decision{release: true})
		}
	}
}

// release gives back a claimed event's lease unsent and uncounted: its
// record reads as the claim found it, and the next claim makes the same
// attempt.
func (h *Handler) release(ctx context.Context, it batchItem) {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), h.timeouts.Finish)
	defer cancel()
	if err := h.store.Release(rctx, it.lease); err != nil {
		it.p.log.WarnContext(ctx, LogMessage, "outcome", "lease_not_released", "reason", "the lease ends on its own and the claim counts as an attempt", "error", err.Error())
	}
}

// sendBatch sends one batch as one attempt within the least budget its
// events' leases leave, records each event's outcome and settles its
// record. It returns each event's decision, in order.
func (h *Handler) sendBatch(ctx context.Context, b []batchItem, tokenAt time.Time, settle func(int, decision), tally *attempts) []decision {
	out := make([]decision, len(b))
	done := func() []decision {
		for j, it := range b {
			settle(it.i, out[j])
		}
		return out
	}
	sendBy := b[0].sendBy
	for _, it := range b[1:] {
		sendBy = minTime(sendBy, it.sendBy)
	}
	send := sendBy.Sub(h.now())
	if send < MinSendTime {
		// Given back uncounted: another event's slow claim is not this
		// one's attempt.
		err := errors.New("the batch's claims took so long that too little of the earliest lease is left for a POST")
		for j, it := range b {
			h.release(ctx, it)
			out[j] = h.notAttempted(ctx, it.unclaimed, "delivery record slow", err)
		}
		return done()
	}
	send, held, ok, err := h.align(ctx, b[0].p, tokenAt, send)
	if !ok {
		// The rate limit holds the batch back after its claims: each
		// lease is given back uncounted and each message deferred, as
		// one event's would be.
		for j, it := range b {
			out[j] = h.unpaced(ctx, it.unclaimed, it.lease, held, err)
		}
		return done()
	}
	ds := make([]sender.Delivery, len(b))
	for j, it := range b {
		ds[j] = it.p.msg.delivery(send)
	}
	id := sender.BatchID(ds)
	results := h.sendDeliveries(ctx, ds)
	h.metrics.add(metrics.DeliveryAttempts, metrics.Count, float64(len(b)))
	h.count(metrics.DeliveryBatches)
	h.metrics.add(metrics.DeliveryBatchSize, metrics.Count, float64(len(b)))
	var latency time.Duration
	sent := false
	for _, r := range results {
		if !r.Unsent {
			latency, sent = max(latency, r.Latency), true
		}
	}
	if sent {
		h.metrics.add(metrics.DeliveryLatency, metrics.Milliseconds, float64(latency.Milliseconds()))
	}
	h.observePace(ctx, b[0].p, batchResult(results))
	// Each event's outcome is its own record: written batchClaimConcurrency
	// at a time, not one after another (2.3 s of a 462-event invocation's
	// writes before), on an ordered lane too, since no record's write
	// depends on another's.
	h.each(len(b), false, func(j int) {
		it := b[j]
		it.p.batch = id
		out[j] = h.record(ctx, it.p, it.lease, results[j])
	}, func(j int) { out[j] = decision{release: true} })
	counted := pausing.Succeeded
	for j := range b {
		if out[j].counted == pausing.Failed {
			counted = pausing.Failed
		}
	}
	// The lane's pause rule counts requests: a batch is one.
	tally.add(counted)
	return done()
}

// sendDeliveries makes one attempt of ds: through the sender's batch call
// when it has one, else each delivery on its own, at once.
func (h *Handler) sendDeliveries(ctx context.Context, ds []sender.Delivery) []sender.Result {
	if bs, ok := h.sender.(sender.BatchSender); ok {
		res := bs.SendBatch(ctx, ds)
		if len(res) == len(ds) {
			return res
		}
		out := make([]sender.Result, len(ds))
		for j := range out {
			out[j] = sender.Result{Err: fmt.Errorf("the sender answered %d results for a batch of %d", len(res), len(ds))}
		}
		return out
	}
	out := make([]sender.Result, len(ds))
	var wg sync.WaitGroup
	for j := range ds {
		wg.Go(func() { out[j] = h.sender.Send(ctx, ds[j]) })
	}
	wg.Wait()
	return out
}

// batchResult is the result an adaptive rate limit observes for a batch:
// its first result that slows the lane, else its first.
func batchResult(rs []sender.Result) sender.Result {
	if i := slices.IndexFunc(rs, func(r sender.Result) bool { return r.RetryAfter > 0 || r.Status == 429 }); i >= 0 {
		return rs[i]
	}
	return rs[0]
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// batchProbe is whether a lane's probe goes as a batch of one: on a
// batched lane whose sender sends batches, so the destination gets the
// envelope it parses.
func (h *Handler) batchProbe() (sender.BatchSender, bool) {
	if h.dest.Batch == nil {
		return nil, false
	}
	bs, ok := h.sender.(sender.BatchSender)
	return bs, ok
}

// orderingOfBatched wraps a lane's ordering when it batches.
func orderingOfBatched(d config.Destination, base ordering) ordering {
	if d.Batch == nil {
		return base
	}
	return batchOrder{base}
}
