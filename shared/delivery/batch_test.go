package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/metrics"
)

func batched(b config.Batch) func(*laneOptions) {
	return func(o *laneOptions) { o.Destination.Batch = &b }
}

// envelope is a batch body as a receiver reads it.
type envelope struct {
	Events []struct {
		ID          string          `json:"id"`
		Type        string          `json:"type"`
		Source      string          `json:"source"`
		AcceptedAt  string          `json:"accepted_at"`
		ContentType string          `json:"content_type"`
		Data        json.RawMessage `json:"data"`
		DataBase64  string          `json:"data_base64"`
	} `json:"events"`
}

func (e envelope) ids() []string {
	out := []string{}
	for _, ev := range e.Events {
		out = append(out, ev.ID)
	}
	return out
}

// batches decodes every request the subscriber got as a verified batch.
func batchesOf(t *testing.T, sub *subscriber) []envelope {
	t.Helper()
	var out []envelope
	for _, r := range sub.requests() {
		if r.err != nil {
			t.Errorf("batch %s does not verify: %v", r.header.Get(https.HeaderID), r.err)
		}
		var e envelope
		if err := json.Unmarshal(r.body, &e); err != nil {
			t.Fatalf("batch body is not an envelope: %v\n%s", err, r.body)
		}
		if got, want := r.header.Get(https.HeaderBatchSize), strconv.Itoa(len(e.Events)); got != want {
			t.Errorf("%s: %s, want %s", https.HeaderBatchSize, got, want)
		}
		if !strings.HasPrefix(r.header.Get(https.HeaderID), sender.BatchIDPrefix) {
			t.Errorf("webhook-id %q is not a batch's", r.header.Get(https.HeaderID))
		}
		out = append(out, e)
	}
	return out
}

func records(ids ...string) events.SQSEvent {
	var ev events.SQSEvent
	for _, id := range ids {
		ev.Records = append(ev.Records, sqsRecord(id, 1))
	}
	return ev
}

func record(t *testing.T, hs *harness, id string) dedupe.Record {
	t.Helper()
	r, found, err := hs.store.Get(context.Background(), dedupe.Key("orders", id))
	if err != nil || !found {
		t.Fatalf("record of %s: found %v, %v", id, found, err)
	}
	return r
}

// TestBatchOnePOST: a batched lane sends an invocation's events in one
// signed POST whose envelope carries each event in order; every event
// gets its own DELIVERED record whose attempt names the batch, and the
// metrics count the events and the batch.
func TestBatchOnePOST(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}))
	resp, err := hs.h.Handle(context.Background(), records("e1", "e2", "e3"))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v, %v", failures(resp), err)
	}
	bs := batchesOf(t, sub)
	if len(bs) != 1 {
		t.Fatalf("%d POSTs, want 1", len(bs))
	}
	if diff := cmp.Diff([]string{"e1", "e2", "e3"}, bs[0].ids()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	ev := bs[0].Events[1]
	if ev.Type != "invoice.paid" || ev.Source != "stripe" || ev.ContentType != "application/json" || ev.AcceptedAt == "" || ev.DataBase64 != "" {
		t.Errorf("item %+v", ev)
	}
	if string(ev.Data) != `{"id":"e2","type":"invoice.paid","amount":4200}` {
		t.Errorf("data %s, want the body verbatim", ev.Data)
	}
	id := sub.requests()[0].header.Get(https.HeaderID)
	for _, e := range []string{"e1", "e2", "e3"} {
		r := record(t, hs, e)
		if r.Status != dedupe.StatusDelivered || len(r.History) != 1 || r.History[0].Batch != id {
			t.Errorf("%s: %s, history %+v; want DELIVERED in batch %s", e, r.Status, r.History, id)
		}
	}
	for name, want := range map[string]float64{metrics.DeliveryBatches: 1, metrics.DeliveryBatchSize: 3, metrics.DeliveryAttempts: 3, metrics.DeliverySucceeded: 3} {
		if got := hs.sink.sum(name); got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	// The log line of each event names the batch.
	n := 0
	for _, l := range hs.logs.lines(t) {
		if l["outcome"] == "delivered" && l["batch"] == id {
			n++
		}
	}
	if n != 3 {
		t.Errorf("%d delivered lines name the batch, want 3", n)
	}
}

// TestBatchMaxEvents: more records than maxEvents go in POSTs of at most
// maxEvents, in order.
func TestBatchMaxEvents(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 3}), func(o *laneOptions) { o.Concurrency = 1 })
	resp, _ := hs.h.Handle(context.Background(), records("e1", "e2", "e3", "e4", "e5", "e6", "e7"))
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	var got [][]string
	for _, b := range batchesOf(t, sub) {
		got = append(got, b.ids())
	}
	if diff := cmp.Diff([][]string{{"e1", "e2", "e3"}, {"e4", "e5", "e6"}, {"e7"}}, got); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if hs.sink.sum(metrics.DeliveryBatches) != 3 {
		t.Errorf("DeliveryBatches = %v, want 3", hs.sink.sum(metrics.DeliveryBatches))
	}
}

// TestBatchMaxBytes: a batch's envelope stays within maxBytes, and an
// event whose item alone does not fit goes alone.
func TestBatchMaxBytes(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10, MaxBytes: 1024}), func(o *laneOptions) { o.Concurrency = 1 })
	big := sqsRecord("big", 1)
	big.Body = `{"id":"big","pad":"` + strings.Repeat("x", 2000) + `"}`
	ev := records("e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8")
	ev.Records = slices.Insert(ev.Records, 3, big)
	resp, _ := hs.h.Handle(context.Background(), ev)
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	seen := map[string]int{}
	for i, r := range sub.requests() {
		var e envelope
		_ = json.Unmarshal(r.body, &e)
		for _, id := range e.ids() {
			seen[id]++
		}
		if slices.Contains(e.ids(), "big") {
			if len(e.Events) != 1 {
				t.Errorf("the big event shares batch %d with %v", i, e.ids())
			}
			continue
		}
		if len(r.body) > 1024 {
			t.Errorf("batch %d has %d bytes, over maxBytes 1024", i, len(r.body))
		}
	}
	if len(seen) != 9 || len(sub.requests()) < 3 {
		t.Errorf("events sent %v in %d POSTs; want all 9 once, in at least 3", seen, len(sub.requests()))
	}
	for id, n := range seen {
		if n != 1 {
			t.Errorf("%s sent %d times", id, n)
		}
	}
}

// TestBatchAllOrNothing: a batch answered 500 fails every event of it,
// each hidden for its schedule's delay and recorded FAILED in that batch;
// the same events received again make the same batch (same webhook-id),
// and after its 2xx a later receive sends none of them again.
func TestBatchAllOrNothing(t *testing.T) {
	secret := newSecret(t)
	var mu sync.Mutex
	status := http.StatusInternalServerError
	sub := newSubscriber(t, secret, func(string) reply {
		mu.Lock()
		defer mu.Unlock()
		return reply{status: status}
	})
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}))
	ctx := context.Background()
	resp, _ := hs.h.Handle(ctx, records("e1", "e2"))
	if diff := cmp.Diff([]string{"msg-e1-1", "msg-e2-1"}, failures(resp)); diff != "" {
		t.Fatalf("failures (-want +got):\n%s", diff)
	}
	vis := hs.sqs.visibility()
	if !slices.Equal(vis["rh-e1"], []int32{5}) || !slices.Equal(vis["rh-e2"], []int32{5}) {
		t.Errorf("visibility %v; want each hidden for the schedule's first delay (5 s)", vis)
	}
	first := sub.requests()[0].header.Get(https.HeaderID)
	for _, e := range []string{"e1", "e2"} {
		if r := record(t, hs, e); r.Status != dedupe.StatusFailed || r.History[0].Batch != first || r.History[0].HTTPStatus != 500 || string(r.History[0].Answer) != `{"ok":true}` {
			t.Errorf("%s: %s %+v", e, r.Status, r.History)
		}
	}
	mu.Lock()
	status = http.StatusNoContent
	mu.Unlock()
	hs.clock.Advance(10 * time.Second)
	again := batch(sqsRecord("e1", 2), sqsRecord("e2", 2))
	if resp, _ := hs.h.Handle(ctx, again); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("retry failures %v", failures(resp))
	}
	reqs := sub.requests()
	if len(reqs) != 2 || reqs[1].header.Get(https.HeaderID) != first || reqs[1].header.Get(https.HeaderAttempt) != "2" {
		t.Fatalf("retry: %d requests, id %q attempt %q; want the same batch id %s, attempt 2", len(reqs), reqs[len(reqs)-1].header.Get(https.HeaderID), reqs[len(reqs)-1].header.Get(https.HeaderAttempt), first)
	}
	// A copy of e1 with a new event: only the new one is sent.
	if resp, _ := hs.h.Handle(ctx, batch(sqsRecord("e1", 1), sqsRecord("e3", 1))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	bs := batchesOf(t, sub)
	if diff := cmp.Diff([]string{"e3"}, bs[len(bs)-1].ids()); diff != "" {
		t.Errorf("after delivery, a later batch carries (-want +got):\n%s", diff)
	}
	if hs.sink.sum(metrics.DeliveryDuplicate) != 1 {
		t.Errorf("DeliveryDuplicate = %v, want 1", hs.sink.sum(metrics.DeliveryDuplicate))
	}
}

// TestBatchLastAttemptDead: a batch failing on its events' last attempt
// takes each to the DLQ; 410 ends each event.
func TestBatchFinalAndGone(t *testing.T) {
	secret := newSecret(t)
	answer := http.StatusBadGateway
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: answer} })
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}))
	last := hs.h.policy.Attempts()
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", last), sqsRecord("e2", 1)))
	if diff := cmp.Diff([]string{"msg-e1-" + strconv.Itoa(last), "msg-e2-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if r := record(t, hs, "e1"); r.Status != dedupe.StatusDead {
		t.Errorf("e1 on its last attempt: %s, want DEAD", r.Status)
	}
	if r := record(t, hs, "e2"); r.Status != dedupe.StatusFailed {
		t.Errorf("e2 on its first attempt: %s, want FAILED", r.Status)
	}
	answer = http.StatusGone
	resp, _ = hs.h.Handle(context.Background(), batch(sqsRecord("e3", 1)))
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("410: failures %v; want acknowledged", failures(resp))
	}
	if r := record(t, hs, "e3"); r.Status != dedupe.StatusGone {
		t.Errorf("e3 after 410: %s", r.Status)
	}
}

// TestBatchBadInputs: a malformed record goes to the DLQ, an event the
// body filter refuses is acknowledged, a body that is not JSON travels
// as data_base64, and a transform reshapes each event's data; the rest
// of the invocation goes in the batch.
func TestBatchBadInputs(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}), withTransform(`{id, cents: .amount}`), func(o *laneOptions) {
		o.Destination.Filter.Body = config.BodyFilter(`{"amount":[{"numeric":[">=",1000]}]}`)
	})
	malformed := sqsRecord("bad", 1)
	delete(malformed.MessageAttributes, "id")
	small := sqsRecord("small", 1)
	small.Body = `{"id":"small","amount":5}`
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1), malformed, small, sqsRecord("e2", 1)))
	if diff := cmp.Diff([]string{"msg-bad-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	bs := batchesOf(t, sub)
	if len(bs) != 1 {
		t.Fatalf("%d POSTs", len(bs))
	}
	if diff := cmp.Diff([]string{"e1", "e2"}, bs[0].ids()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := string(bs[0].Events[0].Data); got != `{"cents":4200,"id":"e1"}` {
		t.Errorf("data %s, want the transform's output", got)
	}

	// A body that is not JSON.
	sub2 := newSubscriber(t, secret, nil)
	hs2 := newHarness(t, sub2.URL, secret, batched(config.Batch{MaxEvents: 10}))
	text := sqsRecord("t", 1)
	text.Body = "a=1&b=2"
	ct := "application/x-www-form-urlencoded"
	text.MessageAttributes["content_type"] = events.SQSMessageAttribute{StringValue: &ct, DataType: "String"}
	if resp, _ := hs2.h.Handle(context.Background(), batch(text, sqsRecord("j", 1))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	e := batchesOf(t, sub2)[0].Events[0]
	raw, _ := base64.StdEncoding.DecodeString(e.DataBase64)
	if e.Data != nil || string(raw) != "a=1&b=2" || e.ContentType != ct {
		t.Errorf("form body item: data %s, data_base64 %q (%q), content_type %q", e.Data, e.DataBase64, raw, e.ContentType)
	}
}

// TestBatchOrdered: on an ordered lane a batch holds each key's events
// consecutively, in order; a batch that fails holds its keys: the key's
// events in a later batch come back unsent, behind it, while the other
// keys are delivered.
func TestBatchOrdered(t *testing.T) {
	secret := newSecret(t)
	var mu sync.Mutex
	var failID string
	sub := newSubscriber(t, secret, func(id string) reply {
		mu.Lock()
		defer mu.Unlock()
		if id == failID {
			return reply{status: http.StatusInternalServerError}
		}
		return reply{status: http.StatusOK}
	})
	hs := newHarness(t, sub.URL, secret, ordered, batched(config.Batch{MaxEvents: 10}))
	ev := batch(orderedRecord("a1", "A", 1), orderedRecord("b1", "B", 1), orderedRecord("a2", "A", 1), orderedRecord("b2", "B", 1))
	if resp, _ := hs.h.Handle(context.Background(), ev); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	bs := batchesOf(t, sub)
	if len(bs) != 1 {
		t.Fatalf("%d POSTs, want 1", len(bs))
	}
	if diff := cmp.Diff([]string{"a1", "a2", "b1", "b2"}, bs[0].ids()); diff != "" {
		t.Errorf("each key's events consecutive, in order (-want +got):\n%s", diff)
	}

	// Key C's four events do not fit one batch (each item is about 180
	// bytes): c1..c3 go first, then c4 with d1. The first batch fails:
	// c4 is not sent, d1 is.
	sub.mu.Lock()
	sub.got = nil
	sub.mu.Unlock()
	hs = newHarness(t, sub.URL, secret, ordered, batched(config.Batch{MaxEvents: 10, MaxBytes: 650}))
	recs := batch(orderedRecord("c1", "C", 1), orderedRecord("c2", "C", 1), orderedRecord("c3", "C", 1), orderedRecord("c4", "C", 1), orderedRecord("d1", "D", 1))
	mu.Lock()
	failID = sender.BatchID([]sender.Delivery{{ID: "c1"}, {ID: "c2"}, {ID: "c3"}})
	mu.Unlock()
	resp, _ := hs.h.Handle(context.Background(), recs)
	got := [][]string{}
	for _, b := range batchesOf(t, sub) {
		got = append(got, b.ids())
	}
	if diff := cmp.Diff([][]string{{"c1", "c2", "c3"}, {"d1"}}, got); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"msg-c1-1", "msg-c2-1", "msg-c3-1", "msg-c4-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if v := hs.sqs.visibility()["rh-c4"]; !slices.Equal(v, []int32{0}) {
		t.Errorf("c4's visibility %v; want 0, behind c3", v)
	}
	if r := record(t, hs, "c4"); r.Attempts != 0 || len(r.History) != 0 || !r.LeaseUntil.IsZero() {
		t.Errorf("c4: %+v; want its lease given back unsent and uncounted", r)
	}
	if r := record(t, hs, "d1"); r.Status != dedupe.StatusDelivered {
		t.Errorf("d1: %s, want DELIVERED", r.Status)
	}
}

// TestBatchPacedTakesOneToken: a paced batched lane spends one token per
// batch, not per event.
func TestBatchPacedTakesOneToken(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	// A burst of 1 and 6 a minute: a second token is 10 s away.
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6, Burst: 1}, batched(config.Batch{MaxEvents: 10}))
	resp, _ := hs.h.Handle(context.Background(), records("e1", "e2", "e3", "e4"))
	if len(resp.BatchItemFailures) != 0 || len(pl.requeue.calls()) != 0 {
		t.Fatalf("failures %v, copies %d; want the batch sent on the one token", failures(resp), len(pl.requeue.calls()))
	}
	if n := len(sub.requests()); n != 1 {
		t.Fatalf("%d POSTs", n)
	}
	// The next batch finds no token: its events are deferred as copies,
	// unclaimed.
	resp, _ = hs.h.Handle(context.Background(), records("e5", "e6"))
	if len(resp.BatchItemFailures) != 0 || len(pl.requeue.calls()) != 2 || len(sub.requests()) != 1 {
		t.Fatalf("failures %v, copies %d, POSTs %d; want both deferred", failures(resp), len(pl.requeue.calls()), len(sub.requests()))
	}
	if hs.sink.sum(metrics.DeliveryPaced) != 2 {
		t.Errorf("DeliveryPaced = %v, want 2", hs.sink.sum(metrics.DeliveryPaced))
	}
	if _, found, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e5")); found {
		t.Error("a deferred event was claimed")
	}
}

// TestBatchPauseAndProbe: a failed batch counts once toward the pause
// rule (a batch is one request), and a paused batched lane's probe is a
// batch of one.
func TestBatchPauseAndProbe(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusServiceUnavailable} })
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 2}, batched(config.Batch{MaxEvents: 10}))
	ctx := context.Background()
	if _, err := ps.h.Handle(ctx, records("e1", "e2", "e3")); err != nil {
		t.Fatal(err)
	}
	if ps.state(t).IsPaused() {
		t.Fatal("one failed batch of 3 paused a lane that pauses after 2 failures")
	}
	if _, err := ps.h.Handle(ctx, records("e4")); err != nil {
		t.Fatal(err)
	}
	if !ps.state(t).IsPaused() {
		t.Fatal("two failed batches did not pause the lane")
	}
	ps.clock.Advance(time.Minute)
	if _, err := ps.h.Tick(ctx); err != nil {
		t.Fatal(err)
	}
	reqs := sub.requests()
	probe := reqs[len(reqs)-1]
	var e envelope
	if err := json.Unmarshal(probe.body, &e); err != nil || len(e.Events) != 1 || e.Events[0].Type != ProbeType || probe.err != nil {
		t.Errorf("probe: %s (%v, verify %v); want a signed batch of one probe", probe.body, err, probe.err)
	}
}

// fakeBatchSender answers every batch with one result per delivery and
// records the batches.
type fakeBatchSender struct {
	mu      sync.Mutex
	batches [][]string
	results func(ds []sender.Delivery) []sender.Result
}

func (f *fakeBatchSender) Prepare(context.Context) error { return nil }

func (f *fakeBatchSender) Send(_ context.Context, d sender.Delivery) sender.Result {
	return f.SendBatch(context.Background(), []sender.Delivery{d})[0]
}

func (f *fakeBatchSender) SendBatch(_ context.Context, ds []sender.Delivery) []sender.Result {
	f.mu.Lock()
	var ids []string
	for _, d := range ds {
		ids = append(ids, d.ID)
	}
	f.batches = append(f.batches, ids)
	f.mu.Unlock()
	return f.results(ds)
}

// TestBatchPerEntryResults: a batch sender reporting each entry's outcome
// (an AWS target's batch API) fails only the entries it failed; a sender
// answering the wrong number of results fails the whole batch.
func TestBatchPerEntryResults(t *testing.T) {
	fs := &fakeBatchSender{results: func(ds []sender.Delivery) []sender.Result {
		out := make([]sender.Result, len(ds))
		for i, d := range ds {
			out[i] = sender.Result{Status: 200}
			if d.ID == "e2" {
				out[i] = sender.Result{Status: 500}
			}
		}
		return out
	}}
	hs := newHarness(t, "http://127.0.0.1:1", newSecret(t), batched(config.Batch{MaxEvents: 10}), func(o *laneOptions) {})
	hs.h.sender = fs
	resp, _ := hs.h.Handle(context.Background(), records("e1", "e2", "e3"))
	if diff := cmp.Diff([]string{"msg-e2-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	fs.results = func(ds []sender.Delivery) []sender.Result { return []sender.Result{{Status: 200}} }
	resp, _ = hs.h.Handle(context.Background(), records("f1", "f2"))
	if diff := cmp.Diff([]string{"msg-f1-1", "msg-f2-1"}, failures(resp)); diff != "" {
		t.Errorf("a short answer: failures (-want +got):\n%s", diff)
	}
	if r := record(t, hs, "f1"); r.Status != dedupe.StatusFailed || !strings.Contains(r.LastError, "1 results for a batch of 2") {
		t.Errorf("f1: %s %q", r.Status, r.LastError)
	}
}

// TestBatchReplay: an operator's replay of a delivered event goes in a
// batch again (its claim is the replay's), and a copy of the replayed
// message is not sent twice.
func TestBatchReplay(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}))
	ctx := context.Background()
	if resp, _ := hs.h.Handle(ctx, records("e1", "e2")); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	hs.clock.Advance(time.Minute)
	if resp, _ := hs.h.Handle(ctx, batch(replayOf("e1", "rpl_a", "r1"), sqsRecord("e2", 1), sqsRecord("e3", 1))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	hs.clock.Advance(time.Minute)
	if resp, _ := hs.h.Handle(ctx, batch(replayOf("e1", "rpl_a", "r1-copy"))); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	var got [][]string
	for _, b := range batchesOf(t, sub) {
		got = append(got, b.ids())
	}
	if diff := cmp.Diff([][]string{{"e1", "e2"}, {"e1", "e3"}}, got); diff != "" {
		t.Errorf("batches (-want +got):\n%s", diff)
	}
	if r := record(t, hs, "e1"); !slices.Contains(r.Replays, "rpl_a") || r.History[len(r.History)-1].Replay != "rpl_a" || r.History[len(r.History)-1].Batch == "" {
		t.Errorf("e1's record %+v; want the replay's attempt in a batch", r)
	}
}

// TestBatchTransformsBounded: a batched lane claims many records at once
// but runs at most its concurrency's transforms at once.
func TestBatchTransformsBounded(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 100, Window: time.Second}), withTransform(`.`), func(o *laneOptions) { o.Concurrency = 2 })
	if cap(hs.h.shapeSlots) != 2 {
		t.Fatalf("%d transform slots, want the concurrency, 2", cap(hs.h.shapeSlots))
	}
	var ids []string
	for i := range 30 {
		ids = append(ids, "e"+strconv.Itoa(i))
	}
	if resp, _ := hs.h.Handle(context.Background(), records(ids...)); len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	if n := len(batchesOf(t, sub)[0].Events); n != 30 {
		t.Errorf("%d events in the batch, want 30", n)
	}
}

// TestBatchPacedSecondBatchHeldAfterItsClaims: a paced lane's invocation
// split in two batches takes a token for the second at its send; when
// none is due within its budget, each of its events gives its lease back
// uncounted and is deferred as a copy, and none is sent.
func TestBatchPacedSecondBatchHeldAfterItsClaims(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs, pl := newPacedHarness(t, sub.URL, secret, config.RateLimit{PerMinute: 6, Burst: 1}, batched(config.Batch{MaxEvents: 10, MaxBytes: 400}))
	resp, _ := hs.h.Handle(context.Background(), records("e1", "e2", "e3", "e4"))
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("failures %v", failures(resp))
	}
	bs := batchesOf(t, sub)
	if len(bs) != 1 || !slices.Equal(bs[0].ids(), []string{"e1", "e2"}) {
		t.Fatalf("batches %v; want only e1, e2 sent", bs)
	}
	var copies []string
	for _, c := range pl.requeue.calls() {
		copies = append(copies, attr(c, "id"))
	}
	slices.Sort(copies)
	if !slices.Equal(copies, []string{"e3", "e4"}) {
		t.Errorf("copies %v; want e3 and e4 deferred", copies)
	}
	for _, id := range []string{"e3", "e4"} {
		if r := record(t, hs, id); r.Attempts != 0 || len(r.History) != 0 {
			t.Errorf("%s: %+v; want its claim given back uncounted", id, r)
		}
	}
	if hs.sink.sum(metrics.DeliveryPaced) != 2 {
		t.Errorf("DeliveryPaced = %v, want 2", hs.sink.sum(metrics.DeliveryPaced))
	}
}

// BenchmarkBatchedLane delivers invocations to a loopback subscriber that
// answers after 100 ms, per event: an unbatched lane's invocation of 10
// (one POST each, at once), and a batched lane's of 10, 100 and 1000 (one
// POST for all). Budget: a batched invocation of 100 costs at most a
// tenth of the unbatched lane's wall time per event, and one POST.
func BenchmarkBatchedLane(b *testing.B) {
	secret := newSecret(b)
	sub := newSubscriber(b, secret, func(string) reply { return reply{status: http.StatusOK, delay: 100 * time.Millisecond} })
	for _, tc := range []struct {
		name  string
		size  int
		batch *config.Batch
	}{
		{"unbatched-10", 10, nil},
		{"batch-10", 10, &config.Batch{MaxEvents: 10}},
		{"batch-100", 100, &config.Batch{MaxEvents: 100, Window: time.Second}},
		{"batch-1000", 1000, &config.Batch{MaxEvents: 1000, Window: time.Second}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			h := benchHandler(b, sub.URL, secret, nil, func(o *laneOptions) { o.Destination.Batch = tc.batch })
			h.Handle(context.Background(), batches(1, tc.size, "warm-"+tc.name)[0])
			evs := batches(b.N, tc.size, fmt.Sprintf("%s-%d", tc.name, b.N))
			before := len(sub.requests())
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				resp, _ := h.Handle(context.Background(), evs[i])
				if len(resp.BatchItemFailures) != 0 {
					b.Fatalf("failures: %v", resp.BatchItemFailures)
				}
			}
			b.StopTimer()
			events := float64(b.N * tc.size)
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
			b.ReportMetric(float64(len(sub.requests())-before)/events, "posts/event")
		})
	}
}

// TestBatchSenderPanics: a batch whose send panics fails each of its
// records alone; the invocation answers.
func TestBatchSenderPanics(t *testing.T) {
	fs := &fakeBatchSender{results: func([]sender.Delivery) []sender.Result { panic("boom") }}
	hs := newHarness(t, "http://127.0.0.1:1", newSecret(t), batched(config.Batch{MaxEvents: 2}))
	hs.h.sender = fs
	resp, err := hs.h.Handle(context.Background(), records("e1", "e2", "e3"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"msg-e1-1", "msg-e2-1", "msg-e3-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

// gatedFinish is a record store whose outcome writes wait at a gate: the
// test sees how many are in flight at once before it opens the gate.
type gatedFinish struct {
	*dedupe.Memory
	mu       sync.Mutex
	inFlight int
	most     int
	gate     chan struct{}
}

func (g *gatedFinish) Finish(ctx context.Context, l dedupe.Lease, out dedupe.Outcome) error {
	g.mu.Lock()
	g.inFlight++
	g.most = max(g.most, g.inFlight)
	g.mu.Unlock()
	defer func() {
		g.mu.Lock()
		g.inFlight--
		g.mu.Unlock()
	}()
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Memory.Finish(ctx, l, out)
}

func (g *gatedFinish) waiting() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.inFlight
}

// TestBatchRecordsWrittenAtOnce: a batch's outcomes are written together,
// not one after another (on the code before, the second write waited for
// the first: at most one in flight, 2.3 s of a 462-event invocation).
func TestBatchRecordsWrittenAtOnce(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	store := &gatedFinish{Memory: dedupe.NewMemory(), gate: make(chan struct{})}
	hs := newHarness(t, sub.URL, secret, batched(config.Batch{MaxEvents: 10}), func(o *laneOptions) { o.Store = store })
	hs.store = store.Memory
	ids := []string{"e1", "e2", "e3", "e4", "e5", "e6", "e7", "e8"}
	done := make(chan events.SQSEventResponse, 1)
	go func() {
		resp, _ := hs.h.Handle(context.Background(), records(ids...))
		done <- resp
	}()
	// The fact to wait for: every write in flight at once. Time out only
	// as the failure (the code before never gets past one).
	deadline := time.Now().Add(10 * time.Second)
	for store.waiting() < len(ids) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	got := store.waiting()
	close(store.gate)
	resp := <-done
	if got != len(ids) {
		t.Errorf("%d outcome writes in flight at once, want all %d of the batch", got, len(ids))
	}
	if len(resp.BatchItemFailures) != 0 || len(sub.requests()) != 1 {
		t.Fatalf("answered %v, %d POSTs; want one POST, all delivered", failures(resp), len(sub.requests()))
	}
	for _, id := range ids {
		if r := record(t, hs, id); r.Status != dedupe.StatusDelivered {
			t.Errorf("%s: %s, want DELIVERED", id, r.Status)
		}
	}
}
