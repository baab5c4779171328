package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
)

// archiveVisibility hides a received archive message while the archiver
// buffers and writes it; one that is not written in time comes back and is
// archived again (readers keep the first copy).
const archiveVisibility = 60 * time.Second

// provisionArchive creates the archive bucket (with the configured
// expiration, as the stack's lifecycle rule) and the queue of a non-raw
// subscription with no filter, whose messages are the SNS envelopes
// Firehose would receive.
func provisionArchive(ctx context.Context, c Clients, topicARN, prefix string, days int) (ArchiveResources, error) {
	a := ArchiveResources{Bucket: devstate.ArchiveBucketName(prefix), Days: days}
	in := &s3.CreateBucketInput{Bucket: &a.Bucket}
	if region := c.S3.Options().Region; region != "" && region != "us-east-1" {
		in.CreateBucketConfiguration = &s3types.CreateBucketConfiguration{LocationConstraint: s3types.BucketLocationConstraint(region)}
	}
	_, err := c.S3.CreateBucket(ctx, in)
	var owned *s3types.BucketAlreadyOwnedByYou
	var exists *s3types.BucketAlreadyExists
	if err != nil && !errors.As(err, &owned) && !errors.As(err, &exists) {
		return a, fmt.Errorf("create bucket %s: %w", a.Bucket, err)
	}
	if _, err := c.S3.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{
		Bucket: &a.Bucket,
		LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{Rules: []s3types.LifecycleRule{{
			ID:         aws.String("expire-archived-events"),
			Status:     s3types.ExpirationStatusEnabled,
			Filter:     &s3types.LifecycleRuleFilter{Prefix: aws.String("")},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(int32(days))},
		}}},
	}); err != nil {
		return a, fmt.Errorf("bucket %s lifecycle: %w", a.Bucket, err)
	}
	var queueARN string
	if a.QueueURL, queueARN, err = createQueue(ctx, c.SQS, devstate.ArchiveQueueName(prefix), map[string]string{
		"VisibilityTimeout":      strconv.Itoa(int(archiveVisibility.Seconds())),
		"MessageRetentionPeriod": strconv.Itoa(int(config.MaxRetention.Seconds())),
	}); err != nil {
		return a, err
	}
	if err := allowTopic(ctx, c.SQS, a.QueueURL, queueARN, topicARN); err != nil {
		return a, err
	}
	if _, err := subscribeQueue(ctx, c.SNS, topicARN, queueARN, map[string]string{"RawMessageDelivery": "false"}); err != nil {
		return a, err
	}
	return a, nil
}

// ArchiveQueueAPI is the part of the SQS client the archiver uses.
type ArchiveQueueAPI interface {
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	DeleteMessageBatch(ctx context.Context, in *sqs.DeleteMessageBatchInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageBatchOutput, error)
}

// Archiver does locally what the deployed archive's Firehose stream does:
// it buffers the SNS envelopes of the archive subscription and writes them
// as archive objects, then deletes them from the queue, and only then: a
// write that fails leaves them to come back and be written later.
type Archiver struct {
	SQS      ArchiveQueueAPI
	QueueURL string
	Writer   *archive.Writer
	// Buffer is how long records gather before an object is written
	// (Firehose's buffering interval; default 1s locally).
	Buffer time.Duration
	// MaxRecords writes an object early when this many are buffered (default 500).
	MaxRecords int
	// WaitTime is the long poll (default 1s).
	WaitTime time.Duration
	Log      *slog.Logger
}

type buffered struct {
	record  []byte
	receipt *string
	arrived time.Time
}

// Run archives until ctx is done, then writes what it holds and returns.
func (a *Archiver) Run(ctx context.Context) {
	buffer, maxRecords, wait := a.Buffer, a.MaxRecords, a.WaitTime
	if buffer <= 0 {
		buffer = time.Second
	}
	if maxRecords <= 0 {
		maxRecords = 500
	}
	if wait <= 0 || wait > 20*time.Second {
		wait = time.Second
	}
	var pending []buffered
	var since time.Time
	flush := func() {
		if len(pending) > 0 {
			a.write(context.WithoutCancel(ctx), pending)
			pending = nil
		}
	}
	for ctx.Err() == nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), wait+10*time.Second)
		out, err := a.SQS.ReceiveMessage(rctx, &sqs.ReceiveMessageInput{
			QueueUrl: &a.QueueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: int32(wait / time.Second),
			MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameSentTimestamp},
		})
		cancel()
		if err != nil {
			a.Log.Error("archive receive failed", "error", err.Error())
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			out = &sqs.ReceiveMessageOutput{}
		}
		for _, m := range out.Messages {
			b, ok := a.envelope(m)
			if !ok {
				continue
			}
			if len(pending) == 0 {
				since = time.Now()
			}
			pending = append(pending, b)
		}
		if len(pending) >= maxRecords || (len(pending) > 0 && time.Since(since) >= buffer) {
			flush()
		}
	}
	flush()
}

// envelope reads an archive message: the SNS envelope, re-encoded with the
// fields Firehose records carry. A message that is not one (SNS never sends
// such) is logged with its body and dropped.
func (a *Archiver) envelope(m sqstypes.Message) (buffered, bool) {
	b := buffered{receipt: m.ReceiptHandle, arrived: time.Now()}
	if ms, err := strconv.ParseInt(m.Attributes[string(sqstypes.MessageSystemAttributeNameSentTimestamp)], 10, 64); err == nil {
		b.arrived = time.UnixMilli(ms)
	}
	var env archive.Envelope
	err := json.Unmarshal([]byte(aws.ToString(m.Body)), &env)
	if err == nil {
		_, err = env.Event()
	}
	if err != nil {
		a.Log.Error("archive: not an event envelope; dropped", "message_id", aws.ToString(m.MessageId), "body", aws.ToString(m.Body), "error", err.Error())
		a.delete(context.Background(), []buffered{b})
		return b, false
	}
	b.record, _ = json.Marshal(env)
	return b, true
}

// write stores the buffered records as one object in the partition of the
// oldest, then deletes them from the queue.
func (a *Archiver) write(ctx context.Context, pending []buffered) {
	records := make([][]byte, len(pending))
	oldest := pending[0].arrived
	for i, b := range pending {
		records[i] = b.record
		if b.arrived.Before(oldest) {
			oldest = b.arrived
		}
	}
	key, err := a.Writer.Write(ctx, records, oldest)
	if err != nil {
		a.Log.Error("archive write failed; the records come back and are written later", "records", len(records), "error", err.Error())
		return
	}
	a.Log.Debug("archived", "key", key, "records", len(records))
	a.delete(ctx, pending)
}

func (a *Archiver) delete(ctx context.Context, done []buffered) {
	for start := 0; start < len(done); start += 10 {
		var entries []sqstypes.DeleteMessageBatchRequestEntry
		for i, b := range done[start:min(start+10, len(done))] {
			entries = append(entries, sqstypes.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: b.receipt})
		}
		out, err := a.SQS.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &a.QueueURL, Entries: entries})
		if err != nil {
			a.Log.Error("archive delete failed; the records will be archived again (readers keep the first copy)", "error", err.Error())
			continue
		}
		for _, f := range out.Failed {
			a.Log.Error("archive delete of one record failed; it will be archived again", "code", aws.ToString(f.Code))
		}
	}
}
