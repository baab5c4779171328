package operator

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// LocalQueueAPI is what the local resolver asks SQS.
type LocalQueueAPI interface {
	GetQueueUrl(ctx context.Context, in *sqs.GetQueueUrlInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueUrlOutput, error)
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
}

// Local resolves the local stack's resources (make dev, or a test's
// devstack): they are named from its prefix by devstate, as the local stack
// provisions them, and the config supplies the destinations and the archive setting.
type Local struct {
	SQS      LocalQueueAPI
	Config   *config.Config
	Prefix   string
	Endpoint string // for messages
}

// Resolve finds each destination's queues on the emulator.
func (r Local) Resolve(ctx context.Context) (Resources, error) {
	res := Resources{Where: fmt.Sprintf("the local stack %q on %s", r.Prefix, r.Endpoint), Table: devstate.TableName(r.Prefix),
		Unindexed: !r.Config.Dedupe.Indexed()}
	if r.Config.Archive.Enabled() {
		res.ArchiveBucket = devstate.ArchiveBucketName(r.Prefix)
		res.ArchiveDays = r.Config.Archive.RetentionDays()
	}
	if r.Config.LargePayloads() {
		res.PayloadBucket, res.PayloadDays = devstate.PayloadBucketName(r.Prefix), r.Config.PayloadExpirationDays()
	}
	if r.Config.Egress.StaticAddresses {
		res.EgressNote = "the local stack emulates no VPC: every lane delivers from this machine's addresses"
	}
	for _, src := range r.Config.Sources {
		res.Sources = append(res.Sources, src.Name)
		if src.Reconcile != nil {
			res.Reconciling = append(res.Reconciling, src.Name)
		}
	}
	for _, d := range r.Config.Destinations {
		l := Lane{Destination: d.Name, Filter: d.Filter, Retention: d.Retention(), Egress: d.Egress, Target: target(d.URLHost(), d.Target, d.URLSecretName)}
		if d.Ordered() {
			l.OrderingKey = d.Ordering.Key
		}
		if policy, pauses := pausing.RuleFor(d); pauses {
			l.Pause = &policy
		}
		if pace, paced := d.Pace(); paced {
			l.Pace = &pace
		}
		var err error
		if l.QueueURL, l.QueueARN, err = r.queue(ctx, devstate.LaneQueueName(r.Prefix, d)); err != nil {
			return res, err
		}
		if l.DLQURL, l.DLQARN, err = r.queue(ctx, devstate.LaneDLQName(r.Prefix, d)); err != nil {
			return res, err
		}
		res.Lanes = append(res.Lanes, l)
	}
	return res, nil
}

func (r Local) queue(ctx context.Context, name string) (url, arn string, err error) {
	out, err := r.SQS.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &name})
	var missing *sqstypes.QueueDoesNotExist
	if errors.As(err, &missing) {
		return "", "", fmt.Errorf("no queue %s on the emulator at %s: has the local stack (make dev) run there with this config and --prefix %s?", name, r.Endpoint, r.Prefix)
	}
	if err != nil {
		return "", "", fmt.Errorf("find queue %s: %w", name, err)
	}
	attrs, err := r.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("queue %s ARN: %w", name, err)
	}
	return *out.QueueUrl, attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// target says where a lane delivers (Lane.Target).
func target(urlHost, arn, urlSecret string) string {
	switch {
	case arn != "":
		return arn
	case urlHost != "":
		return urlHost
	case urlSecret != "":
		return "the URL in secret " + urlSecret
	}
	return ""
}
