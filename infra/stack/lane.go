package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsec2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsevents"
	"github.com/aws/aws-cdk-go/awscdk/v2/awseventstargets"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdaeventsources"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/metrics"
)

// SigningSecretLength is the length of a generated destination secret: 32
// characters of the base64 alphabet (letters and digits) decode as standard
// base64 to 24 bytes, the Standard Webhooks minimum. Subscribers configure it
// as "whsec_" followed by the value.
const SigningSecretLength = 32

// LaneProps configures one destination lane. Nil fields get defaults.
type LaneProps struct {
	// Destination is the lane's destination (required).
	Destination config.Destination
	// Config is the whole configuration: record TTL, metrics sink, alarm
	// threshold and log retention come from it (required).
	Config *config.Config
	// Topic is the fan-out topic the lane subscribes to (required).
	Topic awssns.ITopic
	// OrderedTopic is the SNS FIFO topic an ordered destination's lane
	// subscribes to instead (fifo.go); required when the destination is
	// ordered.
	OrderedTopic awssns.ITopic
	// Table is the delivery-record table (required).
	Table awsdynamodb.ITable
	// Code is the deliver function's code (required).
	Code awslambda.Code
	// AlarmAction receives the lane's alarms; nil: alarms without actions.
	AlarmAction awscloudwatch.IAlarmAction
	// StackName is the stack the alarms' descriptions tell operators to
	// open with ops --stack; "": the lane's own stack's name.
	StackName string
	// MemoryMB is the deliver function's memory; nil: functions.deliverMemoryMB.
	MemoryMB *float64
	// LogRetention of the function's logs; "": the config's api.logRetentionDays.
	LogRetention awslogs.RetentionDays
	// PayloadBucketName and PayloadBucketArn name the payload bucket the
	// function reads large bodies from, PayloadKeyArn the key encrypting
	// it; nil: the deployment has none.
	PayloadBucketName, PayloadBucketArn, PayloadKeyArn *string
	// ArchiveBucketName and ArchiveBucketArn name the archive bucket, whose
	// copy of a large body the function reads once the payload object is
	// gone; nil: no archive (or no payload bucket).
	ArchiveBucketName, ArchiveBucketArn *string
	// OperatorRoleArn is the stack's operator role: besides SNS (from
	// Topic) and, in a lane that pauses, its own function, the one
	// principal the queue's policy lets send to it (required).
	OperatorRoleArn *string
	// Egress is the stack's egress VPC, where a lane with egress "static"
	// puts its function (egress.go); nil: the stack has none.
	Egress *EgressNetwork
}

// LaneAlarms are a lane's alarms.
type LaneAlarms struct {
	// DeadLetters fires when the DLQ holds any message.
	DeadLetters awscloudwatch.Alarm
	// SubscriptionDeadLetters fires when SNS could not deliver to the queue.
	SubscriptionDeadLetters awscloudwatch.Alarm
	// OldestMessage fires when the queue's oldest message is older than the
	// configured threshold.
	OldestMessage awscloudwatch.Alarm
	// Errors fires when the deliver function fails an invocation (a crash or
	// timeout; failed deliveries are partial batch failures, not errors).
	Errors awscloudwatch.Alarm
	// EventAge, on a paced lane with per-lane metrics, fires when an event
	// delivered is older than the oldest-message threshold: a paced lane
	// defers its messages as fresh copies, whose queue age starts again, so
	// OldestMessage does not see a backlog the rate cannot clear; nil
	// otherwise.
	EventAge awscloudwatch.Alarm
	// Paused fires while the lane is paused; nil when the destination does
	// not pause.
	Paused awscloudwatch.Alarm
}

// Lane is one destination's isolated delivery lane: queue, DLQ, SNS
// subscription (with its own DLQ), deliver function with its own role and
// signing secret, the event source mapping, and alarms.
type Lane struct {
	constructs.Construct
	Destination config.Destination
	// Queue feeds the deliver function.
	Queue awssqs.Queue
	// DeadLetterQueue receives what the queue's redrive policy moves after
	// MaxReceiveCount receives. Retained on removal.
	DeadLetterQueue awssqs.Queue
	// SubscriptionDeadLetterQueue receives what SNS could not deliver to Queue.
	// Retained on removal.
	SubscriptionDeadLetterQueue awssqs.Queue
	Subscription                awssns.Subscription
	Function                    awslambda.Function
	Role                        awsiam.Role
	LogGroup                    awslogs.LogGroup
	// Secret is the destination's signing secret (generated or imported);
	// nil for an AWS target, which is not signed.
	Secret awssecretsmanager.ISecret
	// HeaderSecrets are the secrets the destination's headers carry, by
	// name; the function may read them and nothing else of Secrets Manager.
	HeaderSecrets map[string]awssecretsmanager.ISecret
	// URLSecret holds the destination's URL when it is read from a secret
	// (urlSecretName); nil otherwise.
	URLSecret   awssecretsmanager.ISecret
	EventSource awslambdaeventsources.SqsEventSource
	Alarms      LaneAlarms
	// ProbeSchedule ticks the deliver function every probeEvery, and
	// SwitchPolicy lets it turn its own event source mapping off and on:
	// both nil when the destination does not pause.
	ProbeSchedule awsevents.Rule
	SwitchPolicy  awsiam.Policy
	// Env is the function's environment contract; its Render is the
	// function's Environment.
	Env delivery.Env
	// SecurityGroup is the function's in the egress VPC; nil unless the
	// destination's egress is "static".
	SecurityGroup awsec2.SecurityGroup

	// ClientAuthSecrets are the secrets of the destination's tls and
	// auth.oauth2 sections, by name (clientauth.go).
	ClientAuthSecrets map[string]awssecretsmanager.ISecret
}

// NewLane builds a destination lane.
func NewLane(scope constructs.Construct, id string, props *LaneProps) (*Lane, error) {
	if props == nil || props.Config == nil || props.Topic == nil || props.Table == nil || props.Code == nil || props.OperatorRoleArn == nil {
		return nil, errors.New("lane: Config, Topic, Table, Code and OperatorRoleArn are required")
	}
	d := props.Destination
	cfg := props.Config
	topic, err := laneTopic(props)
	if err != nil {
		return nil, err
	}
	if err := CheckOrderedLane(d); err != nil {
		return nil, err
	}
	memory := float64(cfg.Functions.DeliverMemory())
	if props.MemoryMB != nil {
		memory = *props.MemoryMB
	}
	retention := props.LogRetention
	if retention == "" {
		r, err := retentionDays(cfg.API.LogRetention())
		if err != nil {
			return nil, err
		}
		retention = r
	}

	l := &Lane{Construct: constructs.NewConstruct(scope, jsii.String(id)), Destination: d}

	// The DLQ names its source queue in its RedriveAllowPolicy and the queue
	// names the DLQ in its redrive policy. To avoid a reference cycle the
	// source queue gets a CDK-generated, path-derived name, so its ARN is
	// known without referencing the queue.
	queueName := laneQueueName(l.Construct, d)
	queueArn := awscdk.Stack_Of(l.Construct).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("sqs"), Resource: jsii.String(queueName),
	})

	l.DeadLetterQueue = awssqs.NewQueue(l.Construct, jsii.String("DeadLetterQueue"), fifoQueue(d, &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: seconds(config.DLQRetention),
		RedriveAllowPolicy: &awssqs.RedriveAllowPolicy{
			RedrivePermission: awssqs.RedrivePermission_BY_QUEUE,
			SourceQueues:      &[]awssqs.IQueue{awssqs.Queue_FromQueueArn(l.Construct, jsii.String("SourceQueueRef"), queueArn)},
		},
		// Removing a destination must never destroy messages it failed to
		// deliver: the DLQ outlives the lane and is deleted by hand.
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	}))
	suppress(l.DeadLetterQueue, suppression{id: "Serverless-SQSRedrivePolicy", reason: "This queue is the lane's dead-letter queue (the redrive target of the lane's queue); a DLQ has no DLQ of its own."})
	l.Queue = awssqs.NewQueue(l.Construct, jsii.String("Queue"), fifoQueue(d, &awssqs.QueueProps{
		QueueName:         jsii.String(queueName),
		Encryption:        awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:        jsii.Bool(true),
		VisibilityTimeout: seconds(d.VisibilityTimeout()),
		RetentionPeriod:   seconds(d.Retention()),
		DeadLetterQueue: &awssqs.DeadLetterQueue{
			Queue:           l.DeadLetterQueue,
			MaxReceiveCount: jsii.Number(float64(d.MaxReceiveCount())),
		},
		// In-flight messages of a removed destination have nowhere to go;
		// docs/operations.md#remove-a-destination says to drain a lane first.
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	}))
	l.SubscriptionDeadLetterQueue = awssqs.NewQueue(l.Construct, jsii.String("SubscriptionDeadLetterQueue"), fifoQueue(d, &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		EnforceSSL:      jsii.Bool(true),
		RetentionPeriod: seconds(config.DLQRetention),
		RemovalPolicy:   awscdk.RemovalPolicy_RETAIN,
	}))
	suppress(l.SubscriptionDeadLetterQueue,
		suppression{id: "AwsSolutions-SQS3", reason: "This queue is the SNS subscription's dead-letter queue (RedrivePolicy.deadLetterTargetArn of the lane's subscription); a DLQ has no DLQ of its own."},
		suppression{id: "Serverless-SQSRedrivePolicy", reason: "This queue is the SNS subscription's dead-letter queue; a DLQ has no DLQ of its own."},
	)

	l.Subscription = topic.AddSubscription(awssnssubscriptions.NewSqsSubscription(l.Queue, &awssnssubscriptions.SqsSubscriptionProps{
		RawMessageDelivery: jsii.Bool(true),
		DeadLetterQueue:    l.SubscriptionDeadLetterQueue,
	}))
	if policy, scope := laneFilter(cfg, d); policy != "" {
		var doc map[string]any
		if err := json.Unmarshal([]byte(policy), &doc); err != nil {
			return nil, fmt.Errorf("destination %s: filter policy: %w", d.Name, err)
		}
		cfn := l.Subscription.Node().DefaultChild().(awssns.CfnSubscription)
		cfn.SetFilterPolicy(doc)
		cfn.SetFilterPolicyScope(jsii.String(scope))
	}

	switch {
	case !d.Signs():
		// An AWS target is not signed: no secret (target.go).
	case d.SecretName == "":
		l.Secret = awssecretsmanager.NewSecret(l.Construct, jsii.String("SigningSecret"), &awssecretsmanager.SecretProps{
			Description: jsii.String(fmt.Sprintf("Hookfan signing secret of destination %s: subscribers verify with whsec_<value>", d.Name)),
			GenerateSecretString: &awssecretsmanager.SecretStringGenerator{
				ExcludePunctuation: jsii.Bool(true),
				IncludeSpace:       jsii.Bool(false),
				PasswordLength:     jsii.Number(SigningSecretLength),
			},
			// The secret belongs to the lane: nothing is signed with it once
			// the lane is gone, and a re-added destination gets a new one.
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		suppress(l.Secret, suppression{id: "AwsSolutions-SMG4", reason: "A webhook signing secret is shared with the subscriber, so it cannot rotate unattended; it is rotated by hand with overlapping values (docs/operations.md#rotate-a-destination-secret), which the Standard Webhooks signature header supports."})
	default:
		l.Secret = importSecret(l.Construct, "SigningSecret", d.SecretName)
	}

	// A secret named by name is handed over by name: a partial ARN is
	// ambiguous when the name itself ends in a hyphen and six characters.
	secretID := laneSecretID(l)
	var bucket, archive string
	if props.PayloadBucketName != nil {
		bucket = *props.PayloadBucketName
		if props.ArchiveBucketName != nil {
			archive = *props.ArchiveBucketName
		}
	}
	l.Env = delivery.LaneEnv(cfg, d, delivery.LaneResources{Table: *props.Table.TableName(), QueueURL: *l.Queue.QueueUrl(), QueueARN: *l.Queue.QueueArn(), SecretID: secretID, PayloadBucket: bucket, ArchiveBucket: archive})
	rule, pauses := d.PauseRule()
	_, deliverTracing := tracingModes(cfg.TracingMode())
	parts, err := newFunction(l.Construct, functionSpec{
		description:    "Hookfan deliver: destination " + d.Name,
		code:           props.Code,
		memoryMB:       memory,
		tracing:        deliverTracing,
		systemLogLevel: cfg.Functions.SystemLog(),
		timeout:        seconds(d.FunctionTimeout()),
		retention:      retention,
		env:            l.Env.Render(),
	})
	if err != nil {
		return nil, err
	}
	l.Function, l.Role, l.LogGroup = parts.Function, parts.Role, parts.LogGroup
	if d.StaticEgress() {
		if props.Egress == nil {
			return nil, fmt.Errorf("destination %s: egress \"static\" needs the stack's egress network (egress.staticAddresses)", d.Name)
		}
		l.placeInVPC(props.Egress)
	}
	if pauses {
		suppress(l.Function, suppression{id: "Serverless-LambdaDLQ", reason: reasonProbe})
	} else {
		suppress(l.Function, suppression{id: "Serverless-LambdaDLQ", reason: reasonSync})
	}

	// Least privilege: its own secret, its own queue (through the event
	// source mapping: receive, delete, change visibility), and the record
	// calls on the table (claim and finish are conditional UpdateItems;
	// GetItem reads a record back) on its own records only: every key the
	// lane touches starts with "<destination>#".
	if l.Secret != nil {
		l.Secret.GrantRead(l.Role, nil)
	}
	l.grantShaping()
	l.grantTarget()
	// The headers' secrets, each by the name the function reads it by.
	l.HeaderSecrets = map[string]awssecretsmanager.ISecret{}
	for i, name := range d.HeaderSecrets() {
		s := importSecret(l.Construct, fmt.Sprintf("HeaderSecret%d", i), name)
		s.GrantRead(l.Role, nil)
		l.HeaderSecrets[name] = s
	}
	// The URL's secret, unless a header already reads it.
	if name := d.URLSecretName; name != "" {
		if s, ok := l.HeaderSecrets[name]; ok {
			l.URLSecret = s
		} else {
			l.URLSecret = importSecret(l.Construct, "URLSecret", name)
			l.URLSecret.GrantRead(l.Role, nil)
		}
	}
	l.grantClientAuthSecrets(d)
	if props.PayloadBucketArn != nil {
		buckets := []*string{props.PayloadBucketArn}
		if props.ArchiveBucketArn != nil {
			buckets = append(buckets, props.ArchiveBucketArn)
		}
		grantPayloadGet(l.Role, buckets, props.PayloadKeyArn, payloadPrefixes(d.Filter))
	}
	l.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   recordActions(cfg, pauses),
		Resources: &[]*string{props.Table.TableArn()},
		Conditions: &map[string]any{
			"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{dedupe.Key(d.Name, "*")}},
		},
	}))

	esp := &awslambdaeventsources.SqsEventSourceProps{
		BatchSize:               jsii.Number(float64(d.ReceiveBatch())),
		MaxConcurrency:          jsii.Number(float64(d.Concurrency())),
		ReportBatchItemFailures: jsii.Bool(true),
	}
	if w := d.BatchWindow(); w > 0 {
		esp.MaxBatchingWindow = seconds(w)
	}
	l.EventSource = awslambdaeventsources.NewSqsEventSource(l.Queue, esp)
	l.Function.AddEventSource(l.EventSource)
	suppress(l.Function, suppression{id: "Serverless-LambdaEventSourceMappingDestination", reason: "SQS event source mappings do not support on-failure destinations; failed messages go to the lane's DLQ through the queue's redrive policy (design rule 6)."})

	if pauses {
		l.addPause(rule)
	}
	l.guardQueues(topic.TopicArn(), props.OperatorRoleArn, requeues(d))
	l.addAlarms(cfg, props.AlarmAction, props.StackName)
	return l, nil
}

// Queue actions the operator role is given on a lane's queue and on its
// DLQ (by their policies, so the role's own policy does not grow with the
// lanes): what ops redrive and ops replay call, and what SQS requires of
// whoever starts a DLQ redrive (StartMessageMoveTask) or follows one.
var (
	operatorQueueActions = []string{"sqs:SendMessage", "sqs:GetQueueAttributes"}
	operatorDLQActions   = []string{"sqs:ReceiveMessage", "sqs:DeleteMessage", "sqs:ChangeMessageVisibility", "sqs:GetQueueAttributes",
		"sqs:StartMessageMoveTask", "sqs:ListMessageMoveTasks", "sqs:CancelMessageMoveTask"}
)

// guardQueues makes the operator role the one principal that can inject a
// delivery: sending to the lane's queue is denied to everyone but SNS
// delivering from the lane's topic (aws:SourceArn: the fan-out topic, or
// the FIFO topic of an ordered lane), the operator role and, when the lane
// re-queues (a standard lane that pauses), its own function (which
// re-queues a message at its last receive). A DLQ redrive sends as whoever starts it, so it is run
// under the operator role too (ops redrive, or the console after switching
// to the role). A message only reaches a subscriber from the queue, and a
// message in the DLQ only gets back to the queue by a redrive: the DLQ
// itself is left to SQS's redrive policy (which moves messages without a
// SendMessage call) and gets the operator's receive and move calls.
func (l *Lane) guardQueues(topicArn, operatorArn *string, requeues bool) {
	senders := []*string{operatorArn}
	if requeues {
		senders = append(senders, l.Role.RoleArn())
	}
	l.Queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid:        jsii.String("OnlySNSAndTheOperatorSend"),
		Effect:     awsiam.Effect_DENY,
		Principals: &[]awsiam.IPrincipal{awsiam.NewAnyPrincipal()},
		Actions:    jsii.Strings("sqs:SendMessage"),
		Resources:  &[]*string{l.Queue.QueueArn()},
		Conditions: &map[string]any{"ArnNotEquals": map[string]any{"aws:PrincipalArn": senders, "aws:SourceArn": topicArn}},
	}))
	operator := awsiam.NewArnPrincipal(operatorArn)
	l.Queue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("TheOperatorSends"), Principals: &[]awsiam.IPrincipal{operator},
		Actions: jsii.Strings(operatorQueueActions...), Resources: &[]*string{l.Queue.QueueArn()},
	}))
	l.DeadLetterQueue.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Sid: jsii.String("TheOperatorRedrives"), Principals: &[]awsiam.IPrincipal{operator},
		Actions: jsii.Strings(operatorDLQActions...), Resources: &[]*string{l.DeadLetterQueue.QueueArn()},
	}))
}

// reasonProbe is the Serverless-LambdaDLQ suppression of a lane that
// pauses: its function is also invoked asynchronously, by its probe
// schedule.
const reasonProbe = "The SQS event source mapping invokes the function synchronously (failures stay on the queue, whose redrive policy moves them to the lane's DLQ); the probe schedule invokes it asynchronously with retries off, and a tick that fails is simply followed by the next one: there is no event worth keeping in a DLQ."

// addPause gives a lane that pauses what it needs: the right to turn its
// own event source mapping off and on and to re-queue a message, and the
// schedule that ticks the function while the lane is paused.
func (l *Lane) addPause(rule config.PauseRule) {
	name := l.Destination.Name
	// The function finds its mapping by listing (it cannot know the id:
	// the mapping is made after the function), which has no resource-level
	// permission, and may update only the mappings of its own function
	// (condition lambda:FunctionArn). The statements live in a policy of
	// their own, which the function does not depend on, so naming the
	// function's ARN makes no cycle.
	mappings := awscdk.Stack_Of(l.Construct).FormatArn(&awscdk.ArnComponents{
		Service: jsii.String("lambda"), Resource: jsii.String("event-source-mapping"), ResourceName: jsii.String("*"),
		ArnFormat: awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
	l.SwitchPolicy = awsiam.NewPolicy(l.Construct, jsii.String("SwitchPolicy"), &awsiam.PolicyProps{
		Roles: &[]awsiam.IRole{l.Role},
		Statements: &[]awsiam.PolicyStatement{
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions: jsii.Strings("lambda:ListEventSourceMappings"), Resources: jsii.Strings("*"),
			}),
			awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
				Actions:    jsii.Strings("lambda:UpdateEventSourceMapping"),
				Resources:  &[]*string{mappings},
				Conditions: &map[string]any{"StringEquals": map[string]any{"lambda:FunctionArn": l.Function.FunctionArn()}},
			}),
		},
	})
	suppress(l.SwitchPolicy, suppression{id: "AwsSolutions-IAM5",
		reason:    "lambda:ListEventSourceMappings has no resource-level permissions, so AWS requires Resource \"*\"; lambda:UpdateEventSourceMapping is limited by the lambda:FunctionArn condition to the mappings of the lane's own function, whose id the function cannot know in advance.",
		appliesTo: []string{"Resource::*", "Resource::arn:<AWS::Partition>:lambda:<AWS::Region>:<AWS::AccountId>:event-source-mapping:*"}})
	// A message at its last receive while the lane is paused is sent to
	// the queue again as a fresh copy, rather than to the DLQ unattempted
	// (not on an ordered lane: requeues).
	if requeues(l.Destination) {
		l.Queue.GrantSendMessages(l.Role)
	}

	l.ProbeSchedule = awsevents.NewRule(l.Construct, jsii.String("ProbeSchedule"), &awsevents.RuleProps{
		Description: jsii.String(fmt.Sprintf("Hookfan destination %s: probes the lane while it is paused", name)),
		Schedule:    awsevents.Schedule_Rate(seconds(rule.ProbeEvery)),
		Targets: &[]awsevents.IRuleTarget{awseventstargets.NewLambdaFunction(l.Function, &awseventstargets.LambdaFunctionProps{
			Event:         awsevents.RuleTargetInput_FromObject(delivery.TickEvent{Hookfan: delivery.TickInput}),
			RetryAttempts: jsii.Number(0),
			MaxEventAge:   seconds(rule.ProbeEvery),
		})},
	})
	suppress(l.ProbeSchedule, suppression{id: "Serverless-EventBusDLQ", reason: reasonTick})
	// A tick that fails is not retried: the next one comes soon enough.
	l.Function.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{RetryAttempts: jsii.Number(0), MaxEventAge: seconds(rule.ProbeEvery)})
	suppress(l.Function, suppression{id: "Serverless-LambdaAsyncFailureDestination", reason: reasonTick})
}

// reasonTick is why a probe tick keeps nothing when it fails.
const reasonTick = "The probe schedule's ticks carry no data (a constant input); one that is not delivered or fails is followed by the next within probeEvery, so a DLQ or failure destination would only collect copies of that constant. A failing tick shows in the function's Errors alarm."

func (l *Lane) addAlarms(cfg *config.Config, action awscloudwatch.IAlarmAction, stackName string) {
	name := l.Destination.Name
	if stackName == "" {
		stackName = *awscdk.Stack_Of(l.Construct).StackName()
	}
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	five := awscdk.Duration_Minutes(jsii.Number(5))
	maximum := jsii.String("Maximum")
	alarm := func(id string, m awscloudwatch.IMetric, threshold float64, desc string) awscloudwatch.Alarm {
		return newAlarm(l.Construct, id, m, threshold, desc, action)
	}
	lane, dlq := LaneView(stackName, "lane", name), LaneView(stackName, "dlq", name)
	if rule, ok := cfg.DLQAlarm(l.Destination); ok {
		// The DLQ's depth rises by what reached it: the rise from one
		// window's highest depth to the next's counts the arrivals (less
		// what a redrive took away meanwhile).
		window := seconds(rule.Window())
		depth := l.DeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: window, Statistic: maximum})
		arrived := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression:   jsii.String("DIFF(depth)"),
			UsingMetrics: &map[string]awscloudwatch.IMetric{"depth": depth},
			Period:       window,
			Label:        jsii.String("messages that reached the DLQ in the window"),
		})
		l.Alarms.DeadLetters = alarm("DeadLettersAlarm", arrived, float64(rule.Threshold),
			fmt.Sprintf("Hookfan destination %s: more than %d messages reached its DLQ within %d minutes. Fix the subscriber, then redrive the DLQ (ops redrive %s).%s", name, rule.Threshold, int(rule.Window().Minutes()), name, dlq))
	} else {
		l.Alarms.DeadLetters = alarm("DeadLettersAlarm",
			l.DeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: minute, Statistic: maximum}), 0,
			fmt.Sprintf("Hookfan destination %s: messages in its DLQ. Fix the subscriber, then redrive the DLQ (ops redrive %s, or the SQS console: docs/operations.md#redrive-a-dlq-from-the-console).%s", name, name, dlq))
	}
	l.Alarms.SubscriptionDeadLetters = alarm("SubscriptionDeadLettersAlarm",
		l.SubscriptionDeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: minute, Statistic: maximum}), 0,
		fmt.Sprintf("Hookfan destination %s: SNS could not deliver to the lane's queue (check the queue and its policy).%s", name, lane))
	l.Alarms.OldestMessage = alarm("OldestMessageAlarm",
		l.Queue.MetricApproximateAgeOfOldestMessage(&awscloudwatch.MetricOptions{Period: five, Statistic: maximum}),
		cfg.Alarms.OldestMessageThreshold().Seconds(),
		fmt.Sprintf("Hookfan destination %s: the oldest queued event waits longer than %s; the subscriber is slow or failing.%s", name, cfg.Alarms.OldestMessageThreshold(), lane))
	if rule, pauses := l.Destination.PauseRule(); pauses {
		period := seconds(rule.ProbeEvery)
		l.Alarms.Paused = alarm("PausedAlarm", awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metrics.LanePaused),
			DimensionsMap: &map[string]*string{metrics.DimDestination: jsii.String(name)}, Statistic: maximum, Period: period,
		}), 0, fmt.Sprintf("Hookfan destination %s: the lane is paused (its destination kept failing); events wait in its queue and a probe every %s resumes it once the destination answers 2xx (docs/operations.md#paused-lanes).%s", name, rule.ProbeEvery, lane))
	}
	if _, paced := l.Destination.Pace(); paced && cfg.Metrics.PerLane() {
		threshold := cfg.Alarms.OldestMessageThreshold()
		l.Alarms.EventAge = alarm("EventAgeAlarm", awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metrics.Namespace), MetricName: jsii.String(metrics.EventAge),
			DimensionsMap: &map[string]*string{metrics.DimDestination: jsii.String(name)}, Statistic: maximum, Period: five,
		}), float64(threshold.Milliseconds()), fmt.Sprintf("Hookfan destination %s: a paced event was delivered more than %s after it was accepted; the lane's backlog may not clear at its rate before the queue's retention (docs/operations.md#paced-lanes).%s", name, threshold, lane))
	}
	l.Alarms.Errors = alarm("ErrorsAlarm",
		l.Function.MetricErrors(&awscloudwatch.MetricOptions{Period: five, Statistic: jsii.String("Sum")}), 0,
		fmt.Sprintf("Hookfan destination %s: the deliver function failed invocations (crash or timeout); its log group has the errors.%s", name, lane))
}

// LaneView is the sentence a lane alarm's description ends with: the ops
// command that shows what the alarm is about, and the console's page of
// the lane (ops console serves it).
func LaneView(stackName, command, destination string) string {
	return fmt.Sprintf(" Open: ops --stack %s %s %s, or /lanes/%s in ops --stack %s console.", stackName, command, destination, destination, stackName)
}

// importSecret references an existing secret by name or ARN. A complete ARN
// ends in "-" and Secrets Manager's six-character suffix.
func importSecret(scope constructs.Construct, id, nameOrArn string) awssecretsmanager.ISecret {
	if !isSecretARN(nameOrArn) {
		return awssecretsmanager.Secret_FromSecretNameV2(scope, jsii.String(id), jsii.String(nameOrArn))
	}
	if completeARN.MatchString(nameOrArn) {
		return awssecretsmanager.Secret_FromSecretCompleteArn(scope, jsii.String(id), jsii.String(nameOrArn))
	}
	return awssecretsmanager.Secret_FromSecretPartialArn(scope, jsii.String(id), jsii.String(nameOrArn))
}

func seconds(d time.Duration) awscdk.Duration {
	return awscdk.Duration_Seconds(jsii.Number(d.Seconds()))
}

// newAlarm adds an alarm on m above threshold over one period, quiet
// without data, notifying action (when set) as it fires and clears: the
// shape of every alarm of the stack.
func newAlarm(scope constructs.Construct, id string, m awscloudwatch.IMetric, threshold float64, desc string, action awscloudwatch.IAlarmAction) awscloudwatch.Alarm {
	a := awscloudwatch.NewAlarm(scope, jsii.String(id), &awscloudwatch.AlarmProps{
		Metric:             m,
		Threshold:          jsii.Number(threshold),
		EvaluationPeriods:  jsii.Number(1),
		ComparisonOperator: awscloudwatch.ComparisonOperator_GREATER_THAN_THRESHOLD,
		TreatMissingData:   awscloudwatch.TreatMissingData_NOT_BREACHING,
		AlarmDescription:   jsii.String(desc),
	})
	if action != nil {
		a.AddAlarmAction(action)
		a.AddOkAction(action)
	}
	return a
}
