package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// windowQueue hands out its messages, at most MaxNumberOfMessages a
// receive, and records the receives and the releases.
type windowQueue struct {
	mu       sync.Mutex
	waiting  []sqstypes.Message
	receives []int32 // MaxNumberOfMessages asked
	released []string
}

func (q *windowQueue) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, _ ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	q.receives = append(q.receives, in.MaxNumberOfMessages)
	n := min(int(in.MaxNumberOfMessages), len(q.waiting))
	out := q.waiting[:n:n]
	q.waiting = q.waiting[n:]
	q.mu.Unlock()
	if n == 0 && in.WaitTimeSeconds > 0 {
		// A long poll that finds nothing waits its time.
		select {
		case <-time.After(time.Duration(in.WaitTimeSeconds) * time.Second):
		case <-ctx.Done():
		}
	}
	return &sqs.ReceiveMessageOutput{Messages: out}, nil
}

func (q *windowQueue) DeleteMessageBatch(context.Context, *sqs.DeleteMessageBatchInput, ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error) {
	return &sqs.DeleteMessageBatchOutput{}, nil
}

func (q *windowQueue) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.released = append(q.released, aws.ToString(in.ReceiptHandle))
	return &sqs.ChangeMessageVisibilityOutput{}, nil
}

func windowMessages(n, size int) []sqstypes.Message {
	out := make([]sqstypes.Message, n)
	for i := range out {
		out[i] = sqstypes.Message{MessageId: aws.String(fmt.Sprint(i)), ReceiptHandle: aws.String(fmt.Sprint("rh", i)), Body: aws.String(strings.Repeat("x", size))}
	}
	return out
}

// TestPollerGathersItsWindow: a batched lane's poller receives, after a
// first receive, up to BatchSize messages (beyond SQS's 10 a receive)
// within its window; without enough waiting it invokes with what it got
// once the window ends; past MaxBatchBytes a message is released; and
// a poller without a window, or on a FIFO queue, invokes with one
// receive's.
func TestPollerGathersItsWindow(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	first := func(q *windowQueue) []sqstypes.Message {
		out, _ := q.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{MaxNumberOfMessages: 10})
		return out.Messages
	}
	t.Run("fills to BatchSize", func(t *testing.T) {
		q := &windowQueue{waiting: windowMessages(40, 10)}
		p := &Poller{SQS: q, BatchSize: 25, Window: 2 * time.Second, Log: quiet}
		got := p.gather(context.Background(), first(q))
		if len(got) != 25 || fmt.Sprint(q.receives) != "[10 10 5]" {
			t.Errorf("gathered %d in receives %v; want 25 in [10 10 5]", len(got), q.receives)
		}
	})
	t.Run("the window ends", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			q := &windowQueue{waiting: windowMessages(3, 10)}
			p := &Poller{SQS: q, BatchSize: 100, Window: 3 * time.Second, Log: quiet}
			start := time.Now()
			got := p.gather(context.Background(), first(q))
			if len(got) != 3 {
				t.Errorf("gathered %d, want the 3 waiting", len(got))
			}
			if took := time.Since(start); took < 3*time.Second || took > 4*time.Second {
				t.Errorf("gathered for %s, want the 3 s window", took)
			}
		})
	})
	t.Run("bytes", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			// 31 bodies of 200,000 bytes fit 6 MB, 32 do not.
			q := &windowQueue{waiting: windowMessages(40, 200000)}
			p := &Poller{SQS: q, BatchSize: 100, Window: time.Second, Log: quiet}
			got := p.gather(context.Background(), first(q))
			if len(got) != 31 || len(q.released) != 9 {
				t.Errorf("gathered %d, released %d; want 31 (6 MB) and the fourth receive's other 9 released", len(got), len(q.released))
			}
		})
	})
	t.Run("no window, FIFO", func(t *testing.T) {
		for _, p := range []*Poller{{BatchSize: 100}, {BatchSize: 10, Window: time.Second, Gate: &GroupGate{}}} {
			q := &windowQueue{waiting: windowMessages(30, 10)}
			p.SQS, p.Log = q, quiet
			if got := p.gather(context.Background(), first(q)); len(got) != 10 || len(q.receives) != 1 {
				t.Errorf("gathered %d in %d receives; want one receive's 10", len(got), len(q.receives))
			}
		}
	})
}

// overlapQueue counts how many receives are in flight at once; each
// receive waits its long poll (the queue is empty).
type overlapQueue struct {
	windowQueue
	mu        sync.Mutex
	now, most int
	calls     int
}

func (q *overlapQueue) ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, o ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	q.mu.Lock()
	q.now++
	q.calls++
	q.most = max(q.most, q.now)
	q.mu.Unlock()
	defer func() { q.mu.Lock(); q.now--; q.mu.Unlock() }()
	return q.windowQueue.ReceiveMessage(ctx, in, o...)
}

// TestPollerReceivesOneAtATime: a poller's workers take turns to receive
// from a standard queue, so the emulator, which does not receive
// atomically, cannot hand one message to two of them; a worker waiting
// for its turn gives up when the poller stops.
func TestPollerReceivesOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		q := &overlapQueue{}
		p := &Poller{SQS: q, QueueURL: "http://127.0.0.1:1/q", BatchSize: 10, Concurrency: 5, WaitTime: 2 * time.Second,
			Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		<-done
		if q.most != 1 || q.calls < 10 {
			t.Errorf("%d receives, at most %d at once; want several, one at a time", q.calls, q.most)
		}
	})
}
