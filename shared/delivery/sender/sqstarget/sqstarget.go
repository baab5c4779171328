// Package sqstarget is the sender of an sqs destination: each event is
// sent as one message to the queue the destination's target names.
package sqstarget

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
)

// API is the part of the SQS client an sqs target uses.
type API interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	SendMessageBatch(ctx context.Context, in *sqs.SendMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error)
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
	m := t.message(d)
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.url), MessageBody: m.MessageBody, MessageAttributes: m.MessageAttributes,
		MessageGroupId: m.MessageGroupId, MessageDeduplicationId: m.MessageDeduplicationId}
	return sender.Call(ctx, d.Timeout, "sqs", func(ctx context.Context) error {
		_, err := t.api.SendMessage(ctx, in)
		return err
	})
}

// message is d as the queue gets it, alone or in a batch (Id unset).
func (t Sender) message(d sender.Delivery) types.SendMessageBatchRequestEntry {
	ev := message.Event{ID: d.ID, Source: d.Source, Type: d.Type, ContentType: d.ContentType, ReceivedAt: d.ReceivedAt, Replay: d.Replay, Reconciled: d.Reconciled}
	ev.Body, ev.Encoding = message.EncodeBody(d.Body)
	body, attrs := ev.Encode()
	sqsAttrs, _ := sqsattr.ToSQS(attrs) // all strings: it cannot fail
	m := types.SendMessageBatchRequestEntry{MessageBody: aws.String(body), MessageAttributes: sqsAttrs}
	if t.fifo {
		dedupe := d.ID
		if d.Replay != "" {
			dedupe += ":" + d.Replay
		}
		m.MessageGroupId, m.MessageDeduplicationId = aws.String(group(d)), aws.String(sender.Clip(dedupe, 128))
	}
	return m
}

// group is d's message group on a FIFO queue: the key's group on an
// ordered lane, else the source.
func group(d sender.Delivery) string {
	if d.Group != "" {
		return d.Group
	}
	return d.Source
}

// What one SendMessageBatch is given: 10 entries, and 256 KiB of bodies
// and attributes in all. SQS has taken 1 MiB per call since 2025, but a
// queue whose MaximumMessageSize is lower (256 KiB, the former default,
// on many) refuses a call over it; 256 KiB suits every queue, and a
// message larger on its own goes alone (config.MaxBatchMaxBytesAWS).
const (
	MaxBatchEntries = 10
	MaxBatchBytes   = 256 * 1024
)

// size is what SQS counts of a message against a call's bytes: its body,
// and each attribute's name, data type and value.
func size(m types.SendMessageBatchRequestEntry) int {
	n := len(aws.ToString(m.MessageBody))
	for k, v := range m.MessageAttributes {
		n += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue)) + len(v.BinaryValue)
	}
	return n
}

// ErrGroupHeld is the Result of a FIFO queue's event that was not sent
// because an earlier event of its message group in the batch failed:
// sent now, it would reach the queue before the one it follows.
var ErrGroupHeld = errors.New("sqs: not sent: an earlier event of its message group failed")

// SendBatch sends the events with SendMessageBatch, as few calls as the
// API's limits allow (MaxBatchEntries, MaxBatchBytes), each message the
// one Send sends, and gives each event its own outcome: 200 when SQS lists
// it Successful, the entry's code and message when Failed (whether
// SQS blames the sender or itself: every refusal is a failed attempt, as
// Send's are), the call's error for every event of a call that failed.
// A FIFO queue gets the calls one after another, in order, and an event
// whose group already failed in the batch is not sent (ErrGroupHeld).
func (t Sender) SendBatch(ctx context.Context, ds []sender.Delivery) []sender.Result {
	if len(ds) == 0 {
		return nil
	}
	msgs := make([]types.SendMessageBatchRequestEntry, len(ds))
	sizes := make([]int, len(ds))
	for i, d := range ds {
		msgs[i] = t.message(d)
		msgs[i].Id = aws.String(strconv.Itoa(i))
		sizes[i] = size(msgs[i])
	}
	var skip func([]int, []sender.Result) []int
	if t.fifo {
		failed := map[string]bool{}
		skip = func(entries []int, results []sender.Result) []int {
			for i, r := range results {
				if r.Err != nil {
					failed[group(ds[i])] = true
				}
			}
			var send []int
			for _, i := range entries {
				if failed[group(ds[i])] {
					results[i] = sender.Result{Err: ErrGroupHeld, Unsent: true}
					continue
				}
				send = append(send, i)
			}
			return send
		}
	}
	chunks := sender.Chunks(sizes, MaxBatchEntries, MaxBatchBytes)
	return sender.RunBatch(ctx, ds[0].Timeout, len(ds), chunks, t.fifo, skip, func(ctx context.Context, entries []int, results []sender.Result) {
		in := &sqs.SendMessageBatchInput{QueueUrl: aws.String(t.url)}
		for _, i := range entries {
			in.Entries = append(in.Entries, msgs[i])
		}
		var out *sqs.SendMessageBatchOutput
		call := sender.Timed(ctx, "sqs", func(ctx context.Context) (err error) {
			out, err = t.api.SendMessageBatch(ctx, in)
			return err
		})
		for _, i := range entries {
			results[i] = call
		}
		if call.Err != nil {
			return
		}
		answered := map[string]bool{}
		for _, f := range out.Failed {
			if i, ok := entryIndex(f.Id, entries); ok {
				results[i], answered[aws.ToString(f.Id)] = sender.EntryFailed("sqs", aws.ToString(f.Code), aws.ToString(f.Message), call.Latency), true
			}
		}
		for _, s := range out.Successful {
			answered[aws.ToString(s.Id)] = true
		}
		for _, i := range entries {
			if !answered[strconv.Itoa(i)] {
				results[i] = sender.EntryFailed("sqs", "NoEntryResult", "the answer lists the entry neither Successful nor Failed", call.Latency)
			}
		}
	})
}

// entryIndex is the event an answer's entry Id names, when it is one the
// call sent.
func entryIndex(id *string, entries []int) (int, bool) {
	i, err := strconv.Atoi(aws.ToString(id))
	if err != nil || !slices.Contains(entries, i) {
		return 0, false
	}
	return i, true
}

var _ sender.BatchSender = Sender{}
