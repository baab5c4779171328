// Package sqstarget is the sender of an sqs destination: each event is
// sent as one message to the queue the destination's target names.
package sqstarget

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
)

// API is the part of the SQS client an sqs target uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// NewClient builds, on cfg, the SQS client a target calls
// (shared/delivery gives cfg the target's region).
func NewClient(cfg aws.Config) API { return sqs.NewFromConfig(cfg) }

// Sender sends each event as one message: the body is the event's bytes
// (their base64, with attribute encoding=base64, when SQS would refuse
// them), and the attributes carry id, source, type, received_at,
// content_type and, on a replay, replay. A FIFO queue gets the lane's
// message group on an ordered lane (the key's group, as received), else
// the source, and the event id as its deduplication id (the replay's id
// appended on a replay, which SQS would otherwise drop as a copy within
// its 5-minute window).
type Sender struct {
	api  API
	url  string
	fifo bool
}

// New is d's sender on api.
func New(api API, d config.Destination, _ bool) (sender.Sender, error) {
	arn, err := config.ParseARN(d.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if api == nil {
		return nil, errors.New("the destination is of type sqs but no SQS client was given")
	}
	return Sender{api: api, url: QueueURLOf(arn), fifo: d.FIFOTarget()}, nil
}

// QueueURLOf is the URL of the queue a queue ARN names (SendMessage takes
// the URL; building it needs no sqs:GetQueueUrl call).
func QueueURLOf(a config.ARN) string {
	domain := "amazonaws.com"
	if a.Partition == "aws-cn" {
		domain = "amazonaws.com.cn"
	}
	return "https://sqs." + a.Region + "." + domain + "/" + a.Account + "/" + a.Resource
}

// Prepare has nothing to read: the lane role's credentials sign the call.
func (Sender) Prepare(context.Context) error { return nil }

// Send sends the event.
func (t Sender) Send(ctx context.Context, d sender.Delivery) sender.Result {
	ev := message.Event{ID: d.ID, Source: d.Source, Type: d.Type, ContentType: d.ContentType, ReceivedAt: d.ReceivedAt, Replay: d.Replay, Reconciled: d.Reconciled}
	ev.Body, ev.Encoding = message.EncodeBody(d.Body)
	body, attrs := ev.Encode()
	sqsAttrs, _ := sqsattr.ToSQS(attrs) // all strings: it cannot fail
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.url), MessageBody: aws.String(body), MessageAttributes: sqsAttrs}
	if t.fifo {
		dedupe := d.ID
		if d.Replay != "" {
			dedupe += ":" + d.Replay
		}
		group := d.Source
		if d.Group != "" {
			group = d.Group
		}
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(sender.Clip(dedupe, 128))
	}
	return sender.Call(ctx, d.Timeout, "sqs", func(ctx context.Context) error {
		_, err := t.api.SendMessage(ctx, in)
		return err
	})
}
