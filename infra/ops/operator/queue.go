package operator

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
)

// depth is a queue's approximate message counts.
type depth struct {
	Visible, InFlight, Delayed int
}

func (d depth) total() int { return d.Visible + d.InFlight + d.Delayed }

func (o *Operator) depth(ctx context.Context, url string) (depth, error) {
	out, err := o.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &url, AttributeNames: []sqstypes.QueueAttributeName{
		sqstypes.QueueAttributeNameApproximateNumberOfMessages,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
		sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed,
	}})
	if err != nil {
		return depth{}, fmt.Errorf("read the depth of %s: %w", url, err)
	}
	n := func(name sqstypes.QueueAttributeName) int {
		v, _ := strconv.Atoi(out.Attributes[string(name)])
		return v
	}
	return depth{
		Visible:  n(sqstypes.QueueAttributeNameApproximateNumberOfMessages),
		InFlight: n(sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible),
		Delayed:  n(sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed),
	}, nil
}

// PeekVisibility is how long a peek hides the messages it reads, so one
// pass sees each once. They are never deleted, and are made visible again
// as soon as the pass ends.
const PeekVisibility = 5 * time.Second

// peek reads up to limit messages of a queue without consuming them, calling
// visit for each until it returns false. Receives stop when one comes back
// empty. Every message read is released at the end (visibility 0).
func (o *Operator) peek(ctx context.Context, url string, limit int, visit func(sqstypes.Message) bool) (n int, err error) {
	seen := map[string]bool{}
	var held []*string
	defer func() { o.release(context.WithoutCancel(ctx), url, held) }()
	for len(seen) < limit {
		out, err := o.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
			QueueUrl: &url, MaxNumberOfMessages: int32(min(10, limit-len(seen))), WaitTimeSeconds: 1,
			VisibilityTimeout:           int32(PeekVisibility / time.Second),
			MessageAttributeNames:       []string{"All"},
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
		})
		if err != nil {
			return len(seen), fmt.Errorf("read %s: %w", url, err)
		}
		if len(out.Messages) == 0 {
			break
		}
		stop := false
		for _, m := range out.Messages {
			held = append(held, m.ReceiptHandle)
			id := aws.ToString(m.MessageId)
			if seen[id] || stop {
				continue
			}
			seen[id] = true
			stop = !visit(m)
		}
		if stop {
			break
		}
	}
	return len(seen), nil
}

// release makes peeked messages visible again at once. Should that fail
// they show again after PeekVisibility anyway.
func (o *Operator) release(ctx context.Context, url string, handles []*string) {
	for start := 0; start < len(handles); start += 10 {
		var entries []sqstypes.ChangeMessageVisibilityBatchRequestEntry
		for i, h := range handles[start:min(start+10, len(handles))] {
			entries = append(entries, sqstypes.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: h, VisibilityTimeout: 0})
		}
		if _, err := o.SQS.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &url, Entries: entries}); err != nil {
			o.progressf("could not show %d peeked message(s) again at once; they show again within %s: %v\n", len(entries), PeekVisibility, err)
		}
	}
}

// decoded reads a received message's event through the message codec. It
// is tolerant: what could be read is returned even from a message the
// deliverer would refuse (a DLQ holds those too), which is listed and
// moved all the same.
func decoded(m sqstypes.Message) message.Event {
	ev, _ := message.Decode(aws.ToString(m.Body), sqsattr.FromSQS(m.MessageAttributes))
	return ev
}
