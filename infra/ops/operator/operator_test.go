package operator

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
)

func TestEventID(t *testing.T) {
	for arg, want := range map[string]string{
		"evt_0123456789abcdef0123456789abcdef": "evt_0123456789abcdef0123456789abcdef",
		"stripe:evt_1Nx":                       ingest.EventID("stripe", "evt_1Nx"),
		"github:d1f0c2a0-0000-4000-8000-1":     ingest.EventID("github", "d1f0c2a0-0000-4000-8000-1"),
		"shop:a:b":                             ingest.EventID("shop", "a:b"), // a provider id may hold ':'
	} {
		got, err := EventID(arg)
		if err != nil || got != want {
			t.Errorf("EventID(%q) = %q, %v; want %q", arg, got, err, want)
		}
	}
	for _, bad := range []string{"", "evt", "nope", ":x", "stripe:", "evt_a.b"} {
		if _, err := EventID(bad); !errors.Is(err, ErrUsage) {
			t.Errorf("EventID(%q): %v, want a usage error", bad, err)
		}
	}
}

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	for arg, want := range map[string]time.Time{
		"90m":                       now.Add(-90 * time.Minute),
		"2h":                        now.Add(-2 * time.Hour),
		"2026-04-30T10:00:00Z":      time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC),
		"2026-04-30T12:00:00+02:00": time.Date(2026, 4, 30, 10, 0, 0, 0, time.UTC),
		"2026-04-30":                time.Date(2026, 4, 30, 0, 0, 0, 0, time.UTC),
		"2026-04-30T10:30":          time.Date(2026, 4, 30, 10, 30, 0, 0, time.UTC),
	} {
		got, err := ParseTime(arg, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("ParseTime(%q) = %s, %v; want %s", arg, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "-1h", "2026-13-01"} {
		if _, err := ParseTime(bad, now); !errors.Is(err, ErrUsage) {
			t.Errorf("ParseTime(%q): %v, want a usage error", bad, err)
		}
	}
}

// TestMainRejectsBadCommandLines: every command line that cannot run is
// refused with exit status 2 and a message naming the problem, before
// anything is contacted.
func TestMainRejectsBadCommandLines(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{nil, "no command"},
		{[]string{"bogus"}, `unknown command "bogus"`},
		{[]string{"--nope", "status"}, "flag provided but not defined: -nope"},
		{[]string{"status"}, "status takes one EVENT"},
		{[]string{"status", "a", "b"}, "status takes one EVENT"},
		{[]string{"status", ""}, `"" is not an event id`},
		{[]string{"status", "two words"}, `"two words" is not an event id`},
		{[]string{"dlq"}, "dlq takes one DESTINATION"},
		{[]string{"dlq", "d", "--max", "0"}, "--max 0: list at least 1"},
		{[]string{"dlq", "d", "--max", "x"}, `invalid value "x" for flag -max`},
		{[]string{"redrive", "d", "--rate", "900"}, "--rate 900: SQS moves 1 to 500 messages per second"},
		{[]string{"redrive", "d", "--visibility", "13h"}, "--visibility 13h0m0s: use 1s to 12h"},
		{[]string{"replay", "--since", "1h"}, "replay needs --destination"},
		{[]string{"replay", "--destination", "d"}, "give --event EVENT or --since TIME"},
		{[]string{"replay", "--destination", "d", "--since", "soon"}, `"soon" is not a time`},
		{[]string{"replay", "--destination", "d", "--since", "1h", "--until", "2h"}, "is not before --until"},
		{[]string{"replay", "--destination", "d", "--event", "evt_1", "--type", "x"}, "--source and --type narrow a --since range"},
		{[]string{"replay", "--destination", "d", "--event", "bad"}, `"bad" is neither a Hookfan event id`},
		{[]string{"replay", "--destination", "d", "--since", "1h", "--id", "x"}, `--id "x" is not a replay id`},
		{[]string{"replay", "--destination", "d", "extra"}, `replay takes flags only; unexpected "extra"`},
	}
	for _, tt := range tests {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--state-dir", t.TempDir()}, tt.args...), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
	// A good command line with nothing to talk to fails (1) and says why.
	var out, errOut bytes.Buffer
	dir := t.TempDir()
	if code := Main(context.Background(), []string{"--state-dir", dir, "--endpoint", "", "dlq", "d"}, &out, &errOut); code != 1 || !strings.Contains(errOut.String(), "no emulator recorded in "+dir+": start the local stack (make dev)") {
		t.Errorf("no emulator: exit %d, stderr %q", code, errOut.String())
	}
	if code := Main(context.Background(), []string{"--help"}, &out, &errOut); code != 0 || !strings.Contains(out.String(), "Commands:") {
		t.Errorf("--help: exit %d, stdout %q", code, out.String())
	}
}

func TestMoveUnsupported(t *testing.T) {
	resp := func(code int) error {
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: &http.Response{StatusCode: code}}, Err: errors.New("deserialization failed")}
	}
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"moto: 500 without an API error", &smithy.OperationError{Err: resp(500)}, true},
		{"501 Not Implemented", resp(501), true},
		{"NotImplemented", &smithy.GenericAPIError{Code: "NotImplemented"}, true},
		{"InternalFailure", &smithy.GenericAPIError{Code: "InternalFailure"}, true},
		{"a real refusal", &smithy.GenericAPIError{Code: "ResourceNotFoundException"}, false},
		{"unsupported for this queue", &smithy.GenericAPIError{Code: "UnsupportedOperation"}, false},
		{"400 without an API error", resp(400), false},
		{"a network error", errors.New("connection refused"), false},
	}
	for _, tt := range tests {
		if got := moveUnsupported(tt.err); got != tt.want {
			t.Errorf("%s: moveUnsupported = %v, want %v", tt.name, got, tt.want)
		}
	}
}

func TestReplayAttributes(t *testing.T) {
	ev := archive.Event{Attributes: map[string]archive.Attribute{
		"id": {Type: "String", Value: "evt_1"}, "n": {Type: "Number", Value: "42"}, "b": {Type: "Binary", Value: "aGk="},
	}}
	got, err := replayAttributes(ev, "rpl_x")
	if err != nil {
		t.Fatal(err)
	}
	flat := map[string]string{}
	for k, v := range got {
		flat[k] = aws.ToString(v.DataType) + ":" + aws.ToString(v.StringValue) + string(v.BinaryValue)
	}
	want := map[string]string{"id": "String:evt_1", "n": "Number:42", "b": "Binary:hi", "replay": "String:rpl_x"}
	if diff := cmp.Diff(want, flat); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
	many := archive.Event{Attributes: map[string]archive.Attribute{}}
	for _, k := range strings.Split("a b c d e f g h i j", " ") {
		many.Attributes[k] = archive.Attribute{Type: "String", Value: "v"}
	}
	if _, err := replayAttributes(many, "rpl_x"); err == nil || !strings.Contains(err.Error(), "more than SQS's 10") {
		t.Errorf("ten attributes plus the replay's: %v", err)
	}
	old := archive.Event{Attributes: map[string]archive.Attribute{"id": {Type: "String", Value: "evt_1"}, "replay": {Type: "String", Value: "rpl_old"}}}
	if got, err := replayAttributes(old, "rpl_new"); err != nil || aws.ToString(got["replay"].StringValue) != "rpl_new" || old.Attributes["replay"].Value != "rpl_old" {
		t.Errorf("an earlier replay id: %v, %v; want the new id, and the event left as it was", got["replay"].StringValue, err)
	}
	bad := archive.Event{Attributes: map[string]archive.Attribute{"b": {Type: "Binary", Value: "%%"}}}
	if _, err := replayAttributes(bad, "rpl_x"); err == nil {
		t.Error("a binary attribute that is not base64 was accepted")
	}
}

// fakeQueues holds messages per queue URL with SQS's visibility; failures
// can be injected per call.
type fakeQueues struct {
	mu       sync.Mutex
	now      func() time.Time
	msgs     map[string][]*fakeMsg
	n        int
	failSend func(n int) error // n counts sends from 1
	failDel  func(n int) error
	sends    int
	dels     int
}

type fakeMsg struct {
	id, body     string
	attrs        map[string]sqstypes.MessageAttributeValue
	visibleAt    time.Time
	receipt      string
	receiveCount int
}

func newFakeQueues(now func() time.Time) *fakeQueues {
	return &fakeQueues{now: now, msgs: map[string][]*fakeMsg{}}
}

func (f *fakeQueues) add(url, id string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.msgs[url] = append(f.msgs[url], &fakeMsg{id: "m-" + id, body: "body " + id, attrs: map[string]sqstypes.MessageAttributeValue{
		"id": {DataType: aws.String("String"), StringValue: aws.String(id)}}})
}

func (f *fakeQueues) ids(url string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, m := range f.msgs[url] {
		out = append(out, aws.ToString(m.attrs["id"].StringValue))
	}
	return out
}

func (f *fakeQueues) GetQueueAttributes(_ context.Context, in *sqs.GetQueueAttributesInput, _ ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	vis, inflight := 0, 0
	for _, m := range f.msgs[*in.QueueUrl] {
		if m.visibleAt.After(f.now()) {
			inflight++
		} else {
			vis++
		}
	}
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{
		"ApproximateNumberOfMessages": itoa(vis), "ApproximateNumberOfMessagesNotVisible": itoa(inflight), "ApproximateNumberOfMessagesDelayed": "0"}}, nil
}

func itoa(n int) string { return strconv.Itoa(n) }

func (f *fakeQueues) ReceiveMessage(_ context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := &sqs.ReceiveMessageOutput{}
	for _, m := range f.msgs[*in.QueueUrl] {
		if len(out.Messages) == int(in.MaxNumberOfMessages) || m.visibleAt.After(f.now()) {
			continue
		}
		f.n++
		m.receipt = "r" + itoa(f.n)
		m.visibleAt = f.now().Add(time.Duration(in.VisibilityTimeout) * time.Second)
		m.receiveCount++
		out.Messages = append(out.Messages, sqstypes.Message{MessageId: aws.String(m.id), Body: aws.String(m.body), MessageAttributes: m.attrs, ReceiptHandle: aws.String(m.receipt)})
	}
	return out, nil
}

func (f *fakeQueues) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sends++
	if f.failSend != nil {
		if err := f.failSend(f.sends); err != nil {
			return nil, err
		}
	}
	f.msgs[*in.QueueUrl] = append(f.msgs[*in.QueueUrl], &fakeMsg{id: "s" + itoa(f.sends), body: *in.MessageBody, attrs: in.MessageAttributes})
	return &sqs.SendMessageOutput{MessageId: aws.String("s" + itoa(f.sends))}, nil
}

func (f *fakeQueues) DeleteMessage(_ context.Context, in *sqs.DeleteMessageInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.dels++
	if f.failDel != nil {
		if err := f.failDel(f.dels); err != nil {
			return nil, err
		}
	}
	q := f.msgs[*in.QueueUrl]
	for i, m := range q {
		if m.receipt == *in.ReceiptHandle {
			f.msgs[*in.QueueUrl] = append(q[:i:i], q[i+1:]...)
			return &sqs.DeleteMessageOutput{}, nil
		}
	}
	return nil, errors.New("no such receipt handle")
}

func (f *fakeQueues) ChangeMessageVisibilityBatch(_ context.Context, in *sqs.ChangeMessageVisibilityBatchInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, e := range in.Entries {
		for _, m := range f.msgs[*in.QueueUrl] {
			if m.receipt == *e.ReceiptHandle {
				m.visibleAt = f.now().Add(time.Duration(e.VisibilityTimeout) * time.Second)
			}
		}
	}
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}

func (f *fakeQueues) StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "NotImplemented"}
}

func (f *fakeQueues) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	return nil, &smithy.GenericAPIError{Code: "NotImplemented"}
}

// clock is a test clock that advances when asked.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(100 * time.Millisecond) // every look at the clock moves it on
	return c.t
}

func (c *clock) sleep(_ context.Context, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func testOperator(q *fakeQueues, c *clock) (*Operator, *bytes.Buffer) {
	var out bytes.Buffer
	return &Operator{
		Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "d", Filter: config.Filter{}, QueueURL: "q", QueueARN: "arn:q", DLQURL: "dlq", DLQARN: "arn:dlq"}}},
		SQS:       q, Records: dedupe.NewMemory(), Out: &out, Progress: &out, Now: c.now, sleep: c.sleep,
	}, &out
}

// TestRedriveCopyInterruptedAndRerun: a copy that fails after sending a
// message but before deleting it leaves that message in both queues; run
// again, the redrive moves everything left; the only extra copy is the one
// the failed delete left, which the delivery record acknowledges.
func TestRedriveCopyInterruptedAndRerun(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	for _, id := range []string{"e1", "e2", "e3", "e4"} {
		q.add("dlq", id)
	}
	q.failDel = func(n int) error {
		if n == 2 {
			return errors.New("connection reset")
		}
		return nil
	}
	op, out := testOperator(q, c)
	_, err := op.Redrive(context.Background(), "d", RedriveOptions{Visibility: 30 * time.Second, Wait: time.Hour})
	if err == nil || !strings.Contains(err.Error(), "delete message m-e2 from the DLQ after sending it") || !strings.Contains(err.Error(), "1 moved so far; run redrive again") {
		t.Fatalf("first run: %v", err)
	}
	if diff := cmp.Diff([]string{"e1", "e2"}, q.ids("q")); diff != "" {
		t.Errorf("queue after the interrupted run (-want +got):\n%s", diff)
	}
	q.failDel = nil
	res, err := op.Redrive(context.Background(), "d", RedriveOptions{Visibility: 30 * time.Second, Wait: time.Hour})
	if err != nil {
		t.Fatalf("second run: %v\n%s", err, out)
	}
	// e2 was held in flight by the first run: the second waits for it.
	if res.Left != 0 || len(q.ids("dlq")) != 0 || !strings.Contains(out.String(), "waiting for 1 message(s) held in flight") {
		t.Errorf("second run: %+v, DLQ %v\n%s", res, q.ids("dlq"), out)
	}
	if diff := cmp.Diff([]string{"e1", "e2", "e2", "e3", "e4"}, sortedCopy(q.ids("q"))); diff != "" {
		t.Errorf("queue after both runs (-want +got):\n%s", diff)
	}
}

// TestRedriveCopyFailedSendKeepsTheMessage: a send that fails leaves the
// message in the DLQ, undeleted.
func TestRedriveCopyFailedSendKeepsTheMessage(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	q.add("dlq", "e1")
	q.failSend = func(int) error { return errors.New("throttled") }
	op, _ := testOperator(q, c)
	if _, err := op.Redrive(context.Background(), "d", RedriveOptions{}); err == nil || !strings.Contains(err.Error(), "send message m-e1 to the queue (it stays in the DLQ)") {
		t.Fatalf("got %v", err)
	}
	if q.dels != 0 || len(q.ids("dlq")) != 1 || len(q.ids("q")) != 0 {
		t.Errorf("after a failed send: %d deletes, DLQ %v, queue %v", q.dels, q.ids("dlq"), q.ids("q"))
	}
}

func TestPeekReleasesWhatItRead(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	for _, id := range []string{"e1", "e2", "e3"} {
		q.add("dlq", id)
	}
	op, out := testOperator(q, c)
	page, err := op.DLQ(context.Background(), "d", 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Messages) != 2 || page.Depth != 3 || !strings.Contains(out.String(), "showing 2 (--max N for more)") {
		t.Errorf("page %+v\n%s", page, out)
	}
	d, _ := op.depth(context.Background(), "dlq")
	if d.Visible != 3 || len(q.ids("dlq")) != 3 {
		t.Errorf("after the peek: %+v visible, DLQ %v; want all 3 visible and kept", d, q.ids("dlq"))
	}
}

func sortedCopy(s []string) []string { return slices.Sorted(slices.Values(s)) }

// TestStatusPrintsTheHistory: status prints each destination's record with
// its attempts, the next attempt of a failed one, the replays, and whether
// the event is in the DLQ.
func TestStatusPrintsTheHistory(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	op, out := testOperator(q, c)
	op.Resources.Lanes = append(op.Resources.Lanes, Lane{Destination: "other", QueueURL: "q2", DLQURL: "dlq2"})
	store := dedupe.NewMemory()
	op.Records = store
	ctx := context.Background()
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	claim := func(now time.Time, replay, by string) dedupe.Lease {
		l, err := store.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("d", "evt_1"), Source: "stripe", Type: "invoice.paid",
			Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(30 * 24 * time.Hour), Replay: replay, ClaimedBy: by})
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	_ = store.Finish(ctx, claim(at, "", "req-1"), dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 500, Error: "HTTP 500", At: at, Latency: 120 * time.Millisecond, NextAttemptAt: at.Add(5 * time.Second)})
	_ = store.Finish(ctx, claim(at.Add(5*time.Second), "", "req-2"), dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 204, At: at.Add(5 * time.Second), Latency: 40 * time.Millisecond, Batch: "batch_0a1b"})
	_ = store.Finish(ctx, claim(at.Add(time.Hour), "rpl_x", "req-3"), dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 200, At: at.Add(time.Hour), Latency: 30 * time.Millisecond})
	q.add("dlq2", "evt_1")

	st, err := op.Status(ctx, "evt_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Destinations) != 2 || !st.Destinations[0].HasRecord || st.Destinations[1].HasRecord || !st.Destinations[1].InDLQ || st.Destinations[0].InDLQ {
		t.Errorf("status %+v", st)
	}
	for _, want := range []string{
		"event evt_1\n\nd\n  state DELIVERED, 3 attempt(s); source stripe, type invoice.paid\n",
		"  replays that ended here: rpl_x\n",
		"  attempts (the last 10; oldest first):\n",
		"    2026-05-01T12:00:00.000Z  FAILED    HTTP 500        120ms  by req-1\n",
		"    2026-05-01T12:00:05.000Z  DELIVERED HTTP 204         40ms  by req-2  batch batch_0a1b\n",
		"    2026-05-01T13:00:00.000Z  DELIVERED HTTP 200         30ms  by req-3  replay rpl_x\n",
		"  in DLQ: no\n\nother\n  no delivery record: never attempted (filtered out, still queued, or not received)\n  in DLQ: yes\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status output lacks %q:\n%s", want, out)
		}
	}
}
