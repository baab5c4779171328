package delivery

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pacing"
)

// pacedLane paces a test lane at rate on an in-memory bucket, on the
// harness's clock; each wait in the function advances the clock (and is
// recorded in slept).
type pacedLane struct {
	requeue *fakeRequeue
	slept   []time.Duration
}

func (pl *pacedLane) opts(rate config.RateLimit) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.RateLimit = &rate
		pace, _ := o.Destination.Pace()
		c := o.Now
		p, err := pacing.New(pacing.Options{Destination: o.Destination.Name, Pace: pace, Store: pacing.NewMemory(), Now: c})
		if err != nil {
			panic(err)
		}
		o.Pacer, o.Requeue, o.Concurrency = p, pl.requeue, 1
	}
}

func newPacedHarness(t *testing.T, url, secret string, rate config.RateLimit, opts ...func(*laneOptions)) (*harness, *pacedLane) {
	pl := &pacedLane{requeue: &fakeRequeue{}}
	var hs *harness
	sleep := func(o *laneOptions) {
		o.Sleep = func(_ context.Context, d time.Duration) error {
			pl.slept = append(pl.slept, d)
			hs.clock.Advance(d)
			return nil
		}
	}
	hs = newHarness(t, url, secret, append(append([]func(*laneOptions){}, opts...), sleep, pl.opts(rate))...)
	return hs, pl
}

// attr reads a String message attribute of a copy.
func attr(in *sqs.SendMessageInput, name string) string {
	if a, ok := in.MessageAttributes[name]; ok {
		return aws.ToString(a.StringValue)
	}
	return ""
}

// TestPacedMessageDeferredAsACopy: a standard lane's message the rate
// limit holds back longer than the function can spare is sent again as a
// fresh copy delayed until its token is due (ceil of the wait), carrying
// its attempts unchanged and paced+1, and the original is acknowledged:
// no claim, no attempt, nothing counted towards pausing. When the copy
// is delivered, its record says how often it was paced.
func TestPacedMessageDeferredAsACopy(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	// 6 a minute: a token every 10 s, far past MaxPaceWait.
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6})
	first := sqsRecord("a", 1)
	carried := sqsRecord("b", 1) // its lane was paused once: one attempt carried
	s := func(v string) events.SQSMessageAttribute {
		return events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	}
	carried.MessageAttributes[message.AttrAttempted] = s(FormatAttempted(1, time.Now()))
	carried.MessageAttributes[message.AttrPaced] = s("2")
	fresh := sqsRecord("c", 1)

	resp, err := hs.h.Handle(context.Background(), batch(first, carried, fresh))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batch answered %v (%v); want every record acknowledged", failures(resp), err)
	}
	if sub.posts("a") != 1 || sub.posts("b") != 0 || sub.posts("c") != 0 {
		t.Fatalf("POSTs a=%d b=%d c=%d; want only a, the one token of the burst", sub.posts("a"), sub.posts("b"), sub.posts("c"))
	}
	copies := pl.requeue.calls()
	if len(copies) != 2 {
		t.Fatalf("sent %d copies, want 2", len(copies))
	}
	want := map[string]struct{ attempted, paced string }{"b": {"1@", "3"}, "c": {"", "1"}}
	for _, c := range copies {
		id := attr(c, message.AttrID)
		w := want[id]
		if got := attr(c, message.AttrAttempted); (w.attempted == "") != (got == "") || len(got) > 0 && got[:2] != w.attempted {
			t.Errorf("copy of %s: attempted=%q, want the attempts unchanged (%q…)", id, got, w.attempted)
		}
		if got := attr(c, message.AttrPaced); got != w.paced {
			t.Errorf("copy of %s: paced=%q, want %s", id, got, w.paced)
		}
		if c.DelaySeconds != 10 {
			t.Errorf("copy of %s: DelaySeconds %d, want 10 (ceil of the wait for the next token)", id, c.DelaySeconds)
		}
		if c.MessageBody == nil || *c.MessageBody == "" || aws.ToString(c.QueueUrl) != testQueueURL {
			t.Errorf("copy of %s: body %v to %s", id, c.MessageBody, aws.ToString(c.QueueUrl))
		}
	}
	if v := hs.sqs.visibility(); len(v) != 0 {
		t.Errorf("visibility changed %v; a deferred message is acknowledged, not hidden", v)
	}
	for _, id := range []string{"b", "c"} {
		if _, found, _ := hs.store.Get(context.Background(), dedupe.Key("orders", id)); found {
			t.Errorf("%s has a delivery record: a deferral must not claim", id)
		}
	}
	if got := hs.sink.sum(metrics.DeliveryAttempts); got != 1 {
		t.Errorf("DeliveryAttempts %v, want 1", got)
	}
	if got := hs.sink.sum(metrics.DeliveryPaced); got != 2 {
		t.Errorf("DeliveryPaced %v, want 2", got)
	}
	if got := hs.sink.sum(metrics.LaneEffectiveRate); got != 0.1 {
		t.Errorf("LaneEffectiveRate %v, want 0.1 a second", got)
	}

	// Nothing a deferral does counts towards pausing.
	var tally attempts
	p, _ := ParseMessage(sqsRecord("d", 1))
	rec := sqsRecord("d", 1)
	if d := hs.h.process(context.Background(), hs.clock.Now(), &rec, parsedRecord{msg: p, rec: &rec}, &tally); d.release || tally.get().Attempts != 0 {
		t.Errorf("a deferral decided %+v and tallied %+v; want acknowledged and nothing tallied", d, tally.get())
	}

	// The copy of b, due in 10 s, is delivered; its record keeps paced=3.
	hs.clock.Advance(10 * time.Second)
	again := copyAsRecord(copies[slices.IndexFunc(copies, func(c *sqs.SendMessageInput) bool { return attr(c, message.AttrID) == "b" })])
	if resp, err := hs.h.Handle(context.Background(), batch(again)); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the copy answered %v (%v)", failures(resp), err)
	}
	r, found, err := hs.store.Get(context.Background(), dedupe.Key("orders", "b"))
	if err != nil || !found || r.Status != dedupe.StatusDelivered || len(r.History) != 1 || r.History[0].Paced != 3 {
		t.Fatalf("b's record %+v (found %v, %v); want DELIVERED with one attempt paced 3 times", r, found, err)
	}
	if got := sub.requests(); got[len(got)-1].header.Get(https.HeaderID) != "b" {
		t.Errorf("last POST is %s, want b", got[len(got)-1].header.Get(https.HeaderID))
	}
}

// copyAsRecord is the record a copy comes back as: its first receive.
func copyAsRecord(in *sqs.SendMessageInput) events.SQSMessage {
	attrs := map[string]events.SQSMessageAttribute{}
	for k, v := range in.MessageAttributes {
		attrs[k] = events.SQSMessageAttribute{StringValue: v.StringValue, DataType: aws.ToString(v.DataType)}
	}
	id := aws.ToString(in.MessageAttributes[message.AttrID].StringValue)
	return events.SQSMessage{MessageId: "copy-" + id, ReceiptHandle: "rh-copy-" + id, Body: aws.ToString(in.MessageBody), MessageAttributes: attrs,
		Attributes: map[string]string{"ApproximateReceiveCount": "1", "SentTimestamp": strconv.FormatInt(time.Now().UnixMilli(), 10)}}
}

// TestPacedCopyFailureHides: when the copy cannot be sent, the message is
// hidden until its token is due instead.
func TestPacedCopyFailureHides(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6})
	pl.requeue.err = errors.New("sqs down")
	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1), sqsRecord("b", 1)))
	if err != nil || !slices.Equal(failures(resp), []string{"msg-b-1"}) {
		t.Fatalf("batch answered %v (%v); want b back", failures(resp), err)
	}
	if v := hs.sqs.visibility()["rh-b"]; !slices.Equal(v, []int32{10}) {
		t.Errorf("b hidden %v, want [10] (until its token)", v)
	}
	if sub.posts("b") != 0 {
		t.Error("b was sent unpaced")
	}
}

// TestPacedShortWaitInTheFunction: a wait within MaxPaceWait is spent in
// the function; nothing is deferred.
func TestPacedShortWaitInTheFunction(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerSecond: 2})
	recs := []events.SQSMessage{sqsRecord("a", 1), sqsRecord("b", 1), sqsRecord("c", 1), sqsRecord("d", 1)}
	resp, err := hs.h.Handle(context.Background(), batch(recs...))
	if err != nil || len(resp.BatchItemFailures) != 0 || len(pl.requeue.calls()) != 0 {
		t.Fatalf("batch answered %v (%v), %d copies; want all delivered in the function", failures(resp), err, len(pl.requeue.calls()))
	}
	if len(sub.requests()) != 4 || len(pl.slept) == 0 {
		t.Fatalf("%d POSTs after waits %v; want 4, with waits", len(sub.requests()), pl.slept)
	}
	for _, d := range pl.slept {
		if d <= 0 || d > MaxPaceWait {
			t.Errorf("waited %s in the function; want within (0, %s]", d, MaxPaceWait)
		}
	}
}

// TestPaceUnavailableNeverSendsUnpaced: a bucket that cannot be read
// sends nothing and backs the message off, unattempted.
func TestPaceUnavailableNeverSendsUnpaced(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Destination.RateLimit = &config.RateLimit{PerSecond: 5}
		o.Pacer, o.Requeue = failingPacer{}, &fakeRequeue{}
	})
	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1)))
	if err != nil || !slices.Equal(failures(resp), []string{"msg-a-1"}) || sub.posts("a") != 0 {
		t.Fatalf("answered %v (%v), %d POSTs; want a backed off unsent", failures(resp), err, sub.posts("a"))
	}
	if v := hs.sqs.visibility()["rh-a"]; !slices.Equal(v, []int32{int32(PaceUnavailableBackoff / time.Second)}) {
		t.Errorf("a hidden %v, want [%d]", v, int32(PaceUnavailableBackoff/time.Second))
	}
}

type failingPacer struct{}

func (failingPacer) Take(context.Context) (time.Time, time.Duration, error) {
	return time.Time{}, 0, errors.New("throttled")
}
func (failingPacer) Observe(context.Context, int, bool) (bool, error) { return false, nil }
func (failingPacer) Effective() float64                               { return 5 }

// TestPacedOrderedLaneKeepsKeyOrder: on an ordered lane the rate limit
// never reorders a key. Waits the function can spare are spent in it;
// beyond, the held event is hidden in place for the wait and its key's
// later events wait behind it, while another key goes on.
func TestPacedOrderedLaneKeepsKeyOrder(t *testing.T) {
	rate := config.RateLimit{PerMinute: 6}
	t.Run("waits in the function", func(t *testing.T) {
		secret := newSecret(t)
		sub := newSubscriber(t, secret, nil)
		hs, pl := newPacedHarness(t, sub.URL, secret, rate, ordered)
		g := newFIFOGroup(hs, "stripe:K", sqsRecord("e1", 1), sqsRecord("e2", 1), sqsRecord("e3", 1), sqsRecord("e4", 1))
		g.drain(t, 10)
		var got []string
		for _, r := range sub.requests() {
			got = append(got, r.header.Get(https.HeaderID))
		}
		if !slices.Equal(got, []string{"e1", "e2", "e3", "e4"}) || len(g.dlq) != 0 || len(pl.requeue.calls()) != 0 {
			t.Errorf("delivered %v, DLQ %v, %d copies; want e1..e4 in order once each, in place", got, g.dlq, len(pl.requeue.calls()))
		}
	})
	t.Run("held in place", func(t *testing.T) {
		secret := newSecret(t)
		sub := newSubscriber(t, secret, nil)
		hs, pl := newPacedHarness(t, sub.URL, secret, rate, ordered)
		// A deadline that leaves the attempt its time and a second over:
		// less than the 10 s a token takes.
		tm := hs.h.timeouts
		ctx, cancel := context.WithDeadline(context.Background(), hs.clock.Now().Add(tm.Claim+hs.h.dest.Timeout()+tm.recordReserve()+tm.Visibility+time.Second))
		defer cancel()
		resp, err := hs.h.Handle(ctx, batch(orderedRecord("a1", "stripe:A", 1), orderedRecord("a2", "stripe:A", 1), orderedRecord("a3", "stripe:A", 1),
			orderedRecord("b1", "stripe:B", 1)))
		if err != nil || !slices.Equal(failures(resp), []string{"msg-a2-1", "msg-a3-1", "msg-b1-1"}) {
			t.Fatalf("answered %v (%v); want a2, a3 and b1 back", failures(resp), err)
		}
		if len(sub.requests()) != 1 || sub.posts("a1") != 1 || len(pl.requeue.calls()) != 0 {
			t.Fatalf("%d POSTs (a1 %d), %d copies; want a1 only, no copies", len(sub.requests()), sub.posts("a1"), len(pl.requeue.calls()))
		}
		v := hs.sqs.visibility()
		for rh, want := range map[string][]int32{"rh-a2": {10}, "rh-b1": {10}, "rh-a3": {0}} {
			if !slices.Equal(v[rh], want) {
				t.Errorf("%s hidden %v, want %v: a2 and b1 until their token, a3 visible behind a2 (the group's lock)", rh, v[rh], want)
			}
		}
		if got := hs.sink.sum(metrics.DeliveryPaced); got != 2 {
			t.Errorf("DeliveryPaced %v, want 2 (a2 and b1)", got)
		}
	})
}

// TestPacedHoldsNeverReachTheDLQ: an ordered lane's pacing holds spend a
// receive each; held with a one-second wait on every receive, a message
// outlives the queue's retention before the holds spend the receives its
// lane keeps for them, so pacing alone never takes it to the DLQ.
func TestPacedHoldsNeverReachTheDLQ(t *testing.T) {
	for _, batchSize := range []int{1, 10} {
		d := config.Destination{Name: "orders", URL: "https://example.com", Ordering: &config.Ordering{Key: "body:id"},
			RateLimit: &config.RateLimit{PerSecond: 1}, BatchSize: batchSize}
		if d.MaxReceiveCount() != config.MaxFIFOReceiveCount {
			t.Fatalf("maxReceiveCount %d, want %d on a paced ordered lane", d.MaxReceiveCount(), config.MaxFIFOReceiveCount)
		}
		c := &clock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		h := &Handler{dest: d, now: c.Now}
		sent := c.Now()
		room := d.PacingRoom()
		for receive := 1; ; receive++ {
			if receive > room {
				t.Fatalf("batch %d: the holds spent the %d receives kept for them after %s, before the retention of %s", batchSize, room, c.Now().Sub(sent), d.Retention())
			}
			hold := h.pacedHold(Message{Attempt: receive, SentAt: sent}, time.Second)
			if hold > config.MaxVisibility {
				t.Fatalf("a hold of %s is past SQS's visibility ceiling", hold)
			}
			c.Advance(hold)
			if c.Now().Sub(sent) >= d.Retention() {
				break // the queue would drop it first
			}
		}
		if h.pacedHold(Message{Attempt: 1, SentAt: sent}, time.Second) != time.Second {
			t.Error("a first hold is stretched; want the wait while receives are plenty")
		}
	}
}

// TestPacedLaneOptions: a paced lane needs its pacer (and a standard
// one its requeue client); an unpaced one refuses a pacer.
func TestPacedLaneOptions(t *testing.T) {
	base := Options{Destination: config.Destination{Name: "orders", URL: "https://example.com"}, QueueURL: testQueueURL, Store: dedupe.NewMemory(),
		SQS: &fakeSQS{}, Sender: nopSender{}, Metrics: metrics.NewRecorder(&captureSink{})}
	paced := base
	paced.Destination.RateLimit = &config.RateLimit{PerSecond: 5}
	noRequeue := paced
	noRequeue.Pacer = failingPacer{}
	stray := base
	stray.Pacer = failingPacer{}
	for name, o := range map[string]Options{"paced without a pacer": paced, "paced without requeue": noRequeue, "pacer without a rateLimit": stray} {
		if _, err := NewHandler(o); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// TestPacedObserves: after each answer an adaptive lane is told how it
// went: a 429 slows it.
func TestPacedObserves(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusTooManyRequests} })
	hs, _ := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerSecond: 10, Adaptive: true})
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1))); err != nil {
		t.Fatal(err)
	}
	if got := hs.sink.sum(metrics.LaneEffectiveRate); got != 5 {
		t.Errorf("LaneEffectiveRate %v after a 429, want 5 (halved)", got)
	}
}

type nopSender struct{}

func (nopSender) Prepare(context.Context) error { return nil }
func (nopSender) Send(context.Context, sender.Delivery) sender.Result {
	return sender.Result{Status: http.StatusOK}
}

// TestPacedSendAlignedToToken: a paced request goes PaceAlign after its
// token (the claim's time varies; the spacing of the tokens must not), and
// the bucket keeps one token of a burst as the margin for the rest.
func TestPacedSendAlignedToToken(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerSecond: 5})
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1))); err != nil || sub.posts("a") != 1 {
		t.Fatalf("a POSTed %d times (%v)", sub.posts("a"), err)
	}
	if !slices.Equal(pl.slept, []time.Duration{PaceAlign}) {
		t.Errorf("waited %v, want [%s]: the claim took no time on this clock", pl.slept, PaceAlign)
	}
	for _, tt := range []struct{ burst, want int }{{5, 4}, {2, 1}, {1, 1}} {
		if got := withMargin(config.Pace{N: 5, Per: time.Second, Burst: tt.burst}).Burst; got != tt.want {
			t.Errorf("burst %d runs the bucket at %d, want %d", tt.burst, got, tt.want)
		}
	}
}

// TestPacedHoldCoversItsFollowers: a held record's hold lasts as long as
// the longest its key's later records of the batch need, since each of
// them spends a receive on every hold.
func TestPacedHoldCoversItsFollowers(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs, _ := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6}, ordered)
	tm := hs.h.timeouts
	ctx, cancel := context.WithDeadline(context.Background(), hs.clock.Now().Add(tm.Claim+hs.h.dest.Timeout()+tm.recordReserve()+tm.Visibility+time.Second))
	defer cancel()
	worn := hs.h.dest.PacingRoom() - 10 // a follower whose receives are nearly spent
	resp, err := hs.h.Handle(ctx, batch(orderedRecord("a1", "stripe:A", 1), orderedRecord("a2", "stripe:A", 1), orderedRecord("a3", "stripe:A", worn)))
	if err != nil || len(resp.BatchItemFailures) != 2 {
		t.Fatalf("answered %v (%v)", failures(resp), err)
	}
	v := hs.sqs.visibility()["rh-a2"]
	if len(v) != 2 || v[0] != 10 || v[1] <= 10 {
		t.Errorf("a2 hidden %v; want 10, then the longer hold a3's receives need", v)
	}
}

// slowFirstClaim is the harness's record store whose first claim takes
// claimTook on the harness's clock: a claim that outlasts PaceAlign.
type slowFirstClaim struct {
	*dedupe.Memory
	hs        **harness
	claimTook time.Duration
	slowed    bool
}

func (s *slowFirstClaim) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	l, err := s.Memory.Claim(ctx, in)
	if !s.slowed {
		s.slowed = true
		(*s.hs).clock.Advance(s.claimTook)
	}
	return l, err
}

// TestPacedClaimOutlastingItsTokenSpendsNoAttempt: a claim that outlasts
// its token's alignment needs a fresh token; when none fits the POST's
// budget, the lease is given back uncounted and the message deferred as a
// copy, as before a claim: no POST, no attempt, paced once. Its copy is
// then delivered as attempt 1. On the code before, the lease was finished
// FAILED and the copy came back as attempt 2.
func TestPacedClaimOutlastingItsTokenSpendsNoAttempt(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	var hsp *harness
	store := &slowFirstClaim{Memory: dedupe.NewMemory(), hs: &hsp, claimTook: 3 * time.Second}
	// 6 a minute: the fresh token is 7 s away, past the 2 s POST budget.
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6}, func(o *laneOptions) { o.Store = store })
	hsp = hs
	hs.store = store.Memory

	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1)))
	if err != nil || len(resp.BatchItemFailures) != 0 || sub.posts("a") != 0 {
		t.Fatalf("answered %v (%v), %d POSTs; want a deferred unsent and acknowledged", failures(resp), err, sub.posts("a"))
	}
	r, found, _ := store.Get(context.Background(), dedupe.Key("orders", "a"))
	if !found || r.Attempts != 0 || r.LeaseToken != "" || len(r.History) != 0 {
		t.Errorf("a's record %+v; want its claim given back: no attempt, no lease, no history", r)
	}
	copies := pl.requeue.calls()
	if len(copies) != 1 || attr(copies[0], message.AttrPaced) != "1" || attr(copies[0], message.AttrAttempted) != "" || copies[0].DelaySeconds != 7 {
		t.Fatalf("copies %d (paced %q, attempted %q, delay %d); want one, paced once, no attempt carried, due in 7 s",
			len(copies), attr(copies[0], message.AttrPaced), attr(copies[0], message.AttrAttempted), copies[0].DelaySeconds)
	}
	if got := hs.sink.sum(metrics.DeliveryAttempts); got != 0 {
		t.Errorf("DeliveryAttempts %v, want 0", got)
	}
	if got := hs.sink.sum(metrics.DeliveryPaced); got != 1 {
		t.Errorf("DeliveryPaced %v, want 1", got)
	}

	hs.clock.Advance(7 * time.Second)
	if resp, err := hs.h.Handle(context.Background(), batch(copyAsRecord(copies[0]))); err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("the copy answered %v (%v)", failures(resp), err)
	}
	r, _, _ = store.Get(context.Background(), dedupe.Key("orders", "a"))
	if r.Status != dedupe.StatusDelivered || r.Attempts != 1 || len(r.History) != 1 || r.History[0].Paced != 1 {
		t.Errorf("a's record %+v; want DELIVERED at attempt 1, paced once", r)
	}
	if got := sub.requests(); len(got) != 1 || got[0].header.Get("hookfan-attempt") != "1" {
		t.Errorf("%d POSTs; want one, attempt 1", len(got))
	}
}

// secondTakeFails is a pacer whose first take gives a token and whose
// later ones fail.
type secondTakeFails struct {
	takes int
	now   func() time.Time
}

func (p *secondTakeFails) Take(context.Context) (time.Time, time.Duration, error) {
	p.takes++
	if p.takes > 1 {
		return time.Time{}, 0, errors.New("throttled")
	}
	return p.now(), 0, nil
}
func (*secondTakeFails) Observe(context.Context, int, bool) (bool, error) { return false, nil }
func (*secondTakeFails) Effective() float64                               { return 5 }

// TestPaceUnreadableAfterTheClaimSpendsNoAttempt: when the fresh token a
// slow claim needs cannot be read, the lease is given back uncounted and
// the message backed off unattempted, never sent unpaced.
func TestPaceUnreadableAfterTheClaimSpendsNoAttempt(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	var hsp *harness
	store := &slowFirstClaim{Memory: dedupe.NewMemory(), hs: &hsp, claimTook: time.Second}
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Destination.RateLimit = &config.RateLimit{PerSecond: 5}
		o.Pacer, o.Requeue, o.Store = &secondTakeFails{now: o.Now}, &fakeRequeue{}, store
	})
	hsp = hs
	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1)))
	if err != nil || !slices.Equal(failures(resp), []string{"msg-a-1"}) || sub.posts("a") != 0 {
		t.Fatalf("answered %v (%v), %d POSTs; want a backed off unsent", failures(resp), err, sub.posts("a"))
	}
	if v := hs.sqs.visibility()["rh-a"]; !slices.Equal(v, []int32{int32(PaceUnavailableBackoff / time.Second)}) {
		t.Errorf("a hidden %v, want [%d]", v, int32(PaceUnavailableBackoff/time.Second))
	}
	if r, _, _ := store.Get(context.Background(), dedupe.Key("orders", "a")); r.Attempts != 0 || r.LeaseToken != "" {
		t.Errorf("a's record %+v; want its claim given back", r)
	}
}

// TestPacedSendWakingLateTakesAFreshToken: a request whose wait for its
// token's time ends late by more than half an interval (a stalled
// process) would leave together with requests whose tokens were an
// interval later; it takes a fresh token and waits again instead. On the
// code before it was sent on its stale token: 6 requests reached the local
// stack's receiver within 5 ms on a loaded machine, over 5×t+5.
func TestPacedSendWakingLateTakesAFreshToken(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	var hsp *harness
	var slept []time.Duration
	overslept := false
	oversleep := func(o *laneOptions) {
		o.Sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			hsp.clock.Advance(d)
			if !overslept {
				overslept = true
				hsp.clock.Advance(150 * time.Millisecond) // half an interval at 5/s is 100 ms
			}
			return nil
		}
	}
	store := pacing.NewMemory()
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		rate := config.RateLimit{PerSecond: 5}
		o.Destination.RateLimit = &rate
		pace, _ := o.Destination.Pace()
		p, err := pacing.New(pacing.Options{Destination: o.Destination.Name, Pace: pace, Store: store, Now: o.Now})
		if err != nil {
			t.Fatal(err)
		}
		o.Pacer, o.Requeue, o.Concurrency = p, &fakeRequeue{}, 1
	}, oversleep)
	hsp = hs
	start := hs.clock.Now()
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1))); err != nil || sub.posts("a") != 1 {
		t.Fatalf("a POSTed %d times (%v), want once", sub.posts("a"), err)
	}
	if !slices.Equal(slept, []time.Duration{PaceAlign, PaceAlign}) {
		t.Errorf("waited %v, want [%s %s]: the late wake takes a fresh token and aligns to it", slept, PaceAlign, PaceAlign)
	}
	// Two tokens taken: the bucket's TAT is two intervals past the first take.
	s, _ := store.Get(context.Background(), "orders")
	if want := start.Add(PaceAlign + 150*time.Millisecond + 200*time.Millisecond); !s.TAT.Equal(want) {
		t.Errorf("the bucket's TAT is %v after the first take, want %v (a second token taken at the late wake)", s.TAT.Sub(start), want.Sub(start))
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "a"))
	if r.Status != dedupe.StatusDelivered || r.Attempts != 1 {
		t.Errorf("a's record %+v; want DELIVERED at attempt 1", r)
	}
}

// lateCharge is a pacer whose take is charged later than its caller
// began to wait (a take that queued behind another in the instance): it
// moves the clock on by queued, then gives a token charged at that time.
type lateCharge struct {
	hs     **harness
	queued time.Duration
}

func (p lateCharge) Take(context.Context) (time.Time, time.Duration, error) {
	(*p.hs).clock.Advance(p.queued)
	return (*p.hs).clock.Now(), 0, nil
}
func (lateCharge) Observe(context.Context, int, bool) (bool, error) { return false, nil }
func (lateCharge) Effective() float64                               { return 5 }

// TestPacedSendAlignsToTheTokensCharge: a paced request is sent PaceAlign
// after the time the bucket charged its token, not after the time its
// take began. On the code before, a take that waited 50 ms to be charged
// was sent 50 ms early against its token: two tokens an interval apart,
// one of them taken behind a slow write, left closer than the rate allows.
func TestPacedSendAlignsToTheTokensCharge(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	var hsp *harness
	var slept []time.Duration
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Destination.RateLimit = &config.RateLimit{PerSecond: 5}
		o.Pacer, o.Requeue, o.Concurrency = lateCharge{hs: &hsp, queued: 50 * time.Millisecond}, &fakeRequeue{}, 1
		o.Sleep = func(_ context.Context, d time.Duration) error {
			slept = append(slept, d)
			hsp.clock.Advance(d)
			return nil
		}
	})
	hsp = hs
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1))); err != nil || sub.posts("a") != 1 {
		t.Fatalf("a POSTed %d times (%v), want once", sub.posts("a"), err)
	}
	if !slices.Equal(slept, []time.Duration{PaceAlign}) {
		t.Errorf("waited %v before the send, want [%s]: PaceAlign after the token's charge", slept, PaceAlign)
	}
}
