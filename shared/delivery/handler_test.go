package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/message"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/version"
)

// TestBatchPartialFailure: 10 records, 3 failing → exactly those 3
// reported, each hidden for its scheduled delay (chosen by its receive
// count); the 7 others delivered once, signed and verified.
func TestBatchPartialFailure(t *testing.T) {
	secret := newSecret(t)
	failing := map[string]bool{"e3": true, "e5": true, "e8": true}
	sub := newSubscriber(t, secret, func(id string) reply {
		if failing[id] {
			return reply{status: http.StatusInternalServerError}
		}
		return reply{status: http.StatusNoContent}
	})
	hs := newHarness(t, sub.URL, secret)
	attempts := map[string]int{"e3": 1, "e5": 2, "e8": 4}
	var ev events.SQSEvent
	for i := range 10 {
		id := fmt.Sprintf("e%d", i)
		ev.Records = append(ev.Records, sqsRecord(id, max(attempts[id], 1)))
	}
	resp, err := hs.h.Handle(context.Background(), ev)
	if err != nil {
		t.Fatalf("Handle error = %v, want nil always", err)
	}
	want := []string{"msg-e3-1", "msg-e5-2", "msg-e8-4"}
	got := failures(resp)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batch item failures (-want +got):\n%s", diff)
	}
	// Default schedule 5s, 30s, 2m, 10m, … by receive count.
	wantVis := map[string][]int32{"rh-e3": {5}, "rh-e5": {30}, "rh-e8": {600}}
	if diff := cmp.Diff(wantVis, hs.sqs.visibility()); diff != "" {
		t.Errorf("visibility changes (-want +got):\n%s", diff)
	}
	reqs := sub.requests()
	if len(reqs) != 10 {
		t.Fatalf("%d POSTs, want 10", len(reqs))
	}
	for _, r := range reqs {
		if r.err != nil {
			t.Errorf("delivery %s does not verify: %v", r.header.Get(https.HeaderID), r.err)
		}
	}
	for id, wantStatus := range map[string]dedupe.Status{"e0": dedupe.StatusDelivered, "e3": dedupe.StatusFailed, "e8": dedupe.StatusFailed} {
		r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", id))
		if r.Status != wantStatus {
			t.Errorf("record %s status = %s, want %s", id, r.Status, wantStatus)
		}
	}
	for name, want := range map[string]float64{
		metrics.DeliverySucceeded: 7, metrics.DeliveryFailed: 3, metrics.DeliveryAttempts: 10, metrics.DeliveryDead: 0,
	} {
		if got := hs.sink.sum(name); got != want {
			t.Errorf("metric %s = %g, want %g", name, got, want)
		}
	}
}

// TestBatchAllDelivered: none failing → an empty (not null) list.
func TestBatchAllDelivered(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)
	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("a", 1), sqsRecord("b", 1), sqsRecord("c", 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(b), `{"batchItemFailures":[]}`; got != want {
		t.Errorf("response = %s, want %s", got, want)
	}
	if n := len(hs.sqs.visibility()); n != 0 {
		t.Errorf("%d visibility changes, want none", n)
	}
}

// TestBatchMalformed: malformed records fail alone, released at once so
// the redrive policy moves them to the DLQ; the rest of the batch is
// delivered.
func TestBatchMalformed(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)

	noAttrs := sqsRecord("x1", 1)
	noAttrs.MessageAttributes = nil
	snsEnvelope := events.SQSMessage{ // not raw delivery: an SNS JSON envelope, no attributes
		MessageId: "msg-envelope", ReceiptHandle: "rh-envelope",
		Body:       `{"Type":"Notification","MessageId":"1","Message":"{}"}`,
		Attributes: map[string]string{"ApproximateReceiveCount": "1"},
	}
	badBase64 := sqsRecord("x2", 1)
	enc := "base64"
	badBase64.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: &enc, DataType: "String"}
	badBase64.Body = "%%% not base64"

	resp, err := hs.h.Handle(context.Background(), batch(sqsRecord("ok1", 1), noAttrs, snsEnvelope, sqsRecord("ok2", 1), badBase64))
	if err != nil {
		t.Fatal(err)
	}
	got := failures(resp)
	slices.Sort(got)
	if diff := cmp.Diff([]string{"msg-envelope", "msg-x1-1", "msg-x2-1"}, got); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	wantVis := map[string][]int32{"rh-x1": {0}, "rh-envelope": {0}, "rh-x2": {0}}
	if diff := cmp.Diff(wantVis, hs.sqs.visibility()); diff != "" {
		t.Errorf("visibility (-want +got):\n%s", diff)
	}
	if sub.posts("ok1") != 1 || sub.posts("ok2") != 1 || len(sub.requests()) != 2 {
		t.Errorf("POSTs = %d (ok1 %d, ok2 %d), want one each for the good records only", len(sub.requests()), sub.posts("ok1"), sub.posts("ok2"))
	}
	malformed := 0
	for _, l := range hs.logs.lines(t) {
		if l["outcome"] == "malformed" {
			malformed++
			if l["message_id"] == "" || l["error"] == "" {
				t.Errorf("malformed log line lacks message_id or error: %v", l)
			}
		}
	}
	if malformed != 3 {
		t.Errorf("%d malformed log lines, want 3", malformed)
	}
}

// TestOutcomes drives one record per case against a subscriber answering
// as the case says.
func TestOutcomes(t *testing.T) {
	// The harness's clock starts at base, so an HTTP date (whole seconds)
	// means the same delay whenever the subtest runs.
	base := time.Now().Truncate(time.Second)
	httpDate := func(d time.Duration) string { return base.Add(d).UTC().Format(http.TimeFormat) }
	tests := []struct {
		name       string
		reply      reply
		attempt    int
		wantFailed bool
		wantVis    []int32 // visibility changes, nil for none
		wantStatus dedupe.Status
		wantError  string
		wantDead   float64
	}{
		{name: "200", reply: reply{status: 200}, attempt: 1, wantStatus: dedupe.StatusDelivered},
		{name: "204", reply: reply{status: 204}, attempt: 3, wantStatus: dedupe.StatusDelivered},
		{name: "302 to the metadata service is not followed", reply: reply{status: 302, header: map[string]string{"Location": "http://169.254.169.254/latest/meta-data/"}},
			attempt: 1, wantFailed: true, wantVis: []int32{5}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 302"},
		{name: "400", reply: reply{status: 400}, attempt: 2, wantFailed: true, wantVis: []int32{30}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 400"},
		{name: "500 ignores Retry-After", reply: reply{status: 500, header: map[string]string{"Retry-After": "600"}},
			attempt: 1, wantFailed: true, wantVis: []int32{5}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 500"},
		{name: "429 Retry-After seconds lengthens the delay", reply: reply{status: 429, header: map[string]string{"Retry-After": "120"}},
			attempt: 1, wantFailed: true, wantVis: []int32{120}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 429"},
		{name: "429 Retry-After never shortens the schedule", reply: reply{status: 429, header: map[string]string{"Retry-After": "1"}},
			attempt: 3, wantFailed: true, wantVis: []int32{120}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 429"},
		{name: "503 Retry-After HTTP date", reply: reply{status: 503, header: map[string]string{"Retry-After": httpDate(10 * time.Minute)}},
			attempt: 1, wantFailed: true, wantVis: []int32{600}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 503"},
		{name: "503 Retry-After capped at 12h from the receive, less the margin", reply: reply{status: 503, header: map[string]string{"Retry-After": "999999"}},
			attempt: 8, wantFailed: true, wantVis: []int32{43200 - 60}, wantStatus: dedupe.StatusFailed, wantError: "HTTP 503"},
		{name: "410 stops retrying", reply: reply{status: 410}, attempt: 1, wantStatus: dedupe.StatusGone, wantError: "HTTP 410", wantDead: 1},
		{name: "timeout", reply: reply{status: 200, delay: 5 * time.Second}, attempt: 1, wantFailed: true, wantVis: []int32{5},
			wantStatus: dedupe.StatusFailed, wantError: "timeout"},
		{name: "final attempt turns DEAD and releases to the DLQ", reply: reply{status: 500}, attempt: 10, wantFailed: true, wantVis: []int32{0},
			wantStatus: dedupe.StatusDead, wantError: "HTTP 500", wantDead: 1},
		{name: "beyond the final attempt (redriven)", reply: reply{status: 502}, attempt: 12, wantFailed: true, wantVis: []int32{0},
			wantStatus: dedupe.StatusDead, wantError: "HTTP 502", wantDead: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			secret := newSecret(t)
			sub := newSubscriber(t, secret, func(string) reply { return tt.reply })
			hs := newHarness(t, sub.URL, secret)
			hs.clock.Set(base)
			resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", tt.attempt)))
			if got := len(resp.BatchItemFailures) == 1; got != tt.wantFailed {
				t.Errorf("reported failed = %v, want %v", got, tt.wantFailed)
			}
			if diff := cmp.Diff(tt.wantVis, hs.sqs.visibility()["rh-e1"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
			if r.Status != tt.wantStatus || r.LastError != tt.wantError {
				t.Errorf("record = %s %q, want %s %q", r.Status, r.LastError, tt.wantStatus, tt.wantError)
			}
			if r.LeaseToken != "" {
				t.Errorf("record keeps lease token %q after finishing", r.LeaseToken)
			}
			if got := len(sub.requests()); got != 1 {
				t.Errorf("%d requests, want 1 (redirects are not followed)", got)
			}
			if got := hs.sink.sum(metrics.DeliveryDead); got != tt.wantDead {
				t.Errorf("DeliveryDead = %g, want %g", got, tt.wantDead)
			}
		})
	}
}

func TestConnectionRefused(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	url := sub.URL
	sub.Close()
	hs := newHarness(t, url, secret)
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("failures = %v, want the record", resp.BatchItemFailures)
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	if r.Status != dedupe.StatusFailed || !strings.Contains(r.LastError, "refused") || strings.Contains(r.LastError, url) {
		t.Errorf("record = %s %q, want FAILED with a connection error that does not quote the URL", r.Status, r.LastError)
	}
}

// TestRequest checks the delivery request a subscriber receives.
func TestRequest(t *testing.T) {
	oldSecret, newSecretV := newSecret(t), newSecret(t)
	sub := newSubscriber(t, newSecretV, nil)
	hs := newHarness(t, sub.URL, oldSecret)
	hs.secrets.set(oldSecret, newSecretV) // mid-rotation: both active
	msg := sqsRecord("evt_42", 3)
	msg.MessageAttributes[message.AttrContentType] = events.SQSMessageAttribute{StringValue: ptr("application/x-www-form-urlencoded; charset=utf-8")}
	raw := []byte{0xff, 0xfe, 'a', 0x00, 'b'}
	msg.Body = "//5hAGI="
	msg.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: ptr("base64")}
	if _, err := hs.h.Handle(context.Background(), batch(msg)); err != nil {
		t.Fatal(err)
	}
	reqs := sub.requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests, want 1", len(reqs))
	}
	r := reqs[0]
	if r.err != nil {
		t.Errorf("receiver holding the new secret cannot verify: %v", r.err)
	}
	if diff := cmp.Diff(raw, r.body); diff != "" {
		t.Errorf("body (-want +got):\n%s", diff)
	}
	want := map[string]string{
		"Content-Type":      "application/x-www-form-urlencoded; charset=utf-8",
		"User-Agent":        version.UserAgent,
		"Webhook-Id":        "evt_42",
		"Webhook-Timestamp": fmt.Sprint(hs.clock.Now().Unix()),
		"Hookfan-Source":    "stripe",
		"Hookfan-Type":      "invoice.paid",
		"Hookfan-Attempt":   "3",
	}
	for k, v := range want {
		if got := r.header.Get(k); got != v {
			t.Errorf("header %s = %q, want %q", k, got, v)
		}
	}
	if sigs := strings.Fields(r.header.Get(https.HeaderSignature)); len(sigs) != 2 {
		t.Errorf("webhook-signature = %q, want two signatures during rotation", r.header.Get(https.HeaderSignature))
	}
	// Receivers built on either library, holding either secret, verify the
	// delivery as it arrived on the wire.
	for _, secret := range []string{oldSecret, newSecretV} {
		sw, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := sw.Verify(r.body, r.header); err != nil {
			t.Errorf("standard-webhooks receiver: %v", err)
		}
		sv, err := svix.NewWebhook(secret)
		if err != nil {
			t.Fatal(err)
		}
		if err := sv.Verify(r.body, r.header); err != nil {
			t.Errorf("svix receiver: %v", err)
		}
	}
}

func ptr(s string) *string { return &s }

// TestDuplicateMessage: the same event arriving twice → one POST; the copy
// is acknowledged and counted.
func TestDuplicateMessage(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)
	first, second := sqsRecord("e1", 1), sqsRecord("e1", 1)
	second.MessageId, second.ReceiptHandle = "msg-copy", "rh-copy"
	for _, m := range []events.SQSMessage{first, second} {
		resp, _ := hs.h.Handle(context.Background(), batch(m))
		if len(resp.BatchItemFailures) != 0 {
			t.Errorf("message %s reported failed: %v", m.MessageId, resp.BatchItemFailures)
		}
		hs.clock.Advance(time.Minute)
	}
	if n := sub.posts("e1"); n != 1 {
		t.Errorf("%d POSTs, want 1", n)
	}
	if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 1 {
		t.Errorf("DeliveryDuplicate = %g, want 1", got)
	}
}

// TestGoneIsFinal: after a 410 the record is GONE, and every later copy of
// the event — the provider resending it, SNS delivering it twice, a
// redrive from the DLQ — is acknowledged without a POST.
func TestGoneIsFinal(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusGone} })
	hs := newHarness(t, sub.URL, secret)
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if len(resp.BatchItemFailures) != 0 {
		t.Fatalf("410: failures %v, want acknowledged", resp.BatchItemFailures)
	}
	for i, attempt := range []int{1, 2, 11} {
		hs.clock.Advance(time.Hour)
		copyOf := sqsRecord("e1", attempt)
		copyOf.MessageId, copyOf.ReceiptHandle = fmt.Sprintf("msg-copy-%d", i), fmt.Sprintf("rh-copy-%d", i)
		resp, _ := hs.h.Handle(context.Background(), batch(copyOf))
		if len(resp.BatchItemFailures) != 0 {
			t.Errorf("copy %d: failures %v, want acknowledged", i, resp.BatchItemFailures)
		}
	}
	if n := sub.posts("e1"); n != 1 {
		t.Errorf("%d POSTs, want 1: a destination that answered 410 gets no copy", n)
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	if r.Status != dedupe.StatusGone || r.LastStatus != http.StatusGone || r.Attempts != 1 {
		t.Errorf("record = %s, last %d, %d claims; want GONE, 410, 1", r.Status, r.LastStatus, r.Attempts)
	}
	if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 3 {
		t.Errorf("DeliveryDuplicate = %g, want 3 (one per copy)", got)
	}
}

// TestCopiesInOneBatch: copies of one event in the same batch are
// attempted once, through the copy with the fewest receives; the others are
// acknowledged as duplicates at once, whatever the attempt's outcome, and a
// malformed copy is never the one kept.
func TestCopiesInOneBatch(t *testing.T) {
	secret := newSecret(t)
	copyOf := func(id string, attempt int, name string) events.SQSMessage {
		m := sqsRecord(id, attempt)
		m.MessageId, m.ReceiptHandle = "msg-"+name, "rh-"+name
		return m
	}
	duplicateLines := func(t *testing.T, hs *harness) map[string]any {
		t.Helper()
		carriers := map[string]any{}
		for _, l := range hs.logs.lines(t) {
			if l["outcome"] == "duplicate" {
				carriers[l["message_id"].(string)] = l["carrier_message_id"]
			}
		}
		return carriers
	}

	t.Run("delivered", func(t *testing.T) {
		sub := newSubscriber(t, secret, nil)
		hs := newHarness(t, sub.URL, secret)
		resp, _ := hs.h.Handle(context.Background(), batch(
			copyOf("e1", 2, "a"), copyOf("e1", 1, "b"), sqsRecord("e2", 1), copyOf("e1", 3, "c")))
		if got := failures(resp); len(got) != 0 {
			t.Errorf("failures = %v, want none", got)
		}
		if sub.posts("e1") != 1 || sub.posts("e2") != 1 {
			t.Errorf("POSTs: e1 %d, e2 %d; want 1 each", sub.posts("e1"), sub.posts("e2"))
		}
		if got := sub.requests()[0].header.Get("webhook-id"); got == "" {
			t.Errorf("no webhook-id on the POST")
		}
		if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 2 {
			t.Errorf("DeliveryDuplicate = %g, want 2", got)
		}
		want := map[string]any{"msg-a": "msg-b", "msg-c": "msg-b"}
		if diff := cmp.Diff(want, duplicateLines(t, hs)); diff != "" {
			t.Errorf("duplicate lines (-want +got):\n%s", diff)
		}
		if v := hs.sqs.visibility(); len(v) != 0 {
			t.Errorf("visibility changed for %v; copies must not wait out a lease", v)
		}
	})

	t.Run("attempt fails", func(t *testing.T) {
		sub := newSubscriber(t, secret, func(string) reply { return reply{status: 500} })
		hs := newHarness(t, sub.URL, secret)
		resp, _ := hs.h.Handle(context.Background(), batch(copyOf("e1", 1, "a"), copyOf("e1", 1, "b")))
		if diff := cmp.Diff([]string{"msg-a"}, failures(resp)); diff != "" {
			t.Errorf("failures (-want +got):\n%s", diff)
		}
		if n := sub.posts("e1"); n != 1 {
			t.Errorf("%d POSTs, want 1", n)
		}
		if v := hs.sqs.visibility(); len(v) != 1 || len(v["rh-a"]) != 1 {
			t.Errorf("visibility = %v, want the carrier's backoff only", v)
		}
	})

	t.Run("malformed copy", func(t *testing.T) {
		sub := newSubscriber(t, secret, nil)
		hs := newHarness(t, sub.URL, secret)
		bad := copyOf("e1", 1, "bad")
		enc := "base64"
		bad.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: &enc, DataType: "String"}
		bad.Body = "%%% not base64"
		resp, _ := hs.h.Handle(context.Background(), batch(bad, copyOf("e1", 2, "good")))
		if diff := cmp.Diff([]string{"msg-bad"}, failures(resp)); diff != "" {
			t.Errorf("failures (-want +got):\n%s", diff)
		}
		if n := sub.posts("e1"); n != 1 {
			t.Errorf("%d POSTs, want 1 (through the well-formed copy)", n)
		}
		if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 0 {
			t.Errorf("DeliveryDuplicate = %g, want 0", got)
		}
	})
}

// TestRacingHandlers: two handlers (two function instances) get the same
// message at once → one POST; the loser backs off past the winner's lease
// and then finds the event delivered.
func TestRacingHandlers(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: 200, delay: 200 * time.Millisecond} })
	a := newHarness(t, sub.URL, secret)
	b := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = a.store; o.Now = a.clock.Now })
	var wg sync.WaitGroup
	resps := make([]events.SQSEventResponse, 2)
	for i, hs := range []*harness{a, b} {
		wg.Go(func() { resps[i], _ = hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1))) })
	}
	wg.Wait()
	if n := sub.posts("e1"); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	lost := 0
	var loser *harness
	for i, r := range resps {
		if len(r.BatchItemFailures) == 1 {
			lost++
			loser = []*harness{a, b}[i]
		}
	}
	if lost != 1 {
		t.Fatalf("%d handlers reported the record failed, want exactly the loser", lost)
	}
	// The loser hides the message until the winner's lease (2s for the
	// claim + 2s timeout + 5s reserve) ends, plus a second.
	if got := loser.sqs.visibility()["rh-e1"]; len(got) != 1 || got[0] != 10 {
		t.Errorf("loser's visibility = %v, want [10]", got)
	}
	a.clock.Advance(10 * time.Second)
	resp, _ := loser.h.Handle(context.Background(), batch(sqsRecord("e1", 2)))
	if len(resp.BatchItemFailures) != 0 || sub.posts("e1") != 1 {
		t.Errorf("redelivery: failures %v, POSTs %d; want acknowledged as a duplicate, still 1 POST", resp.BatchItemFailures, sub.posts("e1"))
	}
}

// TestCrashAfterClaim: a function claimed and died. Within its lease the
// message is in flight elsewhere; after the lease the next attempt delivers.
func TestCrashAfterClaim(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)
	now := hs.clock.Now()
	if _, err := hs.store.Claim(context.Background(), dedupe.ClaimInput{
		PK: dedupe.Key("orders", "e1"), Now: now, LeaseUntil: now.Add(20 * time.Second), ExpiresAt: now.Add(time.Hour),
	}); err != nil {
		t.Fatal(err)
	}
	hs.clock.Advance(5 * time.Second)
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 2)))
	if len(resp.BatchItemFailures) != 1 || sub.posts("e1") != 0 {
		t.Fatalf("within the lease: failures %v, POSTs %d; want failed, no POST", resp.BatchItemFailures, sub.posts("e1"))
	}
	if got := hs.sqs.visibility()["rh-e1"]; !slices.Equal(got, []int32{16}) {
		t.Errorf("visibility = %v, want [16] (15s of lease left + 1s)", got)
	}
	hs.clock.Advance(16 * time.Second)
	resp, _ = hs.h.Handle(context.Background(), batch(sqsRecord("e1", 3)))
	if len(resp.BatchItemFailures) != 0 || sub.posts("e1") != 1 {
		t.Errorf("after the lease: failures %v, POSTs %d; want delivered once", resp.BatchItemFailures, sub.posts("e1"))
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	if r.Status != dedupe.StatusDelivered || r.Attempts != 2 {
		t.Errorf("record = %s after %d claims, want DELIVERED after 2", r.Status, r.Attempts)
	}
}

// failingFinish is a store whose Finish writes fail.
type failingFinish struct {
	*dedupe.Memory
	fail bool
}

func (f *failingFinish) Finish(ctx context.Context, l dedupe.Lease, out dedupe.Outcome) error {
	if f.fail {
		return errors.New("ProvisionedThroughputExceededException")
	}
	return f.Memory.Finish(ctx, l, out)
}

// TestRecordWriteFailsAfter2xx is the documented window: a 2xx arrived but
// the DELIVERED write failed. The message is acknowledged (delivered), and
// only if a copy comes back — the function died before its batch response,
// or the provider resent the event — is it delivered again after the lease,
// with the same webhook-id.
func TestRecordWriteFailsAfter2xx(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	mem := dedupe.NewMemory()
	store := &failingFinish{Memory: mem, fail: true}
	hs := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = store })
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures = %v, want the delivered record acknowledged", resp.BatchItemFailures)
	}
	logged := false
	for _, l := range hs.logs.lines(t) {
		if l["outcome"] == "delivered" && l["record_error"] != nil {
			logged = true
			if l["level"] != "WARN" {
				t.Errorf("the failed record write is logged at %v, want WARN (functions.logLevel WARN drops INFO lines)", l["level"])
			}
		}
	}
	if !logged {
		t.Error("no log line reports the failed record write")
	}

	store.fail = false
	hs.clock.Advance(10 * time.Second) // past the lease
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 2))); err != nil {
		t.Fatal(err)
	}
	reqs := sub.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d POSTs, want 2 (the documented repeat)", len(reqs))
	}
	if a, b := reqs[0].header.Get(https.HeaderID), reqs[1].header.Get(https.HeaderID); a != "e1" || b != a {
		t.Errorf("webhook-ids %q and %q, want the same id twice", a, b)
	}
	if diff := cmp.Diff(reqs[0].body, reqs[1].body); diff != "" {
		t.Errorf("repeat body differs (-first +repeat):\n%s", diff)
	}
	hs.clock.Advance(time.Minute)
	if _, err := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 3))); err != nil {
		t.Fatal(err)
	}
	if got := len(sub.requests()); got != 2 {
		t.Errorf("%d POSTs after the record was written, want still 2", got)
	}
}

// TestNotAttempted covers failures of ours before any POST.
func TestNotAttempted(t *testing.T) {
	secret := newSecret(t)
	tests := []struct {
		name    string
		setup   func(*harness)
		opts    func(*laneOptions)
		attempt int
		wantVis []int32
	}{
		{name: "secret store down", setup: func(hs *harness) { hs.secrets.err = errors.New("secret store unavailable") }, attempt: 2, wantVis: []int32{30}},
		{name: "secret not a whsec_ value", setup: func(hs *harness) { hs.secrets.set("hunter2") }, attempt: 1, wantVis: []int32{5}},
		{name: "record store down", opts: func(o *laneOptions) { o.Store = brokenStore{} }, attempt: 1, wantVis: []int32{5}},
		{name: "record store down on the final attempt", opts: func(o *laneOptions) { o.Store = brokenStore{} }, attempt: 10, wantVis: []int32{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := newSubscriber(t, secret, nil)
			opts := []func(*laneOptions){}
			if tt.opts != nil {
				opts = append(opts, tt.opts)
			}
			hs := newHarness(t, sub.URL, secret, opts...)
			if tt.setup != nil {
				tt.setup(hs)
			}
			resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", tt.attempt)))
			if len(resp.BatchItemFailures) != 1 {
				t.Errorf("failures = %v, want the record", resp.BatchItemFailures)
			}
			if diff := cmp.Diff(tt.wantVis, hs.sqs.visibility()["rh-e1"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			if n := len(sub.requests()); n != 0 {
				t.Errorf("%d POSTs, want none", n)
			}
			wantDead := 0.0
			if tt.attempt == 10 {
				wantDead = 1
			}
			if got := hs.sink.sum(metrics.DeliveryDead); got != wantDead {
				t.Errorf("DeliveryDead = %g, want %g", got, wantDead)
			}
			for _, l := range hs.logs.lines(t) {
				if s, _ := l["error"].(string); strings.Contains(s, "hunter2") {
					t.Errorf("log line quotes the secret: %v", l)
				}
			}
		})
	}
}

type brokenStore struct{}

func (brokenStore) Claim(context.Context, dedupe.ClaimInput) (dedupe.Lease, error) {
	return dedupe.Lease{}, errors.New("RequestLimitExceeded")
}

func (brokenStore) Finish(context.Context, dedupe.Lease, dedupe.Outcome) error {
	return errors.New("RequestLimitExceeded")
}

func (brokenStore) Release(context.Context, dedupe.Lease) error {
	return errors.New("dynamodb: service unavailable")
}

// TestVisibilityCallFails: the item is still reported failed.
func TestVisibilityCallFails(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: 500} })
	hs := newHarness(t, sub.URL, secret)
	hs.sqs.err = errors.New("ReceiptHandleIsInvalid")
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if diff := cmp.Diff([]string{"msg-e1-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
}

// TestRemainingTime: the lease and the POST fit in the function's
// remaining time; with too little left the record is released untouched.
func TestRemainingTime(t *testing.T) {
	secret := newSecret(t)
	tests := []struct {
		name      string
		remaining time.Duration
		wantPOSTs int
		wantLease time.Duration // lease length from the claim
		wantVis   []int32
	}{
		// The lease covers the claim (2s), the POST (the 2s timeout, or
		// what is left) and the outcome's write (5s), and ends 2s before
		// the deadline for the visibility call.
		{name: "plenty", remaining: time.Minute, wantPOSTs: 1, wantLease: 9 * time.Second},
		{name: "tight", remaining: 10500 * time.Millisecond, wantPOSTs: 1, wantLease: 8500 * time.Millisecond},
		{name: "too little", remaining: 9500 * time.Millisecond, wantPOSTs: 0, wantVis: []int32{0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sub := newSubscriber(t, secret, nil)
			var leases []dedupe.Lease
			rec := &recordingStore{Memory: dedupe.NewMemory(), leases: &leases}
			hs := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Store = rec; o.Now = time.Now })
			ctx, cancel := context.WithDeadline(context.Background(), time.Now().Add(tt.remaining))
			defer cancel()
			start := time.Now()
			hs.h.Handle(ctx, batch(sqsRecord("e1", 1)))
			if got := len(sub.requests()); got != tt.wantPOSTs {
				t.Errorf("%d POSTs, want %d", got, tt.wantPOSTs)
			}
			if diff := cmp.Diff(tt.wantVis, hs.sqs.visibility()["rh-e1"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			if tt.wantPOSTs == 0 {
				return
			}
			deadline, _ := ctx.Deadline()
			lease := leases[0].Until.Sub(start)
			if leases[0].Until.After(deadline.Add(-VisibilityCallTimeout)) || lease < tt.wantLease-200*time.Millisecond || lease > tt.wantLease+200*time.Millisecond {
				t.Errorf("lease %s ending %s, want about %s and not after the deadline %s", lease, leases[0].Until, tt.wantLease, deadline)
			}
		})
	}
}

type recordingStore struct {
	*dedupe.Memory
	mu     sync.Mutex
	leases *[]dedupe.Lease
}

func (r *recordingStore) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	l, err := r.Memory.Claim(ctx, in)
	r.mu.Lock()
	*r.leases = append(*r.leases, l)
	r.mu.Unlock()
	return l, err
}

// TestAttemptLog: one JSON line per attempt with the fields an operator
// follows an event by.
func TestAttemptLog(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(id string) reply {
		if id == "bad" {
			return reply{status: 503}
		}
		return reply{status: 202}
	})
	hs := newHarness(t, sub.URL, secret)
	hs.h.Handle(context.Background(), batch(sqsRecord("good", 1), sqsRecord("bad", 2)))
	var attempts []map[string]any
	for _, l := range hs.logs.lines(t) {
		if l["msg"] == LogMessage && l["status"] != nil {
			attempts = append(attempts, l)
		}
	}
	if len(attempts) != 2 {
		t.Fatalf("%d attempt lines, want 2", len(attempts))
	}
	want := map[string]map[string]any{
		"good": {"destination": "orders", "id": "good", "type": "invoice.paid", "source": "stripe", "attempt": 1.0, "status": 202.0, "outcome": "delivered", "level": "INFO"},
		"bad":  {"destination": "orders", "id": "bad", "type": "invoice.paid", "source": "stripe", "attempt": 2.0, "status": 503.0, "outcome": "failed", "level": "WARN", "error": "HTTP 503", "retry_in_s": 30.0},
	}
	for _, l := range attempts {
		w := want[l["id"].(string)]
		for k, v := range w {
			if l[k] != v {
				t.Errorf("%s: %s = %v, want %v", l["id"], k, l[k], v)
			}
		}
		if _, ok := l["latency_ms"].(float64); !ok {
			t.Errorf("%s: latency_ms missing", l["id"])
		}
	}
}

func TestNewHandlerRequiresOptions(t *testing.T) {
	_, err := newLane(laneOptions{})
	if err == nil {
		t.Fatal("NewHandler(Options{}) succeeded")
	}
	for _, name := range []string{"Destination.Name", "Destination.URL", "QueueURL", "SecretID", "Store", "SQS", "Secrets", "Client", "Metrics"} {
		if !strings.Contains(err.Error(), "option "+name+" ") {
			t.Errorf("error %q does not name %s", err, name)
		}
	}
}
