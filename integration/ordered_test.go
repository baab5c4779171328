//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// orderedKey is the ordering of the tests' ordered lanes: Stripe's object id.
const orderedKey = `"ordering": {"key": "body:data.object.id"}`

// object sets a Stripe event's data.object.id: the ordering key.
func object(id string) func(*events.Sample) {
	return func(s *events.Sample) {
		var doc map[string]any
		_ = json.Unmarshal(s.Body, &doc)
		doc["data"].(map[string]any)["object"].(map[string]any)["id"] = id
		s.Body, _ = json.Marshal(doc)
	}
}

// keyOf reads a delivery's ordering key back from its body.
func keyOf(d got) string {
	var doc struct {
		Data struct {
			Object struct {
				ID string `json:"id"`
			} `json:"object"`
		} `json:"data"`
	}
	_ = json.Unmarshal(d.body, &doc)
	return doc.Data.Object.ID
}

// acceptedByKey lists, per key, the webhook-ids of the deliveries the
// receiver accepted (2xx), in arrival order.
func acceptedByKey(rc *receiver) map[string][]string {
	out := map[string][]string{}
	for _, d := range rc.deliveries() {
		if d.status >= 200 && d.status < 300 && d.header.Get("hookfan-type") != "hookfan.probe" {
			out[keyOf(d)] = append(out[keyOf(d)], d.header.Get("webhook-id"))
		}
	}
	return out
}

// TestOrderedLaneKeepsEachKeysOrder: three keys, 20 events each,
// interleaved; the destination fails key A's 3rd event twice. Each key's
// deliveries arrive in send order, B and C go on while A waits, nothing is
// doubled, every signature verifies, and every delivery carries its
// acceptance time.
func TestOrderedLaneKeepsEachKeysOrder(t *testing.T) {
	t.Parallel()
	var (
		mu       sync.Mutex
		failures int
		a3       string // the webhook-id of A's 3rd event, once sent
	)
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if a3 != "" && r.Header.Get("webhook-id") == a3 && failures < 2 {
			failures++
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("o", rc, orderedKey+`, "retry": {"schedule": ["1s", "1s", "1s"], "jitter": 0}`)}, map[string]*receiver{"o": rc})
	const n = 20
	want := map[string][]string{}
	for i := range n {
		for _, k := range []string{"A", "B", "C"} {
			ev := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%s_%02d", t.Name(), k, i), object(k))
			want[k] = append(want[k], ev.id)
			if k == "A" && i == 2 {
				mu.Lock()
				a3 = ev.id
				mu.Unlock()
			}
		}
	}
	waitFor(t, 60*time.Second, "every event delivered", func() bool {
		got := acceptedByKey(rc)
		return len(got["A"]) >= n && len(got["B"]) >= n && len(got["C"]) >= n
	})
	e.settled()
	got := acceptedByKey(rc)
	for _, k := range []string{"A", "B", "C"} {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("key %s delivered\n  %v\nwant\n  %v", k, got[k], want[k])
		}
	}
	var firstFail, success time.Time
	others := 0
	for _, d := range rc.deliveries() {
		if !d.verified {
			t.Errorf("delivery %s does not verify", d.header.Get("webhook-id"))
		}
		if _, err := time.Parse(time.RFC3339Nano, d.header.Get("hookfan-accepted-at")); err != nil {
			t.Errorf("delivery %s: hookfan-accepted-at %q: %v", d.header.Get("webhook-id"), d.header.Get("hookfan-accepted-at"), err)
		}
		switch {
		case d.header.Get("webhook-id") == a3 && d.status >= 500 && firstFail.IsZero():
			firstFail = d.at
		case d.header.Get("webhook-id") == a3 && d.status < 300:
			success = d.at
		case !firstFail.IsZero() && success.IsZero() && keyOf(d) != "A":
			others++
		}
	}
	if failures != 2 || others == 0 {
		t.Errorf("A's 3rd event failed %d times; %d deliveries of B and C while it waited, want some (B and C are not held behind A)", failures, others)
	}
	for _, k := range []string{"A", "B", "C"} {
		for _, id := range want[k] {
			if c := rc.accepted(id); c != 1 {
				t.Errorf("%s accepted %d times", id, c)
			}
		}
	}
}

// TestOrderedLaneEventSentDuringItsKeysRetry: a key's event sent while the
// key's earlier event waits for its retry is delivered after it, round
// after round, on a lane polled twice at once (moto 5.2.1 reads the groups
// in flight when a long poll starts: a poll begun before the first event
// was received handed out the second while the first waited), and the
// local stack held nothing to keep it so: the emulator's own lock did.
func TestOrderedLaneEventSentDuringItsKeysRetry(t *testing.T) {
	t.Parallel()
	var (
		mu     sync.Mutex
		failed = map[string]string{} // key → the webhook-id of its first event, failed once
		rc     *receiver
	)
	rc = newReceiver(t, func(n int, r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		if k := keyOf(rc.deliveries()[n-1]); failed[k] == "" {
			failed[k] = r.Header.Get("webhook-id")
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("o", rc, orderedKey+`, "maxConcurrency": 2, "retry": {"schedule": ["2s"], "jitter": 0}`)}, map[string]*receiver{"o": rc})
	const rounds = 5
	want := map[string][]string{}
	for i := range rounds {
		key := fmt.Sprintf("K%d", i)
		first := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%d_1", t.Name(), i), object(key))
		waitFor(t, 20*time.Second, "the first event's failed attempt", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return failed[key] == first.id
		})
		second := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%d_2", t.Name(), i), object(key))
		want[key] = []string{first.id, second.id}
		waitFor(t, 30*time.Second, "both delivered", func() bool { return rc.accepted(first.id) == 1 && rc.accepted(second.id) == 1 })
	}
	got := acceptedByKey(rc)
	for k, w := range want {
		if !slices.Equal(got[k], w) {
			t.Errorf("key %s delivered %v, want %v (the retried event first)", k, got[k], w)
		}
	}
	if n := e.stack.HeldMessages(); n != 0 {
		t.Errorf("the local stack held %d message(s); want none: with one receive at a time the emulator keeps the groups itself", n)
	}
}

// TestOrderedLaneProviderRetry: a provider sending an event again (same
// id) on an ordered lane: delivered once, in its place.
func TestOrderedLaneProviderRetry(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("o", rc, orderedKey)}, map[string]*receiver{"o": rc})
	var want []string
	for i, p := range []int{0, 1, 0, 2, 1, 3} {
		ev := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%d", t.Name(), p), object("K"))
		if i == slices.Index([]int{0, 1, 0, 2, 1, 3}, p) {
			want = append(want, ev.id)
		}
	}
	waitFor(t, 20*time.Second, "every event delivered", func() bool { return len(acceptedByKey(rc)["K"]) >= len(want) })
	e.settled()
	if got := acceptedByKey(rc)["K"]; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v (each once, in its first place)", got, want)
	}
}

// TestOrderedLaneDeadEventLetsItsKeyMoveOn: an event of a key dies (its
// attempts spent): the key's later events are delivered, the DLQ holds
// the dead one, and ops redrive delivers it.
func TestOrderedLaneDeadEventLetsItsKeyMoveOn(t *testing.T) {
	t.Parallel()
	var fixed atomic.Bool
	var poison atomic.Value
	poison.Store("")
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		if !fixed.Load() && r.Header.Get("webhook-id") == poison.Load().(string) {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("o", rc, orderedKey+`, "batchSize": 2, "retry": {"schedule": ["1s"], "jitter": 0}`)}, map[string]*receiver{"o": rc})
	var ids []string
	for i := range 4 {
		ev := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%d", t.Name(), i), object("D"))
		ids = append(ids, ev.id)
		if i == 1 {
			poison.Store(ev.id)
		}
	}
	lane, _ := e.stack.Topology.Lane("o")
	waitFor(t, 60*time.Second, "the dead event in the DLQ and the key's later events delivered", func() bool {
		r, _ := e.record("o", ids[1])
		return r.Status == dedupe.StatusDead && depth(t, lane.DLQURL) == 1 && rc.accepted(ids[3]) == 1
	})
	if got, want := acceptedByKey(rc)["D"], []string{ids[0], ids[2], ids[3]}; !slices.Equal(got, want) {
		t.Errorf("delivered %v, want %v", got, want)
	}
	if r, _ := e.record("o", ids[1]); r.Attempts < 2 {
		t.Errorf("the dead event made %d attempts, want its schedule's 2", r.Attempts)
	}
	out, _, code := e.ops("dlq", "o")
	if code != 0 || !strings.Contains(out, ids[1]) || !regexpMatch(`(?m)^`+ids[1]+`\s+stripe:D\s+\(none waiting`, out) ||
		!strings.Contains(out, "HTTP 500") {
		t.Errorf("dlq: exit %d, want the dead event with its last error, its key and what the key delivers next\n%s", code, out)
	}
	fixed.Store(true)
	if out, errOut, code := e.ops("redrive", "o"); code != 0 || !strings.Contains(out, "moved 1 message(s)") {
		t.Fatalf("redrive: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 20*time.Second, "the redriven event delivered", func() bool { return rc.accepted(ids[1]) == 1 })
	e.settled()
	for _, id := range ids {
		if n := rc.accepted(id); n != 1 {
			t.Errorf("%s accepted %d times, want once", id, n)
		}
	}
}

// TestOrderedLaneGivenUpEventHoldsNoKeyBack: a message of an ordered lane
// that can never be delivered (here one the deliver function cannot read)
// goes to the DLQ and its key moves on: the key's next event, handed in
// the same batches behind it, is delivered, not dead-lettered beside it.
// The lane is paused while both wait, so that every batch holds the two.
func TestOrderedLaneGivenUpEventHoldsNoKeyBack(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("o", rc, orderedKey+`, "batchSize": 2, "retry": {"schedule": ["1s"], "jitter": 0}, "pause": {"afterFailures": 100}`)},
		map[string]*receiver{"o": rc})
	if out, _, code := e.ops("pause", "o", "--reason", "loading the queue"); code != 0 {
		t.Fatalf("pause: exit %d\n%s", code, out)
	}
	pollsEnd(t)
	lane, _ := e.stack.Topology.Lane("o")
	group := config.GroupID("stripe", "D")
	if _, err := clients.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &lane.QueueURL,
		MessageBody: aws.String(`{"not":"an event"}`), MessageGroupId: &group, MessageDeduplicationId: aws.String("unreadable-" + t.Name())}); err != nil {
		t.Fatal(err)
	}
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_"+t.Name(), object("D"))
	waitFor(t, 20*time.Second, "both messages in the lane's queue", func() bool { return depth(t, lane.QueueURL) == 2 })
	if out, _, code := e.ops("resume", "o"); code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	waitFor(t, 60*time.Second, "the unreadable message in the DLQ and the key's event delivered (or both dead-lettered)", func() bool {
		n := depth(t, lane.DLQURL)
		return n >= 2 || n == 1 && rc.accepted(ev.id) == 1
	})
	e.settled()
	if n := depth(t, lane.DLQURL); n != 1 {
		t.Errorf("the DLQ holds %d messages, want the unreadable one alone", n)
	}
	if n := rc.accepted(ev.id); n != 1 {
		t.Errorf("the key's event accepted %d times, want once", n)
	}
}

// TestOrderedLanePausesAndResumes: an ordered lane paused by the operator
// holds its events in place; resumed, it delivers each key in order.
func TestOrderedLanePausesAndResumes(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	var reads switchReads
	e := startEnv(t, []string{destJSON("o", rc, orderedKey+`, "pause": {"afterFailures": 4}`)}, map[string]*receiver{"o": rc}, reads.watch)
	if out, _, code := e.ops("pause", "o", "--reason", "maintenance"); code != 0 || !strings.Contains(out, "paused o until ") {
		t.Fatalf("pause: exit %d\n%s", code, out)
	}
	pollsEnd(t)
	want := map[string][]string{}
	for i := range 5 {
		for _, k := range []string{"P", "Q"} {
			ev := e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%s_%d", t.Name(), k, i), object(k))
			want[k] = append(want[k], ev.id)
		}
	}
	lane, _ := e.stack.Topology.Lane("o")
	e.held(&reads, lane, 10)
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("%d deliveries while paused", n)
	}
	if out, _, code := e.ops("lanes"); code != 0 || !regexpMatch(`(?m)^o\s+paused\s+`, out) {
		t.Errorf("lanes: exit %d\n%s", code, out)
	}
	if out, _, code := e.ops("resume", "o"); code != 0 || !strings.Contains(out, "resumed o after ") {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	waitFor(t, 30*time.Second, "every event delivered after the resume", func() bool {
		got := acceptedByKey(rc)
		return len(got["P"]) >= 5 && len(got["Q"]) >= 5
	})
	e.settled()
	got := acceptedByKey(rc)
	for _, k := range []string{"P", "Q"} {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("key %s delivered %v, want %v", k, got[k], want[k])
		}
	}
	if out, _, code := e.ops("status", want["P"][0]); code != 0 || !strings.Contains(out, "DELIVERED") {
		t.Errorf("status: exit %d\n%s", code, out)
	}
}

// TestOrderedBesideStandardLane: an ordered lane and a standard lane on
// the same source both get every event, once.
func TestOrderedBesideStandardLane(t *testing.T) {
	t.Parallel()
	ord, std := newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("o", ord, orderedKey), destJSON("s", std, "")}, map[string]*receiver{"o": ord, "s": std})
	var ids []string
	for i := range 6 {
		ids = append(ids, e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_%s_%d", t.Name(), i), object(fmt.Sprint("k", i%2))).id)
	}
	waitFor(t, 20*time.Second, "both lanes delivered every event", func() bool {
		return len(ord.deliveries()) >= len(ids) && len(std.deliveries()) >= len(ids)
	})
	e.settled()
	for _, id := range ids {
		if a, b := ord.accepted(id), std.accepted(id); a != 1 || b != 1 {
			t.Errorf("%s accepted %d times by the ordered lane, %d by the standard one; want once each", id, a, b)
		}
	}
}

// TestOrderedLaneReplay: ops replay to an ordered lane sends the event
// again through its key's group; it is delivered once more.
func TestOrderedLaneReplay(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("o", rc, orderedKey)}, map[string]*receiver{"o": rc})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_ordered_replay", object("R"))
	waitFor(t, 20*time.Second, "the first delivery", func() bool { return rc.accepted(ev.id) == 1 })
	e.archived(ev.id)
	out, _, code := e.ops("replay", "--destination", "o", "--event", ev.id)
	if code != 0 || !strings.Contains(out, "replayed 1 event(s) to o") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	waitFor(t, 20*time.Second, "the replay's delivery", func() bool { return rc.accepted(ev.id) == 2 })
	d := rc.deliveries()
	if d[0].header.Get("hookfan-accepted-at") != d[1].header.Get("hookfan-accepted-at") {
		t.Errorf("hookfan-accepted-at %q, then %q on the replay; want the same", d[0].header.Get("hookfan-accepted-at"), d[1].header.Get("hookfan-accepted-at"))
	}
}

// sendRecorder is the operator's SQS client, keeping each SendMessage.
type sendRecorder struct {
	operator.QueueAPI
	mu   sync.Mutex
	sent []*sqs.SendMessageInput
}

func (r *sendRecorder) SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	r.mu.Lock()
	r.sent = append(r.sent, in)
	r.mu.Unlock()
	return r.QueueAPI.SendMessage(ctx, in, optFns...)
}

// TestOrderedLaneReplaysALargeBodyUnderItsKey: an event whose body is too
// large for SNS (kept in S3, the message a reference) is replayed to an
// ordered lane in its key's message group, read from the stored body, not
// in the source's keyless group; and it is delivered again.
func TestOrderedLaneReplaysALargeBodyUnderItsKey(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	large := `[
	  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}, "maxBodyBytes": 1000000},
	  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"}}
	]`
	e := startEnvSources(t, large, []string{destJSON("o", rc, orderedKey)}, map[string]*receiver{"o": rc})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_ordered_large", func(s *events.Sample) {
		object("L")(s)
		padded(600<<10, 7000)(s)
	})
	waitFor(t, 30*time.Second, "the first delivery", func() bool { return rc.accepted(ev.id) == 1 })
	e.archived(ev.id)

	rec := &sendRecorder{QueueAPI: clients.SQS}
	if _, err := e.operator(rec).Replay(context.Background(), operator.ReplayOptions{Destination: "o", Event: ev.id}); err != nil {
		t.Fatalf("replay: %v", err)
	}
	rec.mu.Lock()
	sent := rec.sent
	rec.mu.Unlock()
	if len(sent) != 1 {
		t.Fatalf("the replay sent %d messages, want 1", len(sent))
	}
	if got, want := aws.ToString(sent[0].MessageGroupId), config.GroupID("stripe", "L"); got != want {
		t.Errorf("the replay's message group is %q, want %q (its key, read from the stored body)", got, want)
	}
	waitFor(t, 30*time.Second, "the replay's delivery", func() bool { return rc.accepted(ev.id) == 2 })
	if d := rc.deliveries(); keyOf(d[1]) != "L" || len(d[1].body) < 600<<10 {
		t.Errorf("the replay delivered key %q, %d bytes", keyOf(d[1]), len(d[1].body))
	}
}
