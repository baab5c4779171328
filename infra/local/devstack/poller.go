package devstack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/message/sqsattr"
)

// DeliverFunc is a deliver Lambda's handler.
type DeliverFunc func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error)

// QueueAPI is the part of the SQS client a poller uses.
type QueueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
	ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error)
}

// Poller does for one queue what the Lambda SQS event source mapping does:
// long-poll batches, invoke the function with a deadline, and delete the
// messages the function did not report as failed. A function error, or a
// failure report naming an unknown message, fails the whole batch, as
// Lambda does; failed messages return after their visibility timeout (or
// sooner when the function changed it).
type Poller struct {
	SQS         QueueAPI
	QueueURL    string
	QueueARN    string
	Region      string
	BatchSize   int           // 1..10000 (more than 10 with a Window)
	Concurrency int           // concurrent batches (the mapping's MaximumConcurrency)
	WaitTime    time.Duration // long poll, at most 20s
	// Window is the mapping's batching window: after a receive returns
	// messages, the poller keeps receiving for up to Window until it has
	// BatchSize messages or MaxBatchBytes of bodies, as the mapping
	// gathers a batch. On a FIFO queue one receive makes the batch (an
	// ordered lane's batch is at most 10, one receive's).
	Window          time.Duration
	FunctionTimeout time.Duration
	Handler         DeliverFunc
	Log             *slog.Logger
	// Mapping, when set, is the lane's event source mapping switch: while
	// it is off the poller receives nothing (batches in flight finish), as
	// Lambda stops polling a disabled mapping.
	Mapping interface {
		Enabled(ctx context.Context) (bool, error)
	}
	// Gate keeps a FIFO queue's message groups in order (see GroupGate);
	// every poller of the queue shares one. Run makes one for a FIFO queue
	// (a URL ending in .fifo) that has none.
	Gate *GroupGate

	// turn lets one worker at a time receive from a standard queue
	// (receiveTurn).
	turn     chan struct{}
	turnOnce sync.Once
}

// Run polls until ctx is done, then lets in-flight batches finish (each
// within its function timeout) and returns. A batch received when ctx ends
// is still delivered, so a shutdown loses nothing.
func (p *Poller) Run(ctx context.Context) error {
	workers := max(p.Concurrency, 1)
	if p.Gate == nil && strings.HasSuffix(p.QueueURL, ".fifo") {
		p.Gate = &GroupGate{Log: p.Log}
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.loop(ctx)
		}()
	}
	wg.Wait()
	return nil
}

func (p *Poller) loop(ctx context.Context) {
	wait := int32(min(max(p.WaitTime, 0), 20*time.Second) / time.Second)
	for ctx.Err() == nil {
		if !p.enabled(ctx) {
			select {
			case <-ctx.Done():
			case <-time.After(min(max(p.WaitTime, 100*time.Millisecond), time.Second)):
			}
			continue
		}
		// The receive must not be cut short by a shutdown once SQS may have
		// handed out messages, so it runs on its own context bounded by the
		// long poll; shutdown is noticed between receives.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(wait+10)*time.Second)
		msgs, err := p.receive(rctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &p.QueueURL,
			MaxNumberOfMessages:         int32(min(max(p.BatchSize, 1), 10)),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		cancel()
		if err == nil && len(msgs) > 0 {
			msgs = p.gather(ctx, msgs)
		}
		if err != nil {
			p.Log.Error("receive failed", "queue", p.QueueURL, "error", err)
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		if len(msgs) > 0 {
			p.invoke(context.WithoutCancel(ctx), msgs)
		}
	}
}

// MaxBatchBytes is the most message body bytes one invocation gets:
// Lambda's 6 MB synchronous invocation payload, which bounds the event
// source mapping's batches.
const MaxBatchBytes = 6 << 20

// gather adds to a first receive's messages what further receives return
// within the batching window, up to BatchSize messages and MaxBatchBytes
// of bodies (a message that would pass it is made visible again at once,
// for the next batch).
func (p *Poller) gather(ctx context.Context, msgs []sqstypes.Message) []sqstypes.Message {
	if p.Window <= 0 || p.Gate != nil || len(msgs) >= p.BatchSize {
		return msgs
	}
	bytes := 0
	for _, m := range msgs {
		bytes += len(aws.ToString(m.Body))
	}
	deadline := time.Now().Add(p.Window)
	for len(msgs) < p.BatchSize && bytes < MaxBatchBytes && ctx.Err() == nil {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		wait := int32(min(left, 20*time.Second) / time.Second)
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Duration(wait+10)*time.Second)
		more, err := p.receive(rctx, &sqs.ReceiveMessageInput{
			QueueUrl:                    &p.QueueURL,
			MaxNumberOfMessages:         int32(min(p.BatchSize-len(msgs), 10)),
			WaitTimeSeconds:             wait,
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames:       []string{"All"},
		})
		cancel()
		if err != nil {
			p.Log.Warn("receive within the batching window failed; invoking with what was received", "queue", p.QueueURL, "error", err)
			break
		}
		for _, m := range more {
			n := len(aws.ToString(m.Body))
			if bytes+n > MaxBatchBytes {
				p.release(ctx, m)
				continue
			}
			msgs, bytes = append(msgs, m), bytes+n
		}
		if len(more) == 0 && wait == 0 {
			// Less than a second left: a short poll found nothing.
			select {
			case <-ctx.Done():
			case <-time.After(min(left, 100*time.Millisecond)):
			}
		}
	}
	return msgs
}

// receiveTurn waits until no other worker of the poller is receiving,
// false when ctx ended first (no messages: the caller goes round again).
// moto server (5.2.1) does not receive atomically: its ReceiveMessage
// checks and marks each message without a lock, so two concurrent receives
// can both take one message (seen: one event's message taken twice 200 ms
// apart, its second copy counted as a retry, attempt 2). SQS hands a
// message to one receive while it is in flight; one receive at a time per
// queue restores that on the emulator. A receive returns as soon as
// messages are there, so the turn costs a busy queue nothing.
func (p *Poller) receiveTurn(ctx context.Context) bool {
	p.turnOnce.Do(func() { p.turn = make(chan struct{}, 1) })
	select {
	case p.turn <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

// release makes a received message visible again at once.
func (p *Poller) release(ctx context.Context, m sqstypes.Message) {
	if _, err := p.SQS.ChangeMessageVisibility(context.WithoutCancel(ctx), &sqs.ChangeMessageVisibilityInput{QueueUrl: &p.QueueURL,
		ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0}); err != nil {
		p.Log.Warn("releasing a message over the batch's bytes failed; it returns after its visibility timeout", "message_id", aws.ToString(m.MessageId), "error", err)
	}
}

// receive receives a batch: through the gate on a FIFO queue, which
// hides the messages it holds.
func (p *Poller) receive(ctx context.Context, in *sqs.ReceiveMessageInput) ([]sqstypes.Message, error) {
	if p.Gate == nil {
		if !p.receiveTurn(ctx) {
			return nil, nil
		}
		defer func() { <-p.turn }()
		out, err := p.SQS.ReceiveMessage(ctx, in)
		if err != nil {
			return nil, err
		}
		return out.Messages, nil
	}
	take, hold, err := p.Gate.receive(ctx, p.SQS, in)
	if err != nil {
		return nil, err
	}
	for _, h := range hold {
		secs := int32((h.wait + time.Second - 1) / time.Second)
		p.Log.Warn("the emulator handed out a message of a key with another in flight; hidden until that one is visible again",
			"message_id", aws.ToString(h.msg.MessageId), "seconds", secs)
		if _, err := p.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &p.QueueURL,
			ReceiptHandle: h.msg.ReceiptHandle, VisibilityTimeout: secs}); err != nil {
			// It comes back after the queue's visibility timeout instead.
			p.Log.Error("hiding a held message failed", "message_id", aws.ToString(h.msg.MessageId), "error", err)
		}
	}
	return take, nil
}

// enabled reports whether the mapping lets the poller receive. A switch
// that cannot be read counts as on, as Lambda's mapping stays as it was.
func (p *Poller) enabled(ctx context.Context) bool {
	if p.Mapping == nil {
		return true
	}
	on, err := p.Mapping.Enabled(ctx)
	if err != nil {
		p.Log.Warn("mapping switch unreadable; receiving", "queue", p.QueueURL, "error", err)
		return true
	}
	return on
}

// invoke runs one batch to completion and deletes what succeeded.
func (p *Poller) invoke(ctx context.Context, msgs []sqstypes.Message) {
	ev := p.event(msgs)
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	reqID := hex.EncodeToString(id)
	fctx, cancel := context.WithTimeout(ctx, p.FunctionTimeout)
	fctx = lambdacontext.NewContext(fctx, &lambdacontext.LambdaContext{AwsRequestID: reqID, InvokedFunctionArn: "local"})
	resp, err := p.Handler(fctx, ev)
	cancel()
	if p.Gate != nil {
		p.Gate.returned(msgs)
	}
	if err != nil {
		p.Log.Error("deliver function failed; whole batch returns after its visibility timeout", "request_id", reqID, "records", len(msgs), "error", err)
		return
	}
	failed := map[string]bool{}
	for _, f := range resp.BatchItemFailures {
		failed[f.ItemIdentifier] = true
	}
	var entries []sqstypes.DeleteMessageBatchRequestEntry
	known := 0
	for i, m := range msgs {
		if failed[*m.MessageId] {
			known++
			continue
		}
		entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(fmt.Sprint(i)), ReceiptHandle: m.ReceiptHandle})
	}
	if known != len(failed) {
		p.Log.Error("function reported an unknown message id; whole batch fails, as in Lambda", "request_id", reqID)
		return
	}
	if len(entries) == 0 {
		return
	}
	out, err := p.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &p.QueueURL, Entries: entries})
	if err != nil {
		p.Log.Error("delete failed; messages will be received again and deduplicated", "request_id", reqID, "error", err)
		return
	}
	if p.Gate != nil {
		bad := map[string]bool{}
		for _, f := range out.Failed {
			bad[aws.ToString(f.Id)] = true
		}
		for _, e := range entries {
			if !bad[aws.ToString(e.Id)] {
				p.Gate.deleted(aws.ToString(e.ReceiptHandle))
			}
		}
	}
	for _, f := range out.Failed {
		p.Log.Error("delete of one message failed; it will be received again and deduplicated", "request_id", reqID, "code", aws.ToString(f.Code))
	}
}

func (p *Poller) event(msgs []sqstypes.Message) events.SQSEvent {
	return SQSEvent(msgs, p.QueueARN, p.Region)
}

// SQSEvent is the event the Lambda SQS event source mapping hands a
// function for messages received from the queue queueARN.
func SQSEvent(msgs []sqstypes.Message, queueARN, region string) events.SQSEvent {
	ev := events.SQSEvent{Records: make([]events.SQSMessage, 0, len(msgs))}
	for _, m := range msgs {
		attrs := sqsattr.ToLambda(sqsattr.FromSQS(m.MessageAttributes))
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId:              aws.ToString(m.MessageId),
			ReceiptHandle:          aws.ToString(m.ReceiptHandle),
			Body:                   aws.ToString(m.Body),
			Md5OfBody:              aws.ToString(m.MD5OfBody),
			Md5OfMessageAttributes: aws.ToString(m.MD5OfMessageAttributes),
			Attributes:             m.Attributes,
			MessageAttributes:      attrs,
			EventSourceARN:         queueARN,
			EventSource:            "aws:sqs",
			AWSRegion:              region,
		})
	}
	return ev
}
