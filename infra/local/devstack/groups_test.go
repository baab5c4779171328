package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
)

// scriptedQueue is an emulator that keeps no FIFO rule: each receive hands
// out the batch the test gives it next (none once the script is closed).
type scriptedQueue struct {
	batches chan []sqstypes.Message
	hidden  chan string // "handle=seconds" of each visibility change

	mu        sync.Mutex
	inside    int
	maxInside int
	deleted   []string
}

func newScriptedQueue() *scriptedQueue {
	return &scriptedQueue{batches: make(chan []sqstypes.Message), hidden: make(chan string, 100)}
}

func (q *scriptedQueue) ReceiveMessage(ctx context.Context, _ *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	q.inside++
	q.maxInside = max(q.maxInside, q.inside)
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.inside--
		q.mu.Unlock()
	}()
	select {
	case b := <-q.batches:
		return &sqs.ReceiveMessageOutput{Messages: b}, nil
	case <-ctx.Done():
		return &sqs.ReceiveMessageOutput{}, nil
	}
}

func (q *scriptedQueue) DeleteMessageBatch(_ context.Context, in *sqs.DeleteMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, e := range in.Entries {
		q.deleted = append(q.deleted, aws.ToString(e.ReceiptHandle))
	}
	return &sqs.DeleteMessageBatchOutput{}, nil
}

func (q *scriptedQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.hidden <- fmt.Sprintf("%s=%d", aws.ToString(in.ReceiptHandle), in.VisibilityTimeout)
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func (q *scriptedQueue) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return &sqs.SendMessageOutput{}, nil
}

// fifoMessage is a message of group g as SQS hands it out, received n times.
func fifoMessage(id, handle, group string, n int) sqstypes.Message {
	return sqstypes.Message{MessageId: aws.String(id), ReceiptHandle: aws.String(handle), Body: aws.String("{}"),
		Attributes: map[string]string{"MessageGroupId": group, "ApproximateReceiveCount": fmt.Sprint(n)}}
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// within waits for a value from ch, failing the test after a deadline.
func within[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("no %s", what)
		var zero T
		return zero
	}
}

// startPoller runs p until the test ends, closing the script first.
func startPoller(t *testing.T, p *Poller, q *scriptedQueue) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = p.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		close(q.batches)
		<-done
	})
}

// TestPollerHoldsAKeyWhileOneOfItIsInFlight is the ordered lane's failure
// on moto: a receive hands out a key's next event while the key's earlier
// one waits (hidden by the function) for its retry. The poller keeps it
// from the function, hides it until the earlier one is visible again, and
// the key's events are delivered in order once the earlier one is back.
func TestPollerHoldsAKeyWhileOneOfItIsInFlight(t *testing.T) {
	q := newScriptedQueue()
	gate := &GroupGate{MaxReceiveCount: 10, Visibility: time.Minute, Log: quiet()}
	fn := gate.Observe(q)
	calls := make(chan []string, 10)
	first := true
	p := &Poller{SQS: q, QueueURL: "http://127.0.0.1/000000000000/lane.fifo", BatchSize: 10, Concurrency: 1,
		FunctionTimeout: time.Minute, Log: quiet(), Gate: gate,
		Handler: func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
			var ids []string
			for _, r := range ev.Records {
				ids = append(ids, r.MessageId)
			}
			calls <- ids
			if first && ids[0] == "a1" {
				// The first attempt fails: hidden for its 30 s retry delay.
				first = false
				_, _ = fn.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{ReceiptHandle: aws.String(ev.Records[0].ReceiptHandle), VisibilityTimeout: 30})
				return events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{{ItemIdentifier: "a1"}}}, nil
			}
			return events.SQSEventResponse{}, nil
		}}
	startPoller(t, p, q)

	q.batches <- []sqstypes.Message{fifoMessage("a1", "h1", "stripe:A", 1)}
	if got := within(t, calls, "invocation"); !slices.Equal(got, []string{"a1"}) {
		t.Fatalf("first invocation %v, want [a1]", got)
	}
	if got := within(t, q.hidden, "retry delay"); got != "h1=30" {
		t.Fatalf("visibility change %s, want h1=30", got)
	}
	// The emulator hands out a2 while a1 waits for its retry.
	q.batches <- []sqstypes.Message{fifoMessage("a2", "h2", "stripe:A", 1), fifoMessage("b1", "h3", "stripe:B", 1)}
	got := within(t, q.hidden, "hold of a2")
	var secs int
	if _, err := fmt.Sscanf(got, "h2=%d", &secs); err != nil || secs < 29 || secs > 30 {
		t.Errorf("a2 hidden as %q, want h2 hidden until a1 is visible again (30 s)", got)
	}
	if got := within(t, calls, "invocation"); !slices.Equal(got, []string{"b1"}) {
		t.Errorf("second invocation %v, want [b1] (another key goes on, a2 is held)", got)
	}
	// a1 is back, a2 behind it.
	q.batches <- []sqstypes.Message{fifoMessage("a1", "h4", "stripe:A", 2), fifoMessage("a2", "h5", "stripe:A", 2)}
	if got := within(t, calls, "invocation"); !slices.Equal(got, []string{"a1", "a2"}) {
		t.Errorf("third invocation %v, want [a1 a2]", got)
	}
	if n := gate.Holds(); n != 1 {
		t.Errorf("%d holds, want 1", n)
	}
}

// TestPollerReceivesOneAtATimeOnAFIFOQueue: the lane's two batches at once
// share one receive at a time, so each poll starts with the previous
// one's messages in flight.
func TestPollerReceivesOneAtATimeOnAFIFOQueue(t *testing.T) {
	q := newScriptedQueue()
	gate := &GroupGate{Log: quiet()}
	p := &Poller{SQS: q, QueueURL: "http://127.0.0.1/000000000000/lane.fifo", BatchSize: 10, Concurrency: 2,
		FunctionTimeout: time.Minute, Log: quiet(), Gate: gate,
		Handler: func(context.Context, events.SQSEvent) (events.SQSEventResponse, error) {
			return events.SQSEventResponse{}, nil
		}}
	startPoller(t, p, q)
	for i := range 3 {
		deadline := time.Now().Add(10 * time.Second)
		for gate.queued.Load() < 2 {
			if time.Now().After(deadline) {
				t.Fatalf("round %d: %d receives queued, want both workers'", i, gate.queued.Load())
			}
			time.Sleep(time.Millisecond)
		}
		q.mu.Lock()
		inside, most := q.inside, q.maxInside
		q.mu.Unlock()
		if inside > 1 || most > 1 {
			t.Fatalf("round %d: %d receives at once (at most %d), want one", i, inside, most)
		}
		q.batches <- []sqstypes.Message{fifoMessage(fmt.Sprint("m", i), fmt.Sprint("h", i), "g", 1)}
	}
}

// TestGroupGateAdmits: which messages of a batch the gate hands to the
// function, by what it knows is in flight.
func TestGroupGateAdmits(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		setup func(g *GroupGate)
		batch []sqstypes.Message
		take  []string
		holds []string
	}{
		{name: "a key's events in one batch go together, in order",
			batch: []sqstypes.Message{fifoMessage("a1", "h1", "A", 1), fifoMessage("a2", "h2", "A", 1)},
			take:  []string{"a1", "a2"}},
		{name: "a key with one in a running batch waits",
			setup: func(g *GroupGate) { g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)}) },
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 1), fifoMessage("a3", "h3", "A", 1), fifoMessage("b1", "h4", "B", 1)},
			take:  []string{"b1"}, holds: []string{"a2=60s", "a3=60s"}},
		{name: "a deleted one lets its key go on",
			setup: func(g *GroupGate) {
				g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.deleted("h1")
			},
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 1)}, take: []string{"a2"}},
		{name: "one made visible at once lets its key go on",
			setup: func(g *GroupGate) {
				g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.changed("h1", 0)
			},
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 1)}, take: []string{"a2"}},
		{name: "one hidden for its retry holds its key for what is left of it",
			setup: func(g *GroupGate) {
				g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.changed("h1", 20)
				g.returned([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.now = func() time.Time { return now.Add(5 * time.Second) }
			},
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 1)}, holds: []string{"a2=15s"}},
		{name: "one visible again (received elsewhere, or moved to the DLQ) holds nothing",
			setup: func(g *GroupGate) {
				g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.changed("h1", 20)
				g.returned([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)})
				g.now = func() time.Time { return now.Add(20 * time.Second) }
			},
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 1)}, take: []string{"a2"}},
		{name: "the same message received again is not held by its old receive",
			setup: func(g *GroupGate) { g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)}) },
			batch: []sqstypes.Message{fifoMessage("a1", "h9", "A", 2), fifoMessage("a2", "h2", "A", 1)},
			take:  []string{"a1", "a2"}},
		{name: "a message with no receive to spare is never held into the DLQ",
			setup: func(g *GroupGate) { g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)}) },
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 4), fifoMessage("a3", "h3", "A", 3)},
			take:  []string{"a2", "a3"}},
		{name: "one behind a held one is held too, whatever its count",
			setup: func(g *GroupGate) { g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)}) },
			batch: []sqstypes.Message{fifoMessage("a2", "h2", "A", 3), fifoMessage("a3", "h3", "A", 1)},
			holds: []string{"a2=60s", "a3=60s"}},
		{name: "messages without a group pass",
			setup: func(g *GroupGate) { g.admit([]sqstypes.Message{fifoMessage("a1", "h1", "A", 1)}) },
			batch: []sqstypes.Message{fifoMessage("x", "h2", "", 1)}, take: []string{"x"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := &GroupGate{MaxReceiveCount: 4, Visibility: time.Minute, Log: quiet(), now: func() time.Time { return now }}
			if tt.setup != nil {
				tt.setup(g)
			}
			take, hold := g.admit(tt.batch)
			var gotTake, gotHold []string
			for _, m := range take {
				gotTake = append(gotTake, *m.MessageId)
			}
			for _, h := range hold {
				gotHold = append(gotHold, fmt.Sprintf("%s=%gs", *h.msg.MessageId, h.wait.Seconds()))
			}
			if diff := cmp.Diff(tt.take, gotTake); diff != "" {
				t.Errorf("handed to the function (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.holds, gotHold); diff != "" {
				t.Errorf("held (-want +got):\n%s", diff)
			}
		})
	}
}
