package stack

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsscheduler"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsschedulertargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/reconcilejob"
)

// ReconcileMemoryMB is the reconcile function's memory. A run mostly waits
// on the provider's pages and DynamoDB, but holds one answer at a time,
// which reconcile.MaxBodyBytes lets reach 16 MB, while it decodes it:
// 256 MB keeps a page that large a recorded stop or a skip, not an
// out-of-memory crash (a page of 100 Stripe events is a few hundred KB).
const ReconcileMemoryMB = 256

// MaxReconcileTimeout is the longest a run may take: Lambda's limit.
const MaxReconcileTimeout = 15 * time.Minute

// ReconcileTimeout is a reconcile function's timeout for a schedule of
// every: the schedule's period, so that one run ends before the next
// starts, and at most Lambda's 15 minutes. A run cut short saves no
// watermark past what it checked, so the next one covers the rest.
func ReconcileTimeout(every time.Duration) time.Duration { return min(every, MaxReconcileTimeout) }

// ReconcilerProps configures one source's reconciliation. Nil fields get
// defaults.
type ReconcilerProps struct {
	// Config is the whole configuration (required); Source is the source
	// reconciled, which has a reconcile block (required).
	Config *config.Config
	Source config.Source
	// Code is the reconcile function's code (required).
	Code awslambda.Code
	// Topic is the fan-out topic a Stripe event brought in is published
	// to, OrderedTopic the FIFO topic of the ordered lanes (nil without
	// one); required for a Stripe source.
	Topic, OrderedTopic awssns.ITopic
	// Table is the delivery-record table: the records a run reads, and
	// the source's watermark (required).
	Table awsdynamodb.ITable
	// Payloads is where a body over one SNS message goes; nil: none.
	Payloads *PayloadBucket
	// Archive, with Payloads, receives each large body's copy as ingest
	// writes it; nil: none.
	Archive *Archive
	// AlarmAction receives the alarms; nil: alarms without actions.
	AlarmAction awscloudwatch.IAlarmAction
	// LogRetention of the function's logs (required).
	LogRetention awslogs.RetentionDays
}

// ReconcilerAlarms are a reconciled source's alarms.
type ReconcilerAlarms struct {
	// Missing fires when a run found events the provider sent and
	// Hookfan has no trace of (brought in, redelivered, or past the
	// lookback).
	Missing awscloudwatch.Alarm
	// Skipped fires when a run skipped events it could not handle (a
	// listed event that does not parse, an id of the wrong shape, a body
	// too large, a redelivery refused), each with its reason logged.
	Skipped awscloudwatch.Alarm
	// Stopped fires when a run stopped before its end: the provider
	// refused (401, 403, 429), timed out, paged forever or answered what
	// does not parse, or the records or watermark could not be read.
	Stopped awscloudwatch.Alarm
	// Errors fires when an invocation failed: a crash, Lambda's timeout,
	// a function that could not start, or an input refused.
	Errors awscloudwatch.Alarm
}

// Reconciler is one source's scheduled reconciliation: its function (own
// role and log group), the schedule that runs it every `every`, and its
// alarms.
type Reconciler struct {
	constructs.Construct
	Source   config.Source
	Function awslambda.Function
	Role     awsiam.Role
	LogGroup awslogs.LogGroup
	// Secret is the provider's API credential (reconcile.secretName),
	// imported by name: the operator creates it (docs/configuration.md).
	Secret awssecretsmanager.ISecret
	// Schedule runs the function every `every` with the source's input,
	// under ScheduleRole (lambda:InvokeFunction on the function alone).
	Schedule     awsscheduler.Schedule
	ScheduleRole awsiam.Role
	Alarms       ReconcilerAlarms
	// Env is the function's environment contract; its Render is the
	// function's Environment.
	Env reconcilejob.Env
	// Index is the source's parameter in the stack's index
	// (stackindex.ReconcileParameter): the function ops reconcile invokes.
	Index awsssm.StringParameter
}

// NewReconciler builds one source's reconciliation.
func NewReconciler(scope constructs.Construct, id string, props *ReconcilerProps) (*Reconciler, error) {
	if props == nil || props.Config == nil || props.Code == nil || props.Table == nil || props.Source.Reconcile == nil {
		return nil, errors.New("reconciler: Config, Code, Table and a Source with a reconcile block are required")
	}
	src, cfg := props.Source, props.Config
	publishes := reconcilejob.Publishes(src)
	if publishes && props.Topic == nil {
		return nil, fmt.Errorf("reconciler of source %s: Topic is required (a Stripe event brought in is published to it)", src.Name)
	}
	every := src.Reconcile.Interval()
	r := &Reconciler{Construct: constructs.NewConstruct(scope, jsii.String(id)), Source: src}

	res := reconcilejob.Resources{Table: *props.Table.TableName()}
	if publishes {
		res.TopicARN = *props.Topic.TopicArn()
		if props.OrderedTopic != nil {
			res.OrderedTopicARN = *props.OrderedTopic.TopicArn()
		}
		if props.Payloads != nil {
			res.PayloadBucket = *props.Payloads.Bucket.BucketName()
			if props.Archive != nil {
				res.ArchiveBucket = *props.Archive.Bucket.BucketName()
			}
		}
	}
	r.Env = reconcilejob.FunctionEnv(cfg, src, res)
	parts, err := newFunction(r.Construct, functionSpec{
		description:    "Hookfan reconcile: source " + src.Name + " against its provider's API",
		code:           props.Code,
		memoryMB:       ReconcileMemoryMB,
		tracing:        awslambda.Tracing_DISABLED,
		systemLogLevel: cfg.Functions.SystemLog(),
		timeout:        seconds(ReconcileTimeout(every)),
		retention:      props.LogRetention,
		env:            r.Env.Render(),
	})
	if err != nil {
		return nil, err
	}
	r.Function, r.Role, r.LogGroup = parts.Function, parts.Role, parts.LogGroup

	// Least privilege: the provider's credential; the records of the
	// destinations the source's events may reach, read only, and the
	// source's own watermark item; for Stripe, publishing as ingest does.
	r.Secret = importSecret(r.Construct, "ApiSecret", src.Reconcile.SecretName)
	r.Secret.GrantRead(r.Role, nil)
	r.grantRecords(cfg, props.Table)
	if publishes {
		r.grantPublish(props)
	}

	// The role the schedule invokes the function with: its own, trusted
	// by EventBridge Scheduler for this account's schedules only.
	r.ScheduleRole = awsiam.NewRole(r.Construct, jsii.String("ScheduleRole"), &awsiam.RoleProps{
		AssumedBy: awsiam.NewServicePrincipal(jsii.String("scheduler.amazonaws.com"), &awsiam.ServicePrincipalOpts{
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": awscdk.Stack_Of(r.Construct).Account()}},
		}),
		Description: jsii.String("Hookfan reconcile: source " + src.Name + "'s schedule invokes its function"),
	})
	r.Schedule = awsscheduler.NewSchedule(r.Construct, jsii.String("Schedule"), &awsscheduler.ScheduleProps{
		Description: jsii.String(fmt.Sprintf("Hookfan source %s: reconciles with the provider every %s", src.Name, shortDuration(every))),
		Schedule:    awsscheduler.ScheduleExpression_Rate(seconds(every)),
		Target: awsschedulertargets.NewLambdaInvoke(r.Function, &awsschedulertargets.ScheduleTargetBaseProps{
			Input: awsscheduler.ScheduleTargetInput_FromObject(map[string]any{"source": src.Name}),
			// A run that fails is not retried: the next one, every later,
			// lists the same window again (the watermark has not moved).
			RetryAttempts: jsii.Number(0),
			MaxEventAge:   seconds(max(time.Minute, every)),
			Role:          r.ScheduleRole,
		}),
	})
	suppress(r.ScheduleRole, suppression{id: "AwsSolutions-IAM5", appliesToRegex: []string{`/^Resource::<Reconcile[A-Za-z0-9]+Function[0-9A-F]{8}\.Arn>:\*$/`},
		reason: "lambda:InvokeFunction on the source's reconcile function only: CDK's grant names the function and its qualified ARNs (<arn>:*, its versions and aliases), which the schedule, invoking the unqualified function, never uses."})
	// Scheduler invokes the function asynchronously; Lambda's own retries
	// of a failed run are off for the same reason.
	r.Function.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{RetryAttempts: jsii.Number(0), MaxEventAge: seconds(max(time.Minute, every))})
	suppress(r.Function,
		suppression{id: "Serverless-LambdaDLQ", reason: reasonReconcileRun},
		suppression{id: "Serverless-LambdaAsyncFailureDestination", reason: reasonReconcileRun},
	)
	r.addAlarms(every, props.AlarmAction)
	stackName := *awscdk.Stack_Of(r.Construct).StackName()
	r.Index = awsssm.NewStringParameter(r.Construct, jsii.String("Index"), &awsssm.StringParameterProps{
		ParameterName: jsii.String(stackindex.ReconcileParameter(stackName, src.Name)),
		Description:   jsii.String("Hookfan source " + src.Name + ": its reconcile function, which ops reconcile invokes, and its log group (JSON)"),
		StringValue: awscdk.Stack_Of(r.Construct).ToJsonString(map[string]any{
			"source": src.Name, "functionName": r.Function.FunctionName(), "logGroup": r.LogGroup.LogGroupName(), "everySeconds": int(every.Seconds()),
		}, nil),
		Tier: awsssm.ParameterTier_STANDARD,
	})
	return r, nil
}

// GrantInvoke lets role run the function by hand (ops reconcile): the
// function's unqualified ARN only.
func (r *Reconciler) GrantInvoke(role awsiam.IRole) {
	role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions: jsii.Strings("lambda:InvokeFunction"), Resources: &[]*string{r.Function.FunctionArn()},
	}))
}

// reasonReconcileRun is why a failed run keeps nothing.
const reasonReconcileRun = "The schedule's input is a constant ({\"source\": name}); a run that fails leaves the source's watermark where it was, so the next run, every later, lists the same window again. A DLQ or failure destination would only collect copies of that constant; a failed run shows in the reconciler's ErrorsAlarm."

// grantRecords lets the function read the delivery records of the
// destinations the source's events may reach (every key starting with
// "<destination>#") and read and write the source's watermark.
func (r *Reconciler) grantRecords(cfg *config.Config, table awsdynamodb.ITable) {
	var keys []string
	for _, d := range reconcilejob.Destinations(cfg, r.Source.Name) {
		keys = append(keys, dedupe.Key(d.Name, "*"))
	}
	if len(keys) > 0 {
		r.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:    jsii.Strings("dynamodb:GetItem", "dynamodb:BatchGetItem"),
			Resources:  &[]*string{table.TableArn()},
			Conditions: &map[string]any{"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": keys}},
		}))
	}
	r.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:    jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"),
		Resources:  &[]*string{table.TableArn()},
		Conditions: &map[string]any{"ForAllValues:StringEquals": map[string]any{"dynamodb:LeadingKeys": []string{reconcilejob.WatermarkKey(r.Source.Name)}}},
	}))
}

// grantPublish lets a Stripe source's function publish what it brings in
// as ingest would: to the fan-out topic (and the ordered lanes' FIFO
// topic), a large body to the payload bucket under the source's prefix,
// and its archive copy.
func (r *Reconciler) grantPublish(props *ReconcilerProps) {
	props.Topic.GrantPublish(r.Role)
	if props.OrderedTopic != nil {
		props.OrderedTopic.GrantPublish(r.Role)
	}
	suppress(r.Role, suppression{id: "AwsSolutions-IAM5", reason: "Publishing to a KMS-encrypted topic needs kms:GenerateDataKey* (GenerateDataKey and its WithoutPlaintext variant, as AWS documents for SNS publishers) on the topic's key only; the resource is that one key.", appliesTo: []string{"Action::kms:GenerateDataKey*"}})
	if cfg := props.Config; cfg.TopicKeyKind() == config.TopicKeyAWSManaged {
		suppress(r.Role, suppression{id: "AwsSolutions-IAM5", appliesTo: []string{"Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*"},
			reason: "topicKey aws-managed: the grant CDK makes for the alias alias/aws/sns is limited by condition to the key carrying that alias, SNS's AWS managed key, which only SNS can use on the account's behalf."})
	}
	if props.Payloads == nil {
		return
	}
	buckets := []bucketRef{{props.Payloads.Bucket.BucketArn(), props.Payloads.Key.KeyArn()}}
	if props.Archive != nil {
		buckets = append(buckets, bucketRef{props.Archive.Bucket.BucketArn(), props.Archive.Key.KeyArn()})
	}
	for _, b := range buckets {
		r.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("s3:PutObject"),
			Resources: &[]*string{awscdk.Fn_Join(jsii.String(""), &[]*string{b.arn, jsii.String("/" + payload.SourcePrefix(r.Source.Name) + "*")})},
		}))
		grantKeyViaS3(r.Role, b.keyArn, "kms:GenerateDataKey")
	}
	suppressObjects(r.Role, "PutObject")
}

// bucketRef is a bucket and its key, by ARN.
type bucketRef struct{ arn, keyArn *string }

func (r *Reconciler) addAlarms(every time.Duration, action awscloudwatch.IAlarmAction) {
	name := r.Source.Name
	// A period is one run apart (every is whole minutes, as CloudWatch's
	// periods are); a run's points fall in the period it ended in.
	period := seconds(every)
	sum := jsii.String("Sum")
	metric := func(m string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(m),
			DimensionsMap: &map[string]*string{metrics.DimSource: jsii.String(name)}, Statistic: sum, Period: period,
		})
	}
	alarm := func(id string, m awscloudwatch.IMetric, desc string) awscloudwatch.Alarm {
		return newAlarm(r.Construct, id, m, 0, fmt.Sprintf("Hookfan source %s: %s", name, desc), action)
	}
	r.Alarms.Missing = alarm("MissingAlarm", metric(metrics.ReconcileMissing),
		"reconciliation found events the provider sent that never reached Hookfan; they were brought in or redelivered (or, past the lookback, reported). Find out how they were lost (docs/operations.md).")
	r.Alarms.Skipped = alarm("SkippedAlarm", metric(metrics.ReconcileSkipped),
		"reconciliation skipped events it could not read or bring in, each with its reason in the function's log; nothing malformed was published (docs/operations.md).")
	r.Alarms.Stopped = alarm("StoppedAlarm", metric(metrics.ReconcileStopped),
		"a reconciliation run stopped before its end (the provider refused or timed out, or the records could not be read); its watermark did not move, so the next run lists the window again (docs/operations.md).")
	r.Alarms.Errors = alarm("ErrorsAlarm", r.Function.MetricErrors(&awscloudwatch.MetricOptions{Period: period, Statistic: sum}),
		"the reconcile function failed an invocation (a crash, its timeout, a start that failed); the next run lists the window again (docs/operations.md).")
}

// addReconcilers builds the reconciliation of each source with a reconcile
// block, with the functions' code, the stack's log retention and alarm
// action.
func (h *Hookfan) addReconcilers(cfg *config.Config, code func(fn string) awslambda.Code, retention awslogs.RetentionDays, action awscloudwatch.IAlarmAction) error {
	for _, s := range cfg.Reconciled() {
		r, err := NewReconciler(h.Stack, "Reconcile"+outputID(s.Name), &ReconcilerProps{
			Config: cfg, Source: s, Code: code("reconcile"), Topic: h.Topic, OrderedTopic: h.OrderedTopic, Table: h.Table,
			Payloads: h.Payloads, Archive: h.Archive, AlarmAction: action, LogRetention: retention,
		})
		if err != nil {
			return err
		}
		h.Reconcilers = append(h.Reconcilers, r)
	}
	return nil
}

// shortDuration writes a whole-minute duration as configured: "15m",
// "1h", "1h30m".
func shortDuration(d time.Duration) string {
	s := d.String() // "1h30m0s"
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
