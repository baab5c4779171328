package eventbridgetarget_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/eventbridgetarget"
)

const bus = "arn:aws:events:us-east-1:123456789012:event-bus/orders"

// fakeBus keeps every call; answer, when set, answers it (nil: every
// entry put).
type fakeBus struct {
	mu     sync.Mutex
	calls  []*eventbridge.PutEventsInput
	answer func(in *eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error)
}

func (f *fakeBus) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	f.mu.Lock()
	f.calls = append(f.calls, in)
	answer := f.answer
	f.mu.Unlock()
	if answer != nil {
		return answer(in)
	}
	out := &eventbridge.PutEventsOutput{}
	for range in.Entries {
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("e")})
	}
	return out, nil
}

func newSender(t *testing.T, f *fakeBus, tracing bool) sender.BatchSender {
	t.Helper()
	s, err := eventbridgetarget.New(f, config.Destination{Name: "b", Type: config.TypeEventBridge, Target: bus}, tracing)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := s.(sender.BatchSender)
	if !ok {
		t.Fatalf("%T has no SendBatch", s)
	}
	return b
}

func deliveries(n, bodyBytes int) []sender.Delivery {
	ds := make([]sender.Delivery, n)
	for i := range ds {
		ds[i] = sender.Delivery{ID: fmt.Sprintf("evt_%d", i), Source: "stripe", Type: "invoice.paid", ContentType: "application/json",
			Body: fmt.Appendf(nil, `{"id":"evt_%d","pad":"%s"}`, i, strings.Repeat("x", max(0, bodyBytes-30))), TraceHeader: fmt.Sprintf("Root=1-%d", i),
			ReceivedAt: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), Timeout: 5 * time.Second}
	}
	return ds
}

func detailIDs(in *eventbridge.PutEventsInput) []string {
	var ids []string
	for _, e := range in.Entries {
		d := aws.ToString(e.Detail)
		ids = append(ids, d[strings.Index(d, "evt_"):strings.Index(d, `","pad"`)])
	}
	return ids
}

// TestSendBatchPutsWhatSendPuts: 12 events go in calls of at most ten,
// each entry the one Send puts (bus, source, type, detail, time, trace
// header with tracing), and each event is delivered.
func TestSendBatchPutsWhatSendPuts(t *testing.T) {
	f := &fakeBus{}
	s := newSender(t, f, true)
	ds := deliveries(12, 100)
	ds[3].Body = []byte("not json")
	results := s.SendBatch(context.Background(), ds)
	if len(f.calls) != 2 {
		t.Fatalf("%d calls, want 2", len(f.calls))
	}
	batched := map[string]ebtypes.PutEventsRequestEntry{}
	for _, c := range f.calls {
		if len(c.Entries) > eventbridgetarget.MaxBatchEntries {
			t.Errorf("a call of %d entries", len(c.Entries))
		}
		for _, e := range c.Entries {
			batched[aws.ToString(e.TraceHeader)] = e
		}
	}
	for _, d := range ds {
		_ = s.Send(context.Background(), d)
	}
	for _, single := range f.calls[2:] {
		e := single.Entries[0]
		if diff := cmp.Diff(e, batched[aws.ToString(e.TraceHeader)], cmpopts.IgnoreUnexported(ebtypes.PutEventsRequestEntry{})); diff != "" {
			t.Errorf("batch entry differs from Send's (-send +batch):\n%s", diff)
		}
	}
	for i, r := range results {
		if r.Verdict() != sender.Delivered {
			t.Errorf("event %d: %q", i, r.Describe())
		}
	}
}

// TestSendBatchSplitsByBytes: no call's entries add up to more than
// 256 KiB as EventBridge counts them; an entry over it goes alone.
func TestSendBatchSplitsByBytes(t *testing.T) {
	f := &fakeBus{}
	ds := deliveries(4, 120*1024)
	ds = append(ds, deliveries(1, 260*1024)...)
	results := newSender(t, f, false).SendBatch(context.Background(), ds)
	var calls [][]string
	for _, c := range f.calls {
		n := 0
		for _, e := range c.Entries {
			n += eventbridgetarget.EntrySize(e)
		}
		if n > eventbridgetarget.MaxBatchBytes && len(c.Entries) > 1 {
			t.Errorf("a call of %d entries of %d bytes", len(c.Entries), n)
		}
		calls = append(calls, detailIDs(c))
	}
	want := [][]string{{"evt_0", "evt_1"}, {"evt_2", "evt_3"}, {"evt_0"}}
	sortCalls := cmpopts.SortSlices(func(a, b []string) bool { return fmt.Sprint(a) < fmt.Sprint(b) })
	if diff := cmp.Diff(want, calls, sortCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if len(results) != 5 {
		t.Errorf("%d results", len(results))
	}
}

// TestEntrySize: Time's 14 bytes, and Source, DetailType and Detail.
func TestEntrySize(t *testing.T) {
	e := ebtypes.PutEventsRequestEntry{Source: aws.String("hookfan.s"), DetailType: aws.String("t"), Detail: aws.String(`{"a":"é"}`), Time: aws.Time(time.Now()),
		EventBusName: aws.String(bus)}
	if got, want := eventbridgetarget.EntrySize(e), 14+9+1+10; got != want {
		t.Errorf("size %d, want %d", got, want)
	}
}

// TestSendBatchEachEntrysOutcome: the answer's entry at an event's
// position decides it: an ErrorCode fails it with the code and message,
// an EventId delivers it; an answer short of entries fails the rest; a
// call refused as a whole fails each of its events with its error.
func TestSendBatchEachEntrysOutcome(t *testing.T) {
	f := &fakeBus{answer: func(in *eventbridge.PutEventsInput) (*eventbridge.PutEventsOutput, error) {
		if len(in.Entries) == 2 {
			return nil, &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Event bus orders does not exist."}
		}
		out := &eventbridge.PutEventsOutput{FailedEntryCount: 2}
		for i := range in.Entries[:len(in.Entries)-1] {
			switch i {
			case 1:
				out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String("ThrottlingException"), ErrorMessage: aws.String("Rate exceeded")})
			case 2:
				out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String("MalformedDetail"), ErrorMessage: aws.String("Detail is malformed.")})
			default:
				out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("e")})
			}
		}
		return out, nil
	}}
	results := newSender(t, f, false).SendBatch(context.Background(), deliveries(12, 50))
	want := map[int]string{1: "eventbridge ThrottlingException: Rate exceeded", 2: "eventbridge MalformedDetail: Detail is malformed.",
		9:  "eventbridge FailedEntry: the answer has no entry for the event",
		10: "eventbridge ResourceNotFoundException: Event bus orders does not exist.", 11: "eventbridge ResourceNotFoundException: Event bus orders does not exist."}
	for i, r := range results {
		if got := r.Describe(); got != want[i] {
			t.Errorf("event %d: %q, want %q", i, got, want[i])
		}
		var te *sender.TargetError
		if want[i] != "" && !errors.As(r.Err, &te) {
			t.Errorf("event %d: %T, want a *sender.TargetError", i, r.Err)
		}
	}
}
