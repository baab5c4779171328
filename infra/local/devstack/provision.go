package devstack

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	s3types "github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/awsconfig"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/payload"
)

// Clients are the AWS clients the local stack uses, built once.
type Clients struct {
	SNS        *sns.Client
	SQS        *sqs.Client
	DynamoDB   *dynamodb.Client
	Secrets    *secretsmanager.Client
	CloudWatch *cloudwatch.Client
	S3         *s3.Client
	// Credentials sign the requests of destinations with auth.sigv4.
	Credentials aws.CredentialsProvider
	// EventBridge reads the emulator's buses.
	EventBridge *eventbridge.Client
	// Config is the emulator's SDK configuration, on which a lane's AWS
	// target builds its client as in AWS.
	Config aws.Config
}

// NewClients builds every client from one SDK configuration.
func NewClients(cfg aws.Config) Clients {
	return Clients{
		SNS:         sns.NewFromConfig(cfg),
		SQS:         sqs.NewFromConfig(cfg),
		DynamoDB:    dynamodb.NewFromConfig(cfg),
		Secrets:     secretsmanager.NewFromConfig(cfg),
		CloudWatch:  awsconfig.NewCloudWatch(cfg),
		S3:          archive.NewS3Client(cfg),
		Credentials: cfg.Credentials,
		EventBridge: eventbridge.NewFromConfig(cfg),
		Config:      cfg,
	}
}

// Lane is one destination's provisioned resources.
type Lane struct {
	Destination        config.Destination
	QueueURL, QueueARN string
	DLQURL, DLQARN     string
	SubscriptionDLQURL string
	SubscriptionARN    string
	SecretID           string // "" for an AWS target, which is not signed
}

// Topology is what Provision created.
type Topology struct {
	Prefix   string
	TopicARN string
	// OrderedTopicARN is the ordered lanes' FIFO topic; "" without an
	// ordered destination.
	OrderedTopicARN string
	TableName       string
	// PayloadBucket holds bodies larger than one SNS message; "" when no
	// source takes them.
	PayloadBucket string
	Lanes         []Lane
	// Archive is the event archive; its zero value when config.archive.days is 0.
	Archive ArchiveResources
	// Unsubscribed names the queues Provision unsubscribed from the topic:
	// lanes (or an archive) of an earlier configuration under the prefix.
	Unsubscribed []string
}

// ArchiveResources are the local archive's bucket and the queue of the
// non-raw subscription the archiver drains into it (the deployed stack's
// Firehose stream is not emulated).
type ArchiveResources struct {
	Bucket   string
	QueueURL string
	Days     int
}

// Lane finds a lane by destination name.
func (t *Topology) Lane(name string) (Lane, bool) {
	for _, l := range t.Lanes {
		if l.Destination.Name == name {
			return l, true
		}
	}
	return Lane{}, false
}

// Provision creates the config's topology on the emulator: the topic, per
// destination a queue with a redrive policy to its DLQ (which allows redrive
// back from that queue only), a subscription DLQ, the raw-delivery
// subscription with its filter policy, the delivery-record table, and the
// secrets. secrets maps secret names to their values (several while
// rotating); a destination secret missing there is generated. Names start
// with prefix so several stacks can share one emulator. Calling it again
// with the same prefix brings what exists in line with the config and
// keeps what it holds: queued messages, records, archived events, and the
// destination secrets it generated earlier.
func Provision(ctx context.Context, c Clients, cfg *config.Config, secrets map[string][]string, prefix string) (*Topology, error) {
	t := &Topology{Prefix: prefix, TableName: devstate.TableName(prefix)}
	topic, err := c.SNS.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(devstate.TopicName(prefix))})
	if err != nil {
		return nil, fmt.Errorf("create topic: %w", err)
	}
	t.TopicARN = *topic.TopicArn
	if cfg.AnyOrdered() {
		if t.OrderedTopicARN, err = createOrderedTopic(ctx, c.SNS, prefix); err != nil {
			return nil, err
		}
	}
	if err := createTable(ctx, c.DynamoDB, t.TableName, cfg.Dedupe.Indexed()); err != nil {
		return nil, err
	}
	for _, s := range cfg.Sources {
		if values, ok := secrets[s.Verify.SecretName]; ok {
			if err := putSecret(ctx, c.Secrets, s.Verify.SecretName, values); err != nil {
				return nil, err
			}
		}
		// The reconciliation's API credential (a fake's, locally).
		if r := s.Reconcile; r != nil {
			if values, ok := secrets[r.SecretName]; ok {
				if err := putSecret(ctx, c.Secrets, r.SecretName, values); err != nil {
					return nil, err
				}
			}
		}
	}
	if cfg.LargePayloads() {
		t.PayloadBucket = devstate.PayloadBucketName(prefix)
		if err := createPayloadBucket(ctx, c.S3, t.PayloadBucket, cfg.PayloadExpirationDays()); err != nil {
			return nil, err
		}
	}
	for _, d := range cfg.Destinations {
		for _, name := range d.Secrets() {
			if values, ok := secrets[name]; ok {
				if err := putSecret(ctx, c.Secrets, name, values); err != nil {
					return nil, err
				}
			}
		}
		topicARN := t.TopicARN
		if d.Ordered() {
			topicARN = t.OrderedTopicARN
		}
		lane, err := provisionLane(ctx, c, cfg, topicARN, prefix, d)
		if err != nil {
			return nil, fmt.Errorf("destination %s: %w", d.Name, err)
		}
		switch values, ok := secrets[lane.SecretID]; {
		case lane.SecretID == "": // an AWS target: not signed, no secret
		case ok:
			err = putSecret(ctx, c.Secrets, lane.SecretID, values)
		default:
			err = ensureGeneratedSecret(ctx, c.Secrets, lane.SecretID)
		}
		if err != nil {
			return nil, err
		}
		t.Lanes = append(t.Lanes, lane)
	}
	keep := map[string]bool{}
	for _, l := range t.Lanes {
		keep[devstate.LaneQueueName(prefix, l.Destination)] = true
	}
	if cfg.Archive.Enabled() {
		if t.Archive, err = provisionArchive(ctx, c, t.TopicARN, prefix, cfg.Archive.RetentionDays()); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		keep[devstate.ArchiveQueueName(prefix)] = true
	}
	if t.Unsubscribed, err = unsubscribeOthers(ctx, c.SNS, t.TopicARN, keep); err != nil {
		return nil, err
	}
	if t.OrderedTopicARN != "" {
		gone, err := unsubscribeOthers(ctx, c.SNS, t.OrderedTopicARN, keep)
		if err != nil {
			return nil, err
		}
		t.Unsubscribed = append(t.Unsubscribed, gone...)
	}
	return t, nil
}

// unsubscribeOthers removes the topic's queue subscriptions but those of
// the queues named in keep: a make dev with another configuration under the
// same prefix leaves the previous one's lanes (and an archive turned off)
// holding what they have, but receiving nothing more. It returns the
// queues it unsubscribed.
func unsubscribeOthers(ctx context.Context, api *sns.Client, topicARN string, keep map[string]bool) ([]string, error) {
	var gone []string
	in := &sns.ListSubscriptionsByTopicInput{TopicArn: &topicARN}
	for {
		out, err := api.ListSubscriptionsByTopic(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list subscriptions: %w", err)
		}
		for _, sub := range out.Subscriptions {
			endpoint := aws.ToString(sub.Endpoint)
			queue := endpoint[strings.LastIndex(endpoint, ":")+1:]
			if aws.ToString(sub.Protocol) != "sqs" || keep[queue] {
				continue
			}
			if _, err := api.Unsubscribe(ctx, &sns.UnsubscribeInput{SubscriptionArn: sub.SubscriptionArn}); err != nil {
				return nil, fmt.Errorf("unsubscribe %s, not in the configuration: %w", queue, err)
			}
			gone = append(gone, queue)
		}
		if out.NextToken == nil {
			return gone, nil
		}
		in.NextToken = out.NextToken
	}
}

// GeneratedSecretLength is the length of a generated destination secret,
// the deployed stack's (infra/stack.SigningSecretLength): 32 letters and
// digits, as Secrets Manager generates without punctuation, which decode
// as standard base64 to 24 bytes. Subscribers verify with "whsec_" and it.
const GeneratedSecretLength = 32

// NewDestinationSecret returns a fresh destination secret in the form the
// deployed stack generates: GeneratedSecretLength letters and digits.
func NewDestinationSecret() string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	out := make([]byte, 0, GeneratedSecretLength)
	var buf [64]byte
	for len(out) < GeneratedSecretLength {
		_, _ = rand.Read(buf[:]) // crypto/rand.Read never fails on Linux
		for _, c := range buf {
			// Below 248 (4 × 62) every character is equally likely.
			if c < 248 && len(out) < GeneratedSecretLength {
				out = append(out, alphabet[c%62])
			}
		}
	}
	return string(out)
}

func provisionLane(ctx context.Context, c Clients, cfg *config.Config, topicARN, prefix string, d config.Destination) (Lane, error) {
	lane := Lane{Destination: d}
	if d.Signs() {
		lane.SecretID = devstate.DestinationSecretName(prefix, d)
	}
	var err error
	if lane.DLQURL, lane.DLQARN, err = createQueue(ctx, c.SQS, devstate.LaneDLQName(prefix, d), fifoQueue(d, map[string]string{
		"MessageRetentionPeriod": strconv.Itoa(int(config.DLQRetention.Seconds())),
	})); err != nil {
		return lane, err
	}
	redrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": lane.DLQARN, "maxReceiveCount": strconv.Itoa(d.MaxReceiveCount())})
	if lane.QueueURL, lane.QueueARN, err = createQueue(ctx, c.SQS, devstate.LaneQueueName(prefix, d), fifoQueue(d, map[string]string{
		"VisibilityTimeout":      strconv.Itoa(int(d.VisibilityTimeout().Seconds())),
		"MessageRetentionPeriod": strconv.Itoa(int(d.Retention().Seconds())),
		"RedrivePolicy":          string(redrive),
	})); err != nil {
		return lane, err
	}
	allow, _ := json.Marshal(map[string]any{"redrivePermission": "byQueue", "sourceQueueArns": []string{lane.QueueARN}})
	if _, err := c.SQS.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &lane.DLQURL,
		Attributes: map[string]string{"RedriveAllowPolicy": string(allow)}}); err != nil {
		return lane, fmt.Errorf("set redrive allow policy: %w", err)
	}
	var subDLQARN string
	if lane.SubscriptionDLQURL, subDLQARN, err = createQueue(ctx, c.SQS, devstate.LaneSubscriptionDLQName(prefix, d), fifoQueue(d, map[string]string{
		"MessageRetentionPeriod": strconv.Itoa(int(config.DLQRetention.Seconds())),
	})); err != nil {
		return lane, err
	}
	for _, q := range []struct{ url, arn string }{{lane.QueueURL, lane.QueueARN}, {lane.SubscriptionDLQURL, subDLQARN}} {
		if err := allowTopic(ctx, c.SQS, q.url, q.arn, topicARN); err != nil {
			return lane, err
		}
	}
	subRedrive, _ := json.Marshal(map[string]string{"deadLetterTargetArn": subDLQARN})
	attrs := map[string]string{"RawMessageDelivery": "true", "RedrivePolicy": string(subRedrive)}
	if p, scope := EmulatorSubscriptionFilter(cfg, d); p != "" {
		attrs["FilterPolicy"] = p
		attrs["FilterPolicyScope"] = scope
	}
	if d.Ordered() {
		attrs["FilterPolicy"] = cfg.OrderedSubscriptionFilter(d)
		attrs["FilterPolicyScope"] = config.ScopeAttributes
	}
	if lane.SubscriptionARN, err = subscribeQueue(ctx, c.SNS, topicARN, lane.QueueARN, attrs); err != nil {
		return lane, err
	}
	return lane, nil
}

// EmulatorSubscriptionFilter is the filter policy the local stack gives a
// lane's subscription: the stack's (config.Config.SubscriptionFilter),
// except that no MessageBody policy goes to the emulator. moto 5.2.1 does
// not filter bodies as SNS documents ("exists": true passes null and "",
// and a prefix against an array fails the whole Publish with a 500 after
// some subscriptions got the message), so the deliver function, whose
// rules are SNS's documented ones, judges every body filter here. On AWS a
// body goes to SNS only where SNS never drops what the function accepts,
// so both deliver exactly the same events.
func EmulatorSubscriptionFilter(cfg *config.Config, d config.Destination) (policy, scope string) {
	policy, scope = cfg.SubscriptionFilter(d)
	if scope == config.ScopeBody {
		return "", ""
	}
	return policy, scope
}

// createPayloadBucket makes the payload bucket as the stack does: private,
// encrypted by default, objects under payload.Prefix expiring after days.
func createPayloadBucket(ctx context.Context, api *s3.Client, name string, days int) error {
	_, err := api.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: &name})
	var owned *s3types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		return fmt.Errorf("create bucket %s: %w", name, err)
	}
	if _, err := api.PutPublicAccessBlock(ctx, &s3.PutPublicAccessBlockInput{Bucket: &name, PublicAccessBlockConfiguration: &s3types.PublicAccessBlockConfiguration{
		BlockPublicAcls: aws.Bool(true), BlockPublicPolicy: aws.Bool(true), IgnorePublicAcls: aws.Bool(true), RestrictPublicBuckets: aws.Bool(true),
	}}); err != nil {
		return fmt.Errorf("block public access to %s: %w", name, err)
	}
	if _, err := api.PutBucketEncryption(ctx, &s3.PutBucketEncryptionInput{Bucket: &name, ServerSideEncryptionConfiguration: &s3types.ServerSideEncryptionConfiguration{
		Rules: []s3types.ServerSideEncryptionRule{{ApplyServerSideEncryptionByDefault: &s3types.ServerSideEncryptionByDefault{SSEAlgorithm: s3types.ServerSideEncryptionAes256}}},
	}}); err != nil {
		return fmt.Errorf("encrypt %s: %w", name, err)
	}
	if _, err := api.PutBucketLifecycleConfiguration(ctx, &s3.PutBucketLifecycleConfigurationInput{Bucket: &name, LifecycleConfiguration: &s3types.BucketLifecycleConfiguration{
		Rules: []s3types.LifecycleRule{{
			ID: aws.String("expire-payloads"), Status: s3types.ExpirationStatusEnabled,
			Filter:     &s3types.LifecycleRuleFilter{Prefix: aws.String(payload.Prefix)},
			Expiration: &s3types.LifecycleExpiration{Days: aws.Int32(int32(days))},
		}},
	}}); err != nil {
		return fmt.Errorf("lifecycle of %s: %w", name, err)
	}
	return nil
}

// subscribeQueue subscribes a queue to the topic, or, when it already is,
// sets the subscription's attributes to attrs (SNS keeps an existing
// subscription's attributes on a second Subscribe).
func subscribeQueue(ctx context.Context, api *sns.Client, topicARN, queueARN string, attrs map[string]string) (string, error) {
	in := &sns.ListSubscriptionsByTopicInput{TopicArn: &topicARN}
	for {
		out, err := api.ListSubscriptionsByTopic(ctx, in)
		if err != nil {
			return "", fmt.Errorf("list subscriptions: %w", err)
		}
		for _, s := range out.Subscriptions {
			if aws.ToString(s.Endpoint) != queueARN || aws.ToString(s.Protocol) != "sqs" {
				continue
			}
			for _, name := range []string{"RawMessageDelivery", "RedrivePolicy", "FilterPolicyScope", "FilterPolicy"} {
				value, ok := attrs[name]
				if !ok && (name == "FilterPolicy" || name == "FilterPolicyScope") {
					continue // none configured; an earlier one is cleared below
				}
				if _, err := api.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: s.SubscriptionArn,
					AttributeName: aws.String(name), AttributeValue: aws.String(value)}); err != nil {
					return "", fmt.Errorf("update subscription %s: %w", name, err)
				}
			}
			if _, ok := attrs["FilterPolicy"]; !ok {
				if _, err := api.SetSubscriptionAttributes(ctx, &sns.SetSubscriptionAttributesInput{SubscriptionArn: s.SubscriptionArn,
					AttributeName: aws.String("FilterPolicy"), AttributeValue: aws.String("")}); err != nil {
					return "", fmt.Errorf("clear filter policy: %w", err)
				}
			}
			return aws.ToString(s.SubscriptionArn), nil
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	sub, err := api.Subscribe(ctx, &sns.SubscribeInput{TopicArn: &topicARN, Protocol: aws.String("sqs"),
		Endpoint: &queueARN, Attributes: attrs, ReturnSubscriptionArn: true})
	if err != nil {
		return "", fmt.Errorf("subscribe queue: %w", err)
	}
	return aws.ToString(sub.SubscriptionArn), nil
}

// createQueue creates a queue, or, when one of that name exists, sets its
// attributes to attrs; it returns its URL and ARN.
func createQueue(ctx context.Context, api *sqs.Client, name string, attrs map[string]string) (url, arn string, err error) {
	out, err := api.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: &name, Attributes: attrs})
	if queueExists(err) {
		got, gerr := api.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: &name})
		if gerr != nil {
			return "", "", fmt.Errorf("queue %s exists, and its URL: %w", name, gerr)
		}
		if _, err = api.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: got.QueueUrl, Attributes: attrs}); err != nil {
			return "", "", fmt.Errorf("update queue %s: %w", name, err)
		}
		out = &sqs.CreateQueueOutput{QueueUrl: got.QueueUrl}
	}
	if err != nil {
		return "", "", fmt.Errorf("create queue %s: %w", name, err)
	}
	got, err := api.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: out.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", "", fmt.Errorf("queue %s ARN: %w", name, err)
	}
	return *out.QueueUrl, got.Attributes[string(sqstypes.QueueAttributeNameQueueArn)], nil
}

// allowTopic gives the queue the policy the CDK stack gives it: only this
// topic may send, and only over TLS-less local transport here.
func allowTopic(ctx context.Context, api *sqs.Client, url, arn, topicARN string) error {
	policy, _ := json.Marshal(map[string]any{
		"Version": "2012-10-17",
		"Statement": []any{map[string]any{
			"Effect": "Allow", "Principal": map[string]string{"Service": "sns.amazonaws.com"},
			"Action": "sqs:SendMessage", "Resource": arn,
			"Condition": map[string]any{"ArnEquals": map[string]string{"aws:SourceArn": topicARN}},
		}},
	})
	if _, err := api.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &url,
		Attributes: map[string]string{"Policy": string(policy)}}); err != nil {
		return fmt.Errorf("set queue policy: %w", err)
	}
	return nil
}

// createTable creates the record table, with the time index when indexed
// (dedupe.timeIndex), or brings a table an earlier run made in line: the
// index added or removed, as the stack's update does.
func createTable(ctx context.Context, api *dynamodb.Client, name string, indexed bool) error {
	in := ddbitem.CreateTableInput(name)
	if !indexed {
		in = ddbitem.UnindexedTableInput(name)
	}
	_, err := api.CreateTable(ctx, in)
	var inUse *ddbtypes.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return fmt.Errorf("create table %s: %w", name, err)
	}
	if err != nil {
		// A table an earlier run made may predate the time index (ops
		// events queries it), or have it while the config turns it off.
		if err := matchTimeIndex(ctx, api, ddbitem.CreateTableInput(name), indexed); err != nil {
			return err
		}
	}
	if _, err := api.UpdateTimeToLive(ctx, &dynamodb.UpdateTimeToLiveInput{TableName: &name,
		TimeToLiveSpecification: &ddbtypes.TimeToLiveSpecification{AttributeName: aws.String(ddbitem.ExpiresAt), Enabled: aws.Bool(true)}}); err != nil && !errors.As(err, new(*ddbtypes.ResourceInUseException)) {
		// Re-enabling TTL on an existing table is refused by some emulators; the table works without it.
		var ve interface{ ErrorCode() string }
		if !errors.As(err, &ve) || ve.ErrorCode() != "ValidationException" {
			return fmt.Errorf("enable TTL on %s: %w", name, err)
		}
	}
	return nil
}

// matchTimeIndex adds in's time index to the existing table it names
// when indexed and the table lacks it, and deletes it when not indexed
// and the table has it.
func matchTimeIndex(ctx context.Context, api *dynamodb.Client, in *dynamodb.CreateTableInput, indexed bool) error {
	desc, err := api.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: in.TableName})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", *in.TableName, err)
	}
	has := slices.ContainsFunc(desc.Table.GlobalSecondaryIndexes, func(gsi ddbtypes.GlobalSecondaryIndexDescription) bool {
		return aws.ToString(gsi.IndexName) == ddbitem.TimeIndex
	})
	switch {
	case has == indexed:
		return nil
	case has:
		_, err = api.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: in.TableName,
			GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{{Delete: &ddbtypes.DeleteGlobalSecondaryIndexAction{IndexName: aws.String(ddbitem.TimeIndex)}}}})
		if err != nil {
			return fmt.Errorf("remove index %s from table %s (dedupe.timeIndex false): %w", ddbitem.TimeIndex, *in.TableName, err)
		}
		return nil
	}
	index := in.GlobalSecondaryIndexes[0]
	_, err = api.UpdateTable(ctx, &dynamodb.UpdateTableInput{
		TableName:            in.TableName,
		AttributeDefinitions: in.AttributeDefinitions,
		GlobalSecondaryIndexUpdates: []ddbtypes.GlobalSecondaryIndexUpdate{{Create: &ddbtypes.CreateGlobalSecondaryIndexAction{
			IndexName: index.IndexName, KeySchema: index.KeySchema, Projection: index.Projection,
		}}},
	})
	if err != nil {
		return fmt.Errorf("add index %s to table %s: %w", ddbitem.TimeIndex, *in.TableName, err)
	}
	return nil
}

// queueExists reports whether CreateQueue refused because a queue of that
// name exists with other attributes (SQS's QueueNameExists; some endpoints
// answer its query-protocol code, QueueAlreadyExists).
func queueExists(err error) bool {
	var exists *sqstypes.QueueNameExists
	var api smithy.APIError
	return errors.As(err, &exists) || (errors.As(err, &api) && api.ErrorCode() == "QueueAlreadyExists")
}

// ensureGeneratedSecret keeps a destination secret that exists (generated
// by an earlier run: subscribers may have been given it) and creates one
// with a fresh value otherwise.
func ensureGeneratedSecret(ctx context.Context, api *secretsmanager.Client, name string) error {
	value := NewDestinationSecret()
	_, err := api.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value})
	var exists *smtypes.ResourceExistsException
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("create secret %s: %w", name, err)
	}
	return nil
}

// putSecret creates a secret or, when it exists, sets its current value.
// Several values are stored as a JSON array (rotation).
func putSecret(ctx context.Context, api *secretsmanager.Client, name string, values []string) error {
	value := ""
	switch len(values) {
	case 0:
		return fmt.Errorf("secret %s: no value given", name)
	case 1:
		value = values[0]
	default:
		b, _ := json.Marshal(values)
		value = string(b)
	}
	_, err := api.CreateSecret(ctx, &secretsmanager.CreateSecretInput{Name: &name, SecretString: &value})
	var exists *smtypes.ResourceExistsException
	if errors.As(err, &exists) {
		_, err = api.PutSecretValue(ctx, &secretsmanager.PutSecretValueInput{SecretId: &name, SecretString: &value})
	}
	if err != nil {
		return fmt.Errorf("set secret %s: %w", name, err)
	}
	return nil
}

// SetSecret sets a secret's values (for rotation in tests and tools).
func SetSecret(ctx context.Context, c Clients, name string, values ...string) error {
	return putSecret(ctx, c.Secrets, name, values)
}
