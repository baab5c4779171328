package stack

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskinesisfirehose"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awss3"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/payload"
)

// ArchiveBufferSeconds is how long Firehose gathers records before writing
// an object: the archive is this far behind ingest at most (a replay of an
// event accepted in the last minute may not find it yet).
const ArchiveBufferSeconds = 60

// ArchiveStaleSeconds is the age of the oldest event Firehose has not yet
// written to the bucket (DeliveryToS3.DataFreshness) past which the
// archive's DeliveryFreshnessAlarm fires: 15 minutes, fifteen buffering
// intervals, where a healthy stream's oldest record is one interval and a
// write old. Past it S3 is refusing Firehose (the bucket's or the data
// key's policy, a disabled key); Firehose keeps a direct-put record 24
// hours, so nearly all of them are left to fix it before events are
// dropped. A stream buffering longer alarms at three of its intervals.
const ArchiveStaleSeconds = 15 * 60

// ArchiveProps configures the event archive. Nil fields get defaults.
type ArchiveProps struct {
	// Topic is the fan-out topic whose every message is archived (required).
	Topic awssns.ITopic
	// Days is how long an archived event is kept (required, at least 1).
	Days int
	// LogRetention of Firehose's error log group (required).
	LogRetention awslogs.RetentionDays
	// BufferSeconds is Firehose's buffering interval; nil: ArchiveBufferSeconds.
	BufferSeconds *float64
	// AlarmAction receives the archive's alarm; nil: an alarm without actions.
	AlarmAction awscloudwatch.IAlarmAction
	// Key encrypts the bucket's objects (the stack's data key) (required).
	Key awskms.IKey
}

// Archive keeps every accepted event: an SNS subscription (raw message
// delivery off, so each record is the notification envelope with the body,
// every attribute and SNS's timestamp) to a Firehose stream that writes
// newline-delimited, gzip-compressed objects into a TLS-only, private
// bucket encrypted with the stack's data key under keys partitioned by hour
// (shared/archive's layout), expired after Days. The bucket also holds, under
// payload.Prefix, ingest's copy of each body too large for one SNS message
// (whose archived message is only its reference), for as long.
type Archive struct {
	constructs.Construct
	// Days is how long an archived event is kept.
	Days   int
	Bucket awss3.Bucket
	Key    awskms.IKey
	Stream awskinesisfirehose.CfnDeliveryStream
	// StreamRole is what Firehose assumes to write the bucket.
	StreamRole awsiam.Role
	// Subscription delivers the topic's messages to the stream, assuming
	// SubscriptionRole; what it cannot deliver goes to DeadLetterQueue.
	Subscription     awssns.Subscription
	SubscriptionRole awsiam.Role
	DeadLetterQueue  awssqs.Queue
	LogGroup         awslogs.LogGroup
	// DeadLettersAlarm fires when SNS could not archive a message.
	DeadLettersAlarm awscloudwatch.Alarm
	// DeliveryFreshnessAlarm fires when Firehose has held an event for
	// ArchiveStaleSeconds without writing it to the bucket.
	DeliveryFreshnessAlarm awscloudwatch.Alarm
}

// NewArchive builds the archive.
func NewArchive(scope constructs.Construct, id string, props *ArchiveProps) (*Archive, error) {
	if props == nil || props.Topic == nil || props.LogRetention == "" || props.Key == nil {
		return nil, errors.New("archive: Topic, LogRetention and Key are required")
	}
	if props.Days < 1 {
		return nil, fmt.Errorf("archive: Days is %d; want at least 1 (config.archive.days 0 builds no archive)", props.Days)
	}
	buffer := float64(ArchiveBufferSeconds)
	if props.BufferSeconds != nil {
		buffer = *props.BufferSeconds
	}
	a := &Archive{Construct: constructs.NewConstruct(scope, jsii.String(id)), Days: props.Days, Key: props.Key}

	a.Bucket = awss3.NewBucket(a.Construct, jsii.String("Bucket"), &awss3.BucketProps{
		Encryption:        awss3.BucketEncryption_KMS,
		EncryptionKey:     props.Key,
		BucketKeyEnabled:  jsii.Bool(false),
		EnforceSSL:        jsii.Bool(true),
		BlockPublicAccess: awss3.BlockPublicAccess_BLOCK_ALL(),
		ObjectOwnership:   awss3.ObjectOwnership_BUCKET_OWNER_ENFORCED,
		LifecycleRules: &[]*awss3.LifecycleRule{{
			Id:                                  jsii.String("expire-archived-events"),
			Expiration:                          awscdk.Duration_Days(jsii.Number(float64(props.Days))),
			AbortIncompleteMultipartUploadAfter: awscdk.Duration_Days(jsii.Number(1)),
		}},
		// The archive is what replays events after the fact; it outlives
		// the stack like the delivery records, and its lifecycle empties it.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	suppress(a.Bucket, suppression{id: "AwsSolutions-S1", reason: reasonBodyBucketLogs})

	a.LogGroup = awslogs.NewLogGroup(a.Construct, jsii.String("Logs"), &awslogs.LogGroupProps{
		Retention:     props.LogRetention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	// Firehose's own role: exactly the S3 calls its S3 destination makes,
	// on this bucket; and its error log.
	a.StreamRole = awsiam.NewRole(a.Construct, jsii.String("StreamRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("firehose.amazonaws.com"), nil),
		Description: jsii.String("Hookfan archive: Firehose writes archived events to the archive bucket"),
	})
	a.StreamRole.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"),
		Resources: jsii.Strings(*a.Bucket.BucketArn()),
	}))
	a.StreamRole.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("s3:AbortMultipartUpload", "s3:GetObject", "s3:PutObject"),
		Resources: jsii.Strings(*a.Bucket.ArnForObjects(jsii.String("*"))),
	}))
	grantKeyViaS3(a.StreamRole, props.Key.KeyArn(), "kms:Decrypt", "kms:GenerateDataKey")
	a.LogGroup.GrantWrite(a.StreamRole)
	suppress(a.StreamRole, suppression{
		id:             "AwsSolutions-IAM5",
		reason:         "Firehose writes objects under keys it generates (the hour partition and a random name), so its object permissions are on the archive bucket's objects, <bucket ARN>/*; nothing else is granted.",
		appliesToRegex: []string{"/^Resource::<.*Bucket.*\\.Arn>\\/\\*$/"},
	})

	// The stream is declared with the L1 resource: the L2 S3 destination
	// grants its role read-write on the bucket (deletes included), more than
	// Firehose needs.
	logStream := awslogs.NewLogStream(a.Construct, jsii.String("S3Delivery"), &awslogs.LogStreamProps{
		LogGroup: a.LogGroup, RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	stream := awskinesisfirehose.NewCfnDeliveryStream(a.Construct, jsii.String("Stream"), &awskinesisfirehose.CfnDeliveryStreamProps{
		DeliveryStreamType: jsii.String("DirectPut"),
		DeliveryStreamEncryptionConfigurationInput: &awskinesisfirehose.CfnDeliveryStream_DeliveryStreamEncryptionConfigurationInputProperty{
			KeyType: jsii.String("AWS_OWNED_CMK"),
		},
		ExtendedS3DestinationConfiguration: &awskinesisfirehose.CfnDeliveryStream_ExtendedS3DestinationConfigurationProperty{
			BucketArn:         a.Bucket.BucketArn(),
			RoleArn:           a.StreamRole.RoleArn(),
			Prefix:            jsii.String(archive.FirehosePrefix),
			ErrorOutputPrefix: jsii.String(archive.FirehoseErrorPrefix),
			CompressionFormat: jsii.String("GZIP"),
			EncryptionConfiguration: &awskinesisfirehose.CfnDeliveryStream_EncryptionConfigurationProperty{
				KmsEncryptionConfig: &awskinesisfirehose.CfnDeliveryStream_KMSEncryptionConfigProperty{AwskmsKeyArn: props.Key.KeyArn()},
			},
			BufferingHints: &awskinesisfirehose.CfnDeliveryStream_BufferingHintsProperty{
				IntervalInSeconds: jsii.Number(buffer), SizeInMBs: jsii.Number(5),
			},
			ProcessingConfiguration: &awskinesisfirehose.CfnDeliveryStream_ProcessingConfigurationProperty{
				Enabled: jsii.Bool(true),
				Processors: []any{&awskinesisfirehose.CfnDeliveryStream_ProcessorProperty{
					Type: jsii.String("AppendDelimiterToRecord"),
				}},
			},
			CloudWatchLoggingOptions: &awskinesisfirehose.CfnDeliveryStream_CloudWatchLoggingOptionsProperty{
				Enabled: jsii.Bool(true), LogGroupName: a.LogGroup.LogGroupName(), LogStreamName: logStream.LogStreamName(),
			},
		},
	})
	// Firehose checks its role's permissions when the stream is created
	// (the role itself is referenced already).
	stream.Node().AddDependency(a.StreamRole.Node().FindChild(jsii.String("DefaultPolicy")))
	a.Stream = stream

	a.DeadLetterQueue = awssqs.NewQueue(a.Construct, jsii.String("SubscriptionDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: seconds(config.DLQRetention),
		RemovalPolicy:   awscdk.RemovalPolicy_RETAIN,
	})
	suppress(a.DeadLetterQueue,
		suppression{id: "AwsSolutions-SQS3", reason: "This queue is the archive subscription's dead-letter queue (RedrivePolicy.deadLetterTargetArn of the SNS subscription to Firehose); a DLQ has no DLQ of its own."},
		suppression{id: "Serverless-SQSRedrivePolicy", reason: "This queue is the archive subscription's dead-letter queue; a DLQ has no DLQ of its own."},
	)
	// The role SNS assumes to put records into the stream: the calls SNS
	// makes, on this stream only.
	a.SubscriptionRole = awsiam.NewRole(a.Construct, jsii.String("SubscriptionRole"), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("sns.amazonaws.com"), nil),
		Description: jsii.String("Hookfan archive: SNS puts every published event into the archive stream"),
	})
	a.SubscriptionRole.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("firehose:DescribeDeliveryStream", "firehose:ListTagsForDeliveryStream", "firehose:PutRecord", "firehose:PutRecordBatch"),
		Resources: jsii.Strings(*stream.AttrArn()),
	}))
	a.Subscription = awssns.NewSubscription(a.Construct, jsii.String("Subscription"), &awssns.SubscriptionProps{
		Topic:               props.Topic,
		Protocol:            awssns.SubscriptionProtocol_FIREHOSE,
		Endpoint:            stream.AttrArn(),
		SubscriptionRoleArn: a.SubscriptionRole.RoleArn(),
		RawMessageDelivery:  jsii.Bool(false), // the envelope carries the attributes and the time
		DeadLetterQueue:     a.DeadLetterQueue,
	})
	// SNS checks the role's permissions when the subscription is created.
	a.Subscription.Node().AddDependency(a.SubscriptionRole.Node().FindChild(jsii.String("DefaultPolicy")))

	a.DeadLettersAlarm = newAlarm(a.Construct, "DeadLettersAlarm",
		a.DeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{
			Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Maximum"),
		}), 0,
		"Hookfan archive: SNS could not put events into the archive stream; they wait in the archive subscription's DLQ (deliveries are not affected).",
		props.AlarmAction)
	// Firehose's own writes: an idle stream publishes no freshness, which
	// newAlarm treats as fine.
	stale := max(ArchiveStaleSeconds, 3*buffer)
	a.DeliveryFreshnessAlarm = newAlarm(a.Construct, "DeliveryFreshnessAlarm",
		awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("AWS/Firehose"), MetricName: jsii.String("DeliveryToS3.DataFreshness"),
			DimensionsMap: &map[string]*string{"DeliveryStreamName": stream.Ref()},
			Period:        awscdk.Duration_Minutes(jsii.Number(5)), Statistic: jsii.String("Maximum"),
		}), stale,
		fmt.Sprintf("Hookfan archive: Firehose has not written events to the archive bucket for over %g minutes (the bucket's or the data key's policy, a disabled key); it drops them 24 h after they arrived, and replays miss them (deliveries are not affected). See the runbook DeliveryFreshnessAlarm in docs/operations.md.", stale/60),
		props.AlarmAction)
	return a, nil
}

// GrantPayloadCopies lets role (ingest) write its copy of each large body:
// s3:PutObject under payload.Prefix of the archive bucket, beside the
// events Firehose writes, and kms:GenerateDataKey on the key through S3.
func (a *Archive) GrantPayloadCopies(role awsiam.IRole) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("s3:PutObject"), Resources: &[]*string{a.Bucket.ArnForObjects(jsii.String(payload.Prefix + "*"))},
	}))
	grantKeyViaS3(role, a.Key.KeyArn(), "kms:GenerateDataKey")
	suppressObjects(role, "PutObject")
}
