package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// fakeRequeue records SendMessage calls.
type fakeRequeue struct {
	mu   sync.Mutex
	sent []*sqs.SendMessageInput
	err  error
}

func (f *fakeRequeue) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	f.sent = append(f.sent, in)
	return &sqs.SendMessageOutput{MessageId: aws.String("copy-1")}, nil
}

func (f *fakeRequeue) calls() []*sqs.SendMessageInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]*sqs.SendMessageInput(nil), f.sent...)
}

type pausingHarness struct {
	*harness
	lanes   *pausing.Memory
	sw      *pausing.MemorySwitch
	requeue *fakeRequeue
	lane    *pausing.Controller
}

// newPausing builds a harness whose destination pauses per p, on a memory
// lane store and switch sharing the harness clock.
func newPausing(t *testing.T, url, secret string, p config.Pause, opts ...func(*laneOptions)) *pausingHarness {
	t.Helper()
	ps := &pausingHarness{lanes: pausing.NewMemory(), sw: &pausing.MemorySwitch{}, requeue: &fakeRequeue{}}
	ps.harness = newHarness(t, url, secret, append([]func(*laneOptions){func(o *laneOptions) {
		o.Destination.Pause = &p
		policy, _ := pausing.RuleFor(o.Destination)
		l, err := pausing.New(pausing.Options{Destination: o.Destination.Name, Rule: policy, Store: ps.lanes, Switch: ps.sw,
			ProbeTimeout: ProbeTimeout(o.Destination), Now: o.Now})
		if err != nil {
			t.Fatal(err)
		}
		ps.lane = l
		o.Lane, o.Requeue = l, ps.requeue
	}}, opts...)...)
	return ps
}

func (ps *pausingHarness) state(t *testing.T) pausing.State {
	t.Helper()
	s, err := ps.lanes.Get(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func (ps *pausingHarness) switchOn(t *testing.T) bool {
	t.Helper()
	on, _ := ps.sw.Enabled(context.Background())
	return on
}

func failing(status int) func(string) reply {
	return func(string) reply { return reply{status: status} }
}

// TestPauseAfterConsecutiveFailures: attempts that reach the destination
// and fail are counted across batches; the third pauses the lane, turns
// its mapping off, and records the LanePaused gauge.
func TestPauseAfterConsecutiveFailures(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, failing(http.StatusServiceUnavailable))
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 3})
	ctx := context.Background()
	if _, err := ps.h.Handle(ctx, batch(sqsRecord("a", 1), sqsRecord("b", 1))); err != nil {
		t.Fatal(err)
	}
	if s := ps.state(t); s.IsPaused() || s.Failures != 2 {
		t.Fatalf("after 2 failures: %+v", s)
	}
	if _, err := ps.h.Handle(ctx, batch(sqsRecord("c", 1))); err != nil {
		t.Fatal(err)
	}
	s := ps.state(t)
	if !s.IsPaused() || s.Reason != "3 consecutive failed deliveries" || ps.switchOn(t) {
		t.Errorf("after 3 failures: %+v, mapping on %v; want paused with the mapping off", s, ps.switchOn(t))
	}
	if ps.sink.sum(metrics.LanePaused) != 1 || ps.sink.sum(metrics.LanePauses) != 1 {
		t.Errorf("LanePaused %g, LanePauses %g; want 1, 1", ps.sink.sum(metrics.LanePaused), ps.sink.sum(metrics.LanePauses))
	}
	var logged bool
	for _, l := range ps.logs.lines(t) {
		if l["outcome"] == "lane_paused" && l["reason"] == "3 consecutive failed deliveries" && l["level"] == "WARN" {
			logged = true
		}
	}
	if !logged {
		t.Error("no lane_paused log line")
	}
}

// TestNoPauseOnOurOwnFailures: what the destination did not cause never
// pauses its lane: the signing secret or the record table unavailable,
// malformed messages, copies already delivered, a 410 for one event.
func TestNoPauseOnOurOwnFailures(t *testing.T) {
	secret := newSecret(t)
	ctx := context.Background()
	malformed := sqsRecord("m", 1)
	malformed.MessageAttributes = nil
	tests := []struct {
		name   string
		answer func(string) reply
		setup  func(*pausingHarness)
		opts   []func(*laneOptions)
		batch  events.SQSEvent
	}{
		{name: "signing secret unavailable", answer: failing(500),
			setup: func(ps *pausingHarness) { ps.secrets.err = errors.New("secret store unavailable") },
			batch: batch(sqsRecord("a", 1), sqsRecord("b", 1), sqsRecord("c", 1), sqsRecord("d", 1))},
		{name: "record table unavailable", answer: failing(500),
			opts:  []func(*laneOptions){func(o *laneOptions) { o.Store = brokenStore{} }},
			batch: batch(sqsRecord("a", 1), sqsRecord("b", 1), sqsRecord("c", 1), sqsRecord("d", 1))},
		{name: "malformed messages", answer: failing(500), batch: batch(malformed, malformed, malformed, malformed)},
		{name: "410 for single events", answer: failing(http.StatusGone),
			batch: batch(sqsRecord("a", 1), sqsRecord("b", 1), sqsRecord("c", 1), sqsRecord("d", 1))},
		{name: "copies already delivered", answer: failing(500),
			setup: func(ps *pausingHarness) {
				for _, id := range []string{"a", "b", "c", "d"} {
					l, _ := ps.store.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("orders", id), Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute)})
					_ = ps.store.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusDelivered, At: time.Now()})
				}
			},
			batch: batch(sqsRecord("a", 2), sqsRecord("b", 2), sqsRecord("c", 2), sqsRecord("d", 2))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := newSubscriber(t, secret, tt.answer)
			ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 2}, tt.opts...)
			if tt.setup != nil {
				tt.setup(ps)
			}
			if _, err := ps.h.Handle(ctx, tt.batch); err != nil {
				t.Fatal(err)
			}
			if s := ps.state(t); s.IsPaused() || s.Failures != 0 || s.Version != 0 {
				t.Errorf("lane %+v; want active, nothing counted", s)
			}
			if !ps.switchOn(t) {
				t.Error("mapping turned off")
			}
		})
	}
}

// TestUnreachableDestinationCounts: a connection that fails is a failed
// delivery like a 5xx (the destination is down).
func TestUnreachableDestinationCounts(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	url := sub.URL
	sub.Close()
	ps := newPausing(t, url, secret, config.Pause{AfterFailures: 2})
	if _, err := ps.h.Handle(context.Background(), batch(sqsRecord("a", 1), sqsRecord("b", 1))); err != nil {
		t.Fatal(err)
	}
	if s := ps.state(t); !s.IsPaused() {
		t.Errorf("lane %+v after two refused connections; want paused", s)
	}
}

// TestSuccessKeepsTheLaneOpen: a success in the batch means the
// destination is up; only the failures after it count.
func TestSuccessKeepsTheLaneOpen(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(id string) reply {
		if id == "ok" {
			return reply{status: http.StatusOK, delay: 200 * time.Millisecond} // ends last
		}
		return reply{status: http.StatusInternalServerError}
	})
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 3})
	if _, err := ps.h.Handle(context.Background(), batch(sqsRecord("x", 1), sqsRecord("y", 1), sqsRecord("ok", 1), sqsRecord("z", 1))); err != nil {
		t.Fatal(err)
	}
	if s := ps.state(t); s.IsPaused() || s.Failures != 0 {
		t.Errorf("lane %+v; want active with no failure after the success", s)
	}
}

// TestHoldWhilePaused: a batch received while the lane is paused (its
// mapping winding down) is not sent: each message is sent to the queue
// again as a fresh copy, delayed until about the next probe and carrying
// the attempts it made, and acknowledged, so the hold spends none of its
// receives.
func TestHoldWhilePaused(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	ps := newPausing(t, sub.URL, secret, config.Pause{ProbeEvery: config.Duration(2 * time.Minute)})
	ctx := context.Background()
	if _, err := ps.lanes.Pause(ctx, "orders", pausing.PauseInput{At: ps.clock.Now(), ResumeBy: ps.clock.Now().Add(time.Hour), By: pausing.ByDeliverer}); err != nil {
		t.Fatal(err)
	}
	last := sqsRecord("last", 10) // the default schedule's maxReceiveCount
	b64, enc := "aGVsbG8=", message.EncodingBase64
	last.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: &enc, DataType: "String"}
	last.Body = b64
	resp, err := ps.h.Handle(ctx, batch(sqsRecord("first", 1), sqsRecord("ninth", 9), last))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{}, failures(resp)); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
	if n := len(sub.requests()); n != 0 {
		t.Errorf("%d POSTs while paused", n)
	}
	sent := ps.requeue.calls()
	if len(sent) != 3 {
		t.Fatalf("%d copies sent, want 3", len(sent))
	}
	stamp := "@" + strconv.FormatInt(ps.clock.Now().UnixMilli(), 10)
	byID := map[string]*sqs.SendMessageInput{}
	for _, c := range sent {
		byID[aws.ToString(c.MessageAttributes[message.AttrID].StringValue)] = c
	}
	for id, wantAttempted := range map[string]string{"first": "", "ninth": "8" + stamp, "last": "9" + stamp} {
		c, ok := byID[id]
		if !ok {
			t.Errorf("no copy of %s", id)
			continue
		}
		if c.DelaySeconds != 120 || aws.ToString(c.QueueUrl) != testQueueURL {
			t.Errorf("copy of %s to %s delayed %d s; want the queue, until the next probe (120 s)", id, aws.ToString(c.QueueUrl), c.DelaySeconds)
		}
		if got := aws.ToString(c.MessageAttributes[message.AttrAttempted].StringValue); got != wantAttempted {
			t.Errorf("copy of %s: %s = %q, want %q", id, message.AttrAttempted, got, wantAttempted)
		}
	}
	c := byID["last"]
	if c == nil {
		t.FailNow()
	}
	if aws.ToString(c.MessageBody) != b64 {
		t.Errorf("copy with body %q", aws.ToString(c.MessageBody))
	}
	got := map[string]string{}
	for k, v := range c.MessageAttributes {
		got[k] = aws.ToString(v.DataType) + ":" + aws.ToString(v.StringValue)
	}
	want := map[string]string{message.AttrAttempted: "String:9" + stamp}
	for k, v := range last.MessageAttributes {
		want[k] = v.DataType + ":" + *v.StringValue
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("copy's attributes (-want +got):\n%s", diff)
	}
	if s := ps.state(t); s.Failures != 0 {
		t.Errorf("held messages counted as failures: %d", s.Failures)
	}

	// A copy that cannot be sent: the message is hidden until the next
	// probe instead, spending that receive.
	ps.requeue.err = errors.New("throttled")
	resp, _ = ps.h.Handle(ctx, batch(sqsRecord("other", 3)))
	if diff := cmp.Diff([]string{"msg-other-3"}, failures(resp)); diff != "" {
		t.Errorf("held after a failed copy (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string][]int32{"rh-other": {120}}, ps.sqs.visibility()); diff != "" {
		t.Errorf("visibility (-want +got):\n%s", diff)
	}
}

// queueModel is an SQS queue with a redrive policy, as far as one event's
// messages go: each receive counts, a message received past
// maxReceiveCount goes to the DLQ, a message the batch response does not
// name is deleted, and the copies the handler sends join the queue.
type queueModel struct {
	t               *testing.T
	ps              *pausingHarness
	maxReceiveCount int
	msgs            []*modelMessage
	dlq             []*modelMessage
	copies          int // copies of ps.requeue taken in
	ids             int
}

type modelMessage struct {
	rec      events.SQSMessage
	receives int
}

func (q *queueModel) add(rec events.SQSMessage) {
	q.ids++
	rec.MessageId = "m" + strconv.Itoa(q.ids)
	rec.ReceiptHandle = "rh-" + rec.MessageId
	rec.Attributes["SentTimestamp"] = strconv.FormatInt(q.ps.clock.Now().UnixMilli(), 10)
	q.msgs = append(q.msgs, &modelMessage{rec: rec})
}

// receive receives every message once (as one batch) and applies the
// response; it reports whether any message was received.
func (q *queueModel) receive() bool {
	q.t.Helper()
	var recs []events.SQSMessage
	var live []*modelMessage
	for _, m := range q.msgs {
		m.receives++
		if m.receives > q.maxReceiveCount {
			q.dlq = append(q.dlq, m)
			continue
		}
		m.rec.Attributes["ApproximateReceiveCount"] = strconv.Itoa(m.receives)
		recs = append(recs, m.rec)
		live = append(live, m)
	}
	q.msgs = nil
	if len(recs) == 0 {
		return false
	}
	resp, err := q.ps.h.Handle(context.Background(), batch(recs...))
	if err != nil {
		q.t.Fatal(err)
	}
	failed := map[string]bool{}
	for _, id := range failures(resp) {
		failed[id] = true
	}
	for _, m := range live {
		if failed[m.rec.MessageId] {
			q.msgs = append(q.msgs, m)
		}
	}
	for _, c := range q.ps.requeue.calls()[q.copies:] {
		q.copies++
		attrs := map[string]events.SQSMessageAttribute{}
		for k, v := range c.MessageAttributes {
			attrs[k] = events.SQSMessageAttribute{DataType: aws.ToString(v.DataType), StringValue: v.StringValue}
		}
		q.add(events.SQSMessage{Body: aws.ToString(c.MessageBody), Attributes: map[string]string{}, MessageAttributes: attrs})
	}
	return true
}

// TestHeldMessageKeepsItsSchedule: a message attempted twice, then held 8
// times while its lane is paused (receives that SQS counts toward its
// maxReceiveCount), still gets every one of its 10 attempts once the lane
// resumes, numbered 1 to 10, and only then reaches the DLQ. Before, the
// holds used up 8 of its 10 receives: it got 2 real POSTs after the pause
// and went to the DLQ.
func TestHeldMessageKeepsItsSchedule(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, failing(http.StatusServiceUnavailable))
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 1000})
	ctx := context.Background()
	q := &queueModel{t: t, ps: ps, maxReceiveCount: ps.h.dest.MaxReceiveCount()}
	q.add(sqsRecord("evt_held", 1))

	for range 2 {
		q.receive()
		ps.clock.Advance(time.Hour)
	}
	s, err := ps.lanes.Pause(ctx, "orders", pausing.PauseInput{At: ps.clock.Now(), ResumeBy: ps.clock.Now().Add(72 * time.Hour), By: pausing.ByOperator, Version: ps.state(t).Version})
	if err != nil {
		t.Fatal(err)
	}
	ps.clock.Advance(time.Minute) // past what the handler's lane trusts of its last read
	const holds = 8
	for range holds {
		if !q.receive() {
			t.Fatal("the event left the queue while held")
		}
		ps.clock.Advance(time.Minute)
	}
	if n := len(sub.requests()); n != 2 {
		t.Fatalf("%d POSTs after the holds, want the 2 before the pause", n)
	}
	if _, err := ps.lanes.Resume(ctx, "orders", pausing.ResumeInput{At: ps.clock.Now(), By: pausing.ByOperator, Version: s.Version}); err != nil {
		t.Fatal(err)
	}
	ps.clock.Advance(time.Minute)
	for i := 0; len(q.msgs) > 0; i++ {
		if i > 100 {
			t.Fatal("the event never left the queue")
		}
		q.receive()
		ps.clock.Advance(time.Hour)
	}
	var attempts []string
	for _, r := range sub.requests() {
		attempts = append(attempts, r.header.Get(https.HeaderAttempt))
	}
	if diff := cmp.Diff([]string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}, attempts); diff != "" {
		t.Errorf("attempts the destination saw (-want +got):\n%s", diff)
	}
	if len(q.dlq) != 1 {
		t.Errorf("DLQ holds %d messages, want the event", len(q.dlq))
	}
	if r, _, _ := ps.store.Get(ctx, dedupe.Key("orders", "evt_held")); r.Status != dedupe.StatusDead || r.Attempts != 10 {
		t.Errorf("record %s after %d attempts, want DEAD after 10", r.Status, r.Attempts)
	}
}

// TestCarriedCountIsTheCopysOwn: the attempts a copy carries count only
// for the message SQS stamped when the copy was sent; the same attributes
// on a message sent later (a redrive from the DLQ) start a full schedule.
func TestCarriedCountIsTheCopysOwn(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rec := sqsRecord("a", 2)
	v := FormatAttempted(7, now)
	rec.MessageAttributes[message.AttrAttempted] = events.SQSMessageAttribute{DataType: "String", StringValue: &v}
	for _, tt := range []struct {
		sentAt        time.Time
		attempt, carr int
	}{{now.Add(300 * time.Millisecond), 9, 7}, {now.Add(-time.Second), 9, 7}, {now.Add(time.Hour), 2, 0}} {
		rec.Attributes["SentTimestamp"] = strconv.FormatInt(tt.sentAt.UnixMilli(), 10)
		m, err := ParseMessage(rec)
		if err != nil || m.Attempt != tt.attempt || m.Carried != tt.carr {
			t.Errorf("sent %s after the copy: attempt %d carried %d, %v; want %d, %d", tt.sentAt.Sub(now), m.Attempt, m.Carried, err, tt.attempt, tt.carr)
		}
	}
	bad := "seven@now"
	rec.MessageAttributes[message.AttrAttempted] = events.SQSMessageAttribute{DataType: "String", StringValue: &bad}
	if _, err := ParseMessage(rec); !errors.Is(err, ErrMalformed) {
		t.Errorf("ParseMessage with %s %q: %v, want ErrMalformed", message.AttrAttempted, bad, err)
	}
}

// TestLaneUnreadableDelivers: when the lane's state cannot be read, the
// batch is delivered (a pause only ever saves attempts).
func TestLaneUnreadableDelivers(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	ps := newPausing(t, sub.URL, secret, config.Pause{}, func(o *laneOptions) { o.Lane = unreadableLane{o.Lane} })
	resp, _ := ps.h.Handle(context.Background(), batch(sqsRecord("a", 1)))
	if len(failures(resp)) != 0 || sub.posts("a") != 1 {
		t.Errorf("failures %v, %d POSTs; want delivered", failures(resp), sub.posts("a"))
	}
}

type unreadableLane struct{ Pauser }

func (unreadableLane) Paused(context.Context) (bool, error) {
	return false, errors.New("ProvisionedThroughputExceeded")
}

// TestProbe: a tick of a paused lane sends one probe, signed like a
// delivery (any Standard Webhooks library verifies it), with its own id
// and type; a 503 keeps the lane paused, a 2xx resumes it.
func TestProbe(t *testing.T) {
	secret := newSecret(t)
	answer := http.StatusServiceUnavailable
	var mu sync.Mutex
	sub := newSubscriber(t, secret, func(string) reply {
		mu.Lock()
		defer mu.Unlock()
		return reply{status: answer}
	})
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 1})
	ctx := context.Background()
	if _, err := ps.h.Handle(ctx, batch(sqsRecord("a", 1))); err != nil {
		t.Fatal(err)
	}
	pausedAt := ps.state(t).PausedAt
	ps.clock.Advance(time.Minute)
	rep, err := ps.h.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TickReport{Destination: "orders", Mode: "PAUSED", ProbeStatus: 503}, rep); diff != "" {
		t.Errorf("first tick (-want +got):\n%s", diff)
	}
	reqs := sub.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want the delivery and one probe", len(reqs))
	}
	p := reqs[1]
	if p.err != nil {
		t.Errorf("the probe does not verify: %v", p.err)
	}
	h := p.header
	if got := []string{h.Get(https.HeaderType), h.Get(https.HeaderSource), h.Get(https.HeaderAttempt), h.Get("Content-Type")}; !cmp.Equal(got, []string{ProbeType, ProbeSource, "1", "application/json"}) {
		t.Errorf("probe headers %v", got)
	}
	if id := h.Get(https.HeaderID); !strings.HasPrefix(id, "probe_orders_") || strings.Contains(id, ".") {
		t.Errorf("probe id %q", id)
	}
	var body ProbeBody
	if err := json.Unmarshal(p.body, &body); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ProbeBody{Type: ProbeType, Destination: "orders", PausedAt: pausedAt.UTC(), Reason: "1 consecutive failed deliveries", Probe: 1}, body); diff != "" {
		t.Errorf("probe body (-want +got):\n%s", diff)
	}
	if ps.switchOn(t) || ps.sink.sum(metrics.LanePaused) != 2 {
		t.Errorf("after a failed probe: mapping on %v, LanePaused sum %g; want off, 2 (the pause and the tick)", ps.switchOn(t), ps.sink.sum(metrics.LanePaused))
	}

	mu.Lock()
	answer = http.StatusNoContent
	mu.Unlock()
	ps.clock.Advance(time.Minute)
	rep, err = ps.h.Tick(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TickReport{Destination: "orders", Mode: "ACTIVE", ProbeStatus: 204, Change: "resumed"}, rep); diff != "" {
		t.Errorf("second tick (-want +got):\n%s", diff)
	}
	if !ps.switchOn(t) || ps.state(t).IsPaused() || ps.sink.sum(metrics.LaneResumes) != 1 {
		t.Errorf("after an answered probe: mapping on %v, lane %+v, LaneResumes %g", ps.switchOn(t), ps.state(t), ps.sink.sum(metrics.LaneResumes))
	}
	if ids := []string{reqs[1].header.Get(https.HeaderID), sub.requests()[2].header.Get(https.HeaderID)}; ids[0] == ids[1] {
		t.Errorf("two probes share the id %s", ids[0])
	}
	// The next batch is delivered.
	resp, _ := ps.h.Handle(ctx, batch(sqsRecord("b", 1)))
	if len(failures(resp)) != 0 || sub.posts("b") != 1 {
		t.Errorf("after the resume: failures %v, POSTs %d", failures(resp), sub.posts("b"))
	}
}

func TestInvoke(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	ps := newPausing(t, sub.URL, secret, config.Pause{})
	ctx := context.Background()
	out, err := ps.h.Invoke(ctx, json.RawMessage(`{"hookfan": "tick"}`))
	if err != nil {
		t.Fatal(err)
	}
	if rep, ok := out.(TickReport); !ok || rep.Mode != "ACTIVE" {
		t.Errorf("tick answered %#v", out)
	}
	ev, _ := json.Marshal(batch(sqsRecord("a", 1)))
	out, err = ps.h.Invoke(ctx, ev)
	if resp, ok := out.(events.SQSEventResponse); err != nil || !ok || len(resp.BatchItemFailures) != 0 || sub.posts("a") != 1 {
		t.Errorf("SQS event answered %#v, %v", out, err)
	}
	if _, err := ps.h.Invoke(ctx, json.RawMessage(`[1, 2]`)); err == nil {
		t.Error("Invoke accepted an event that is neither")
	}
	plain := newHarness(t, sub.URL, secret)
	if _, err := plain.h.Invoke(ctx, json.RawMessage(`{"hookfan": "tick"}`)); !errors.Is(err, ErrNoPause) {
		t.Errorf("tick of a lane that does not pause: %v, want ErrNoPause", err)
	}
}

func TestNewHandlerPauseOptions(t *testing.T) {
	secret := newSecret(t)
	dest := config.Destination{Name: "orders", URL: "https://orders.example.com", Pause: &config.Pause{}}
	o := laneOptions{Options: Options{Destination: dest, QueueURL: testQueueURL, Store: dedupe.NewMemory(), SQS: &fakeSQS{},
		Metrics: metrics.NewRecorder(&captureSink{})}, SecretID: testSecretID, Secrets: &fakeSecrets{values: []string{secret}}, Client: http.DefaultClient}
	if _, err := newLane(o); err == nil || !strings.Contains(err.Error(), "Lane and Requeue are required") {
		t.Errorf("pausing destination without a lane: %v", err)
	}
	o.Destination.Pause = nil
	o.Lane = unreadableLane{}
	if _, err := newLane(o); err == nil || !strings.Contains(err.Error(), "no pause settings") {
		t.Errorf("lane without pause settings: %v", err)
	}
}

// TestProbeCarriesTheDestinationHeaders: a gateway in front of the
// destination that wants a token gets it with the probe too; a header
// secret that cannot be read leaves the probe unsent (the lane stays
// paused) rather than sending one bound to be refused.
func TestProbeCarriesTheDestinationHeaders(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := &fakeHeaderSecrets{values: map[string]string{"tok": "Bearer probe-token"}}
	ps := newPausing(t, sub.URL, secret, config.Pause{}, withHeaders(hs, config.Header{Name: "Authorization", SecretName: "tok"}))
	ctx := context.Background()
	if _, err := ps.lanes.Pause(ctx, "orders", pausing.PauseInput{At: ps.clock.Now(), ResumeBy: ps.clock.Now().Add(time.Hour), By: pausing.ByDeliverer}); err != nil {
		t.Fatal(err)
	}
	_ = ps.sw.Disable(ctx)
	hs.mu.Lock()
	hs.err = errors.New("secret store unavailable")
	hs.mu.Unlock()
	rep, err := ps.h.Tick(ctx)
	if err != nil || rep.Mode != "PAUSED" || len(sub.requests()) != 0 {
		t.Fatalf("tick without the header secret: %+v, %v, %d requests; want paused, nothing sent", rep, err, len(sub.requests()))
	}
	if s := ps.state(t); !strings.Contains(s.LastProbeError, "not sent") {
		t.Errorf("last probe error %q", s.LastProbeError)
	}
	hs.mu.Lock()
	hs.err = nil
	hs.mu.Unlock()
	ps.clock.Advance(time.Minute)
	if rep, err := ps.h.Tick(ctx); err != nil || rep.Change != "resumed" {
		t.Fatalf("tick: %+v, %v", rep, err)
	}
	reqs := sub.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d probe requests, want 1", len(reqs))
	}
	if reqs[0].header.Get("Authorization") != "Bearer probe-token" || reqs[0].err != nil {
		t.Errorf("probe Authorization %q, signature %v", reqs[0].header.Get("Authorization"), reqs[0].err)
	}
}
