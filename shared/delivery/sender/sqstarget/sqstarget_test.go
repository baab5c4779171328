package sqstarget_test

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/sqstarget"
	"github.com/hookfan/hookfan/shared/message"
)

// fakeSQS keeps every call; answer, when set, answers a batch call (nil:
// every entry Successful).
type fakeSQS struct {
	mu      sync.Mutex
	single  []*sqs.SendMessageInput
	batches []*sqs.SendMessageBatchInput
	answer  func(call int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error)
}

func (f *fakeSQS) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.single = append(f.single, in)
	return &sqs.SendMessageOutput{}, nil
}

func (f *fakeSQS) SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	f.mu.Lock()
	call := len(f.batches)
	f.batches = append(f.batches, in)
	answer := f.answer
	f.mu.Unlock()
	if answer != nil {
		return answer(call, in)
	}
	return allSuccessful(in), nil
}

func allSuccessful(in *sqs.SendMessageBatchInput) *sqs.SendMessageBatchOutput {
	out := &sqs.SendMessageBatchOutput{}
	for _, e := range in.Entries {
		out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
	}
	return out
}

func newSender(t testing.TB, f *fakeSQS, queue string) sender.Sender {
	t.Helper()
	s, err := sqstarget.New(f, config.Destination{Name: "q", Type: config.TypeSQS, Target: "arn:aws:sqs:us-east-1:123456789012:" + queue}, false)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// batchSender is the sender's batch path; the test fails when it has none.
func batchSender(t testing.TB, s sender.Sender) sender.BatchSender {
	t.Helper()
	b, ok := s.(sender.BatchSender)
	if !ok {
		t.Fatalf("%T has no SendBatch", s)
	}
	return b
}

func deliveries(n, bodyBytes int, group func(i int) string) []sender.Delivery {
	ds := make([]sender.Delivery, n)
	for i := range ds {
		body := fmt.Sprintf(`{"id":"evt_%d","pad":"%s"}`, i, strings.Repeat("x", max(0, bodyBytes-30)))
		ds[i] = sender.Delivery{ID: "evt_" + strconv.Itoa(i), Source: "stripe", Type: "invoice.paid", ContentType: "application/json",
			Body: []byte(body), ReceivedAt: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), Timeout: 5 * time.Second}
		if group != nil {
			ds[i].Group = group(i)
		}
	}
	return ds
}

func eventIDs(in *sqs.SendMessageBatchInput) []string {
	var ids []string
	for _, e := range in.Entries {
		ids = append(ids, aws.ToString(e.MessageAttributes[message.AttrID].StringValue))
	}
	return ids
}

// TestSendBatchSendsWhatSendSends: 23 events go in three calls of at most
// ten, in order, each entry the message Send would send (body,
// attributes, FIFO group and dedupe id), and each event is delivered.
func TestSendBatchSendsWhatSendSends(t *testing.T) {
	f := &fakeSQS{}
	s := newSender(t, f, "orders.fifo")
	ds := deliveries(23, 100, nil)
	ds[4].Replay = "rpl_1"
	ds[6].Reconciled = true
	results := batchSender(t, s).SendBatch(context.Background(), ds)
	if len(f.batches) != 3 || len(f.batches[0].Entries) != 10 || len(f.batches[1].Entries) != 10 || len(f.batches[2].Entries) != 3 {
		t.Fatalf("%d calls, want 10 + 10 + 3 entries", len(f.batches))
	}
	var sent []string
	for _, b := range f.batches {
		if aws.ToString(b.QueueUrl) != "https://sqs.us-east-1.amazonaws.com/123456789012/orders.fifo" {
			t.Errorf("queue URL %s", aws.ToString(b.QueueUrl))
		}
		sent = append(sent, eventIDs(b)...)
	}
	var want []string
	for _, d := range ds {
		want = append(want, d.ID)
		_ = s.Send(context.Background(), d)
	}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("events sent (-want +got):\n%s", diff)
	}
	for i, single := range f.single {
		e := f.batches[i/10].Entries[i%10]
		got := &sqs.SendMessageInput{QueueUrl: single.QueueUrl, MessageBody: e.MessageBody, MessageAttributes: e.MessageAttributes,
			MessageGroupId: e.MessageGroupId, MessageDeduplicationId: e.MessageDeduplicationId}
		if diff := cmp.Diff(single, got, cmpopts.IgnoreUnexported(sqs.SendMessageInput{}, types.MessageAttributeValue{})); diff != "" {
			t.Errorf("event %d: batch entry differs from Send's message (-send +batch):\n%s", i, diff)
		}
	}
	if got := aws.ToString(f.batches[0].Entries[4].MessageDeduplicationId); got != "evt_4:rpl_1" {
		t.Errorf("replay dedupe id %q", got)
	}
	for i, r := range results {
		if r.Verdict() != sender.Delivered {
			t.Errorf("event %d: %+v", i, r)
		}
	}
}

// TestSendBatchSplitsByBytes: no call carries more than 256 KiB of
// bodies and attributes, and a message over it goes alone (SQS refuses
// it, and only it).
func TestSendBatchSplitsByBytes(t *testing.T) {
	f := &fakeSQS{}
	ds := deliveries(5, 100*1024, nil)
	ds = append(ds[:2], append(deliveries(1, 300*1024, nil), ds[2:]...)...)
	ds[2].ID = "evt_big"
	results := batchSender(t, newSender(t, f, "orders")).SendBatch(context.Background(), ds)
	var calls [][]string
	for _, b := range f.batches {
		bytes := 0
		for _, e := range b.Entries {
			bytes += len(aws.ToString(e.MessageBody))
		}
		if bytes > sqstarget.MaxBatchBytes && len(b.Entries) > 1 {
			t.Errorf("a call of %d entries carries %d bytes of bodies", len(b.Entries), bytes)
		}
		calls = append(calls, eventIDs(b))
	}
	want := [][]string{{"evt_0", "evt_1"}, {"evt_big"}, {"evt_2", "evt_3"}, {"evt_4"}}
	if diff := cmp.Diff(want, calls, cmpopts.SortSlices(func(a, b []string) bool { return a[0] < b[0] })); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(results) != 6 {
		t.Errorf("%d results for 6 events", len(results))
	}
}

// TestSendBatchEachEntrysOutcome: an entry SQS lists Failed is a failed
// attempt with its code and message, whether SQS blames the sender or
// itself (every refusal is retried, as Send's are); one listed nowhere
// fails too; the others are delivered.
func TestSendBatchEachEntrysOutcome(t *testing.T) {
	f := &fakeSQS{answer: func(_ int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		out := &sqs.SendMessageBatchOutput{}
		for _, e := range in.Entries {
			switch aws.ToString(e.Id) {
			case "1":
				out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidParameterValue"), Message: aws.String("bad attribute"), SenderFault: true})
			case "3":
				out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError"), Message: aws.String(strings.Repeat("m", 300)), SenderFault: false})
			case "4": // listed nowhere
			default:
				out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
			}
		}
		out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: aws.String("99"), Code: aws.String("Stray")}) // names no entry sent
		return out, nil
	}}
	results := batchSender(t, newSender(t, f, "orders")).SendBatch(context.Background(), deliveries(5, 50, nil))
	want := []string{"", "sqs InvalidParameterValue: bad attribute", "", "sqs InternalError: " + strings.Repeat("m", sender.MaxErrorMessage) + "…",
		"sqs NoEntryResult: the answer lists the entry neither Successful nor Failed"}
	for i, r := range results {
		if got := r.Describe(); got != want[i] {
			t.Errorf("event %d: %q, want %q", i, got, want[i])
		}
		var te *sender.TargetError
		if want[i] != "" && !errors.As(r.Err, &te) {
			t.Errorf("event %d: error %T, want a *sender.TargetError", i, r.Err)
		}
		if want[i] != "" && r.Verdict() != sender.Failed {
			t.Errorf("event %d: verdict %v", i, r.Verdict())
		}
	}
}

// TestSendBatchCallFails: a call refused as a whole fails each of its
// events with the call's error; the other calls' events are delivered.
func TestSendBatchCallFails(t *testing.T) {
	f := &fakeSQS{answer: func(_ int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		if eventIDs(in)[0] == "evt_10" {
			return nil, &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform sqs:SendMessage"}
		}
		return allSuccessful(in), nil
	}}
	results := batchSender(t, newSender(t, f, "orders")).SendBatch(context.Background(), deliveries(15, 50, nil))
	for i, r := range results {
		if i < 10 && r.Verdict() != sender.Delivered || i >= 10 && r.Describe() != "sqs AccessDenied: not authorized to perform sqs:SendMessage" {
			t.Errorf("event %d: %q", i, r.Describe())
		}
	}
}

// TestSendBatchTimeout: a call that outlives the attempt's timeout fails
// its events as "timeout".
func TestSendBatchTimeout(t *testing.T) {
	f := &fakeSQS{answer: func(_ int, _ *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		return nil, fmt.Errorf("operation error SQS: SendMessageBatch: %w", context.DeadlineExceeded)
	}}
	results := batchSender(t, newSender(t, f, "orders")).SendBatch(context.Background(), deliveries(3, 50, nil))
	for i, r := range results {
		if r.Describe() != "timeout" {
			t.Errorf("event %d: %q", i, r.Describe())
		}
	}
}

// TestSendBatchFIFOHoldsAFailedGroup: on a FIFO queue the calls go in
// order, one after another, and once an event of a group fails, the
// group's later events are not sent (they would overtake it): they fail
// unsent; the other groups go on.
func TestSendBatchFIFOHoldsAFailedGroup(t *testing.T) {
	inFlight := 0
	var mu sync.Mutex
	f := &fakeSQS{answer: func(_ int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		mu.Lock()
		inFlight++
		overlap := inFlight > 1
		mu.Unlock()
		defer func() { mu.Lock(); inFlight--; mu.Unlock() }()
		if overlap {
			return nil, errors.New("calls overlap on a FIFO queue")
		}
		out := &sqs.SendMessageBatchOutput{}
		for _, e := range in.Entries {
			if aws.ToString(e.MessageAttributes[message.AttrID].StringValue) == "evt_2" {
				out.Failed = append(out.Failed, types.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InternalError")})
				continue
			}
			out.Successful = append(out.Successful, types.SendMessageBatchResultEntry{Id: e.Id})
		}
		return out, nil
	}}
	group := func(i int) string { return []string{"stripe:a", "stripe:b"}[i%2] }
	results := batchSender(t, newSender(t, f, "orders.fifo")).SendBatch(context.Background(), deliveries(24, 50, group))
	var sent [][]string
	for _, b := range f.batches {
		sent = append(sent, eventIDs(b))
	}
	want := [][]string{
		{"evt_0", "evt_1", "evt_2", "evt_3", "evt_4", "evt_5", "evt_6", "evt_7", "evt_8", "evt_9"},
		{"evt_11", "evt_13", "evt_15", "evt_17", "evt_19"},
		{"evt_21", "evt_23"},
	}
	if diff := cmp.Diff(want, sent); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	for i, r := range results {
		switch {
		case i == 2:
			if r.Describe() != "sqs InternalError" {
				t.Errorf("event 2: %q", r.Describe())
			}
		case i%2 == 0 && i > 9:
			if !r.Unsent || !errors.Is(r.Err, sqstarget.ErrGroupHeld) {
				t.Errorf("event %d of the failed group: %+v, want held unsent", i, r)
			}
		default:
			if r.Verdict() != sender.Delivered {
				t.Errorf("event %d: %q", i, r.Describe())
			}
		}
	}
}

// TestSendBatchEmpty: no events, no call.
func TestSendBatchEmpty(t *testing.T) {
	f := &fakeSQS{}
	if r := batchSender(t, newSender(t, f, "orders")).SendBatch(context.Background(), nil); len(r) != 0 || len(f.batches) != 0 {
		t.Errorf("results %v, calls %d", r, len(f.batches))
	}
}
