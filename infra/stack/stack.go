// Package stack is Hookfan's CDK topology: the ingest API, the fan-out topic,
// the delivery-record table, one nested stack per destination lane, the
// dashboard and the alarms, all from the typed configuration.
package stack

import (
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssnssubscriptions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsssm"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/transform"
)

// Props configures the Hookfan stack.
type Props struct {
	awscdk.StackProps
	// Config is the validated configuration (required).
	Config *config.Config
	// Builder compiles the functions; nil: NewBuilder("").
	Builder *Builder
}

// Hookfan is the deployed topology and what it is made of.
type Hookfan struct {
	Stack awscdk.Stack
	// TopicKey encrypts the fan-out topic (topicKey "customer") and the
	// alarm topic; nil when neither needs it.
	TopicKey awskms.Key
	Topic    awssns.Topic
	// OrderedTopic is the SNS FIFO topic of the ordered destinations'
	// lanes (fifo.go); nil when no destination is ordered.
	OrderedTopic awssns.Topic
	Table        awsdynamodb.Table
	// Payloads holds bodies larger than one SNS message; nil when no
	// source takes them (config.LargePayloads).
	Payloads *PayloadBucket
	// DataKey encrypts the payload and archive buckets, which hold every
	// accepted body; nil when the stack has neither.
	DataKey awskms.Key
	// Operator is the role operators assume for ops redrive, ops replay
	// and a console DLQ redrive: the one principal, besides SNS, that may
	// send to a lane's queue.
	Operator *OperatorRole
	Sources  *SourceSecrets
	Ingest   *IngestAPI
	// Reconcilers reconcile the sources with a reconcile block, in
	// configuration order (reconcile.go); none without one.
	Reconcilers []*Reconciler
	// AlarmTopic receives every alarm; nil when neither alarms.email nor
	// alarms.https is set.
	AlarmTopic awssns.Topic
	// Lanes are the destinations' lanes, in configuration order; each lives
	// in its own nested stack, LaneStacks[i].
	Lanes      []*Lane
	LaneStacks []awscdk.NestedStack
	// LaneIndex are the lanes' SSM parameters (LaneParameterName), in
	// configuration order; Index is the stack's (StackParameterName).
	LaneIndex []awsssm.StringParameter
	Index     awsssm.StringParameter
	// Dashboard is the overview, with the first LanesPerDashboard lanes;
	// LaneDashboards hold the rest, each in its nested stack DashboardStacks[i].
	Dashboard       awscloudwatch.Dashboard
	LaneDashboards  []awscloudwatch.Dashboard
	DashboardStacks []awscdk.NestedStack
	// Archive keeps every accepted event; nil when config.archive.days is 0.
	Archive *Archive
	// Egress is the VPC of the lanes with static addresses; nil without
	// egress.staticAddresses.
	Egress *EgressNetwork
	// Queries are the saved Logs Insights queries: Queries[0] in this stack
	// (the 401s, and the trail and failures of the overview's lanes), then
	// one per further dashboard page, in its nested stack.
	Queries []*InsightsQueries
}

// SNSFilterPoliciesPerTopic is SNS's default quota of subscriptions with a
// filter policy on one topic (adjustable).
const SNSFilterPoliciesPerTopic = 200

// New builds the whole Hookfan stack.
func New(scope constructs.Construct, id string, props *Props) (*Hookfan, error) {
	if props == nil || props.Config == nil {
		return nil, errors.New("hookfan stack: Config is required")
	}
	cfg := props.Config
	// A configuration built in code gets the checks a loaded one had: the
	// combinations the API cannot serve are refused before anything is made.
	if err := errors.Join(cfg.Validate(), transform.CheckConfig(cfg)); err != nil {
		return nil, fmt.Errorf("hookfan stack: %w", err)
	}
	// Every deploy-time refusal at once.
	if err := errors.Join(checkLocalDestinations(scope, cfg), checkMetricsSink(cfg)); err != nil {
		return nil, err
	}
	builder := props.Builder
	if builder == nil {
		b, err := NewBuilder("")
		if err != nil {
			return nil, err
		}
		builder = b
	}
	// Each stack needs its own Code instance; the same directory gives the
	// same asset hash, so the asset is staged and uploaded once.
	dirs := map[string]string{}
	functions := []string{"ingest", "deliver"}
	if len(cfg.Reconciled()) > 0 {
		functions = append(functions, "reconcile")
	}
	for _, fn := range functions {
		dir, err := builder.Build(fn)
		if err != nil {
			return nil, err
		}
		dirs[fn] = dir
	}
	code := func(fn string) awslambda.Code { return awslambda.Code_FromAsset(jsii.String(dirs[fn]), nil) }
	if err := checkOutputIDs(cfg); err != nil {
		return nil, err
	}
	if err := checkOutputCount(cfg); err != nil {
		return nil, err
	}

	sp := props.StackProps
	// The parent holds a nested stack per lane: without indentation its
	// template is about half the size, far from CloudFormation's 1 MB.
	if sp.SuppressTemplateIndentation == nil {
		sp.SuppressTemplateIndentation = jsii.Bool(true)
	}
	if sp.Description == nil {
		sp.Description = jsii.String("Hookfan: AWS-native webhook fan-out (ingest API, SNS topic, one lane per destination)")
	}
	h := &Hookfan{Stack: awscdk.NewStack(scope, jsii.String(id), &sp)}
	stack := h.Stack

	var fanoutKey awskms.IKey
	if cfg.CustomerKey() {
		h.TopicKey = awskms.NewKey(stack, jsii.String("TopicKey"), &awskms.KeyProps{
			Description:       jsii.String("Hookfan: encrypts the fan-out and alarm topics"),
			EnableKeyRotation: jsii.Bool(true),
			// Only the topics use it and SNS keeps no messages at rest once
			// delivered, so the key goes with the stack (after KMS's waiting period).
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		fanoutKey = h.TopicKey
	}
	if cfg.TopicKeyKind() == config.TopicKeyAWSManaged {
		// SNS's AWS managed key: free, usable through SNS by any principal
		// of the account allowed to publish; its key policy cannot be changed.
		fanoutKey = awskms.Alias_FromAliasName(stack, jsii.String("AwsManagedSnsKey"), jsii.String("alias/aws/sns"))
	}
	topicProps := &awssns.TopicProps{
		DisplayName: jsii.String("Hookfan events"),
		MasterKey:   fanoutKey,
		EnforceSSL:  jsii.Bool(true),
	}
	if t := topicTracing(cfg.TracingMode()); t != "" {
		topicProps.TracingConfig = t
	}
	h.Topic = awssns.NewTopic(stack, jsii.String("Topic"), topicProps)
	if cfg.AnyOrdered() {
		h.OrderedTopic = NewOrderedTopic(stack, "OrderedTopic", cfg, fanoutKey)
	}
	h.Table = NewRecordTable(stack, "DeliveryRecords", cfg.Dedupe.PITR(), cfg.Dedupe.Indexed())

	retention, err := retentionDays(cfg.API.LogRetention())
	if err != nil {
		return nil, err
	}
	h.Sources = NewSourceSecrets(stack, "SourceSecrets", &SourceSecretsProps{Sources: cfg.Sources, LogRetention: retention})

	var action awscloudwatch.IAlarmAction
	if cfg.Alarms.Notified() {
		h.AlarmTopic = awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
			DisplayName: jsii.String("Hookfan alarms"),
			MasterKey:   h.TopicKey,
			EnforceSSL:  jsii.Bool(true),
		})
		if cfg.Alarms.Email != "" {
			email := h.AlarmTopic.AddSubscription(awssnssubscriptions.NewEmailSubscription(jsii.String(cfg.Alarms.Email), nil))
			suppress(email, suppression{id: "Serverless-SNSRedrivePolicy", reason: "The alarm e-mail subscription: a notification SNS cannot e-mail has no reader in a DLQ, and the alarm's state and history stay in CloudWatch."})
		}
		// Incident tools' endpoints: SNS posts each a SubscriptionConfirmation,
		// which the tool confirms (docs/operations.md#alarms).
		for _, endpoint := range cfg.Alarms.HTTPS {
			sub := h.AlarmTopic.AddSubscription(awssnssubscriptions.NewUrlSubscription(jsii.String(endpoint), &awssnssubscriptions.UrlSubscriptionProps{
				Protocol: awssns.SubscriptionProtocol_HTTPS,
			}))
			suppress(sub, suppression{id: "Serverless-SNSRedrivePolicy", reason: "An alarm https subscription: SNS retries an endpoint by its delivery policy; a notification it then drops would wait unread in a DLQ, and the alarm's state and history stay in CloudWatch."})
		}
		// An endpoint whose URL carries the tool's routing key stays in
		// Secrets Manager: the template holds a dynamic reference, which
		// CloudFormation resolves when it creates the subscription.
		for _, name := range cfg.Alarms.HTTPSSecrets {
			endpoint := awscdk.SecretValue_SecretsManager(jsii.String(name), nil).UnsafeUnwrap()
			sub := h.AlarmTopic.AddSubscription(awssnssubscriptions.NewUrlSubscription(endpoint, &awssnssubscriptions.UrlSubscriptionProps{
				Protocol: awssns.SubscriptionProtocol_HTTPS,
			}))
			suppress(sub, suppression{id: "Serverless-SNSRedrivePolicy", reason: "An alarm https subscription: SNS retries an endpoint by its delivery policy; a notification it then drops would wait unread in a DLQ, and the alarm's state and history stay in CloudWatch."})
		}
		// CloudWatch publishes alarms to the encrypted topic, so it needs
		// the key; the condition limits that to this account's alarms.
		h.TopicKey.AddToResourcePolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Sid:        jsii.String("AllowCloudWatchAlarmsToUseTheKey"),
			Principals: &[]awsiam.IPrincipal{awsiam.NewServicePrincipal(jsii.String("cloudwatch.amazonaws.com"), nil)},
			Actions:    jsii.Strings("kms:Decrypt", "kms:GenerateDataKey*"),
			Resources:  jsii.Strings("*"),
			Conditions: &map[string]any{"StringEquals": map[string]any{"aws:SourceAccount": stack.Account()}},
		}), nil)
		action = awscloudwatchactions.NewSnsAction(h.AlarmTopic)
	}

	if cfg.LargePayloads() || cfg.Archive.Enabled() {
		h.DataKey = awskms.NewKey(stack, jsii.String("DataKey"), &awskms.KeyProps{
			Description:       jsii.String("Hookfan: encrypts the payload and archive buckets (every accepted body)"),
			EnableKeyRotation: jsii.Bool(true),
			// The buckets outlive the stack, and their objects need the key.
			RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		})
	}
	if cfg.LargePayloads() {
		if h.Payloads, err = NewPayloadBucket(stack, "Payloads", &PayloadBucketProps{Config: cfg, Key: h.DataKey}); err != nil {
			return nil, err
		}
	}
	if cfg.Archive.Enabled() {
		h.Archive, err = NewArchive(stack, "Archive", &ArchiveProps{
			Topic: h.Topic, Days: cfg.Archive.RetentionDays(), LogRetention: retention, AlarmAction: action, Key: h.DataKey,
		})
		if err != nil {
			return nil, err
		}
	}
	h.Ingest, err = NewIngestAPI(stack, "Ingest", &IngestAPIProps{
		Config: cfg, Topic: h.Topic, OrderedTopic: h.OrderedTopic, Code: code("ingest"), SourceSecrets: h.Sources.Secrets, Table: h.Table, AlarmAction: action,
		Payloads: h.Payloads, Archive: h.Archive,
	})
	if err != nil {
		return nil, err
	}
	if h.Payloads != nil && h.Archive != nil {
		// Ingest writes each large body into the archive too (shared/payload).
		h.Archive.GrantPayloadCopies(h.Ingest.Role)
	}
	if cfg.TopicKeyKind() == config.TopicKeyAWSManaged {
		// CDK grants an imported alias as any key of the account carrying
		// it (key/* with a kms:ResourceAliases condition).
		suppress(h.Ingest.Role, suppression{id: "AwsSolutions-IAM5", appliesTo: []string{"Resource::arn:<AWS::Partition>:kms:<AWS::Region>:<AWS::AccountId>:key/*"},
			reason: "topicKey aws-managed: the grant CDK makes for the alias alias/aws/sns is limited by condition to the key carrying that alias, SNS's AWS managed key, which only SNS can use on the account's behalf."})
	}
	if err := h.addReconcilers(cfg, code, retention, action); err != nil {
		return nil, err
	}
	guardTopic(h.Topic, h.Ingest.Role, h.Reconcilers)
	if h.OrderedTopic != nil {
		guardTopic(h.OrderedTopic, h.Ingest.Role, h.Reconcilers)
		checkFIFOQuota(h.OrderedTopic, cfg)
	}
	h.Operator = NewOperatorRole(stack, "Operator", &OperatorRoleProps{
		Config: cfg, Table: h.Table, Payloads: h.Payloads, Archive: h.Archive, Key: h.DataKey,
	})
	for _, r := range h.Reconcilers {
		r.GrantInvoke(h.Operator.Role) // ops reconcile
	}

	if cfg.Egress.StaticAddresses {
		if h.Egress, err = NewEgressNetwork(stack, "Egress", &EgressProps{Egress: cfg.Egress, LogRetention: retention}); err != nil {
			return nil, err
		}
	}

	filtered := standardFiltered(cfg)
	for i, d := range cfg.Destinations {
		ns := awscdk.NewNestedStack(stack, jsii.String("Lane-"+d.Name), &awscdk.NestedStackProps{
			Description: jsii.String("Hookfan lane of destination " + d.Name),
		})
		// The subscription lives with its queue in the lane's stack; a
		// reference to the topic keeps it from depending on the parent stack
		// (which CloudFormation cannot express for a nested stack).
		topic := awssns.Topic_FromTopicArn(ns, jsii.String("Topic"), h.Topic.TopicArn())
		lp := &LaneProps{Destination: d, Config: cfg, Topic: topic, Table: h.Table, Code: code("deliver"), AlarmAction: action, StackName: *stack.StackName(),
			OperatorRoleArn: h.Operator.Role.RoleArn(), Egress: h.Egress}
		if d.Ordered() {
			lp.OrderedTopic = orderedTopicRef(ns, h.OrderedTopic)
		}
		if h.Payloads != nil {
			lp.PayloadBucketName, lp.PayloadBucketArn, lp.PayloadKeyArn = h.Payloads.Bucket.BucketName(), h.Payloads.Bucket.BucketArn(), h.DataKey.KeyArn()
			if h.Archive != nil {
				lp.ArchiveBucketName, lp.ArchiveBucketArn = h.Archive.Bucket.BucketName(), h.Archive.Bucket.BucketArn()
			}
		}
		lane, err := NewLane(ns, "Lane", lp)
		if err != nil {
			return nil, err
		}
		index, err := newLaneIndex(ns, lane, *stack.StackName(), fmt.Sprintf("destinations[%d]", i))
		if err != nil {
			return nil, err
		}
		h.LaneIndex = append(h.LaneIndex, index)
		h.Lanes = append(h.Lanes, lane)
		h.LaneStacks = append(h.LaneStacks, ns)
	}
	if filtered > SNSFilterPoliciesPerTopic {
		awscdk.Annotations_Of(h.Topic).AddWarningV2(jsii.String("hookfan:filterPolicies"), jsii.String(fmt.Sprintf(
			"%d destinations have a filter policy; SNS allows %d per topic by default: request a quota increase (Amazon SNS, \"Filter policies per topic\") before deploying", filtered, SNSFilterPoliciesPerTopic)), nil)
	}

	if err := h.addDashboards(cfg); err != nil {
		return nil, err
	}
	dashboards := []*string{}
	if h.Dashboard != nil {
		dashboards = append(dashboards, h.Dashboard.DashboardName())
	}
	for _, d := range h.LaneDashboards {
		dashboards = append(dashboards, d.DashboardName())
	}
	h.Index = newStackIndex(stack, h, dashboards, cfg.Dedupe.Indexed())
	h.addOutputs(cfg)
	if err := h.checkResourceCount(); err != nil {
		return nil, err
	}
	return h, nil
}

// MaxResources is CloudFormation's limit on the resources of one template.
const MaxResources = 500

// ParentResources counts the resources of the parent template: each
// nested stack is one, whatever it holds.
func (h *Hookfan) ParentResources() int {
	n := 0
	var walk func(c constructs.IConstruct)
	walk = func(c constructs.IConstruct) {
		for _, child := range *c.Node().Children() {
			if *awscdk.Stack_IsStack(child) {
				continue // a nested stack: its resource is its sibling "<id>.NestedStack"
			}
			if *awscdk.CfnResource_IsCfnResource(child) {
				n++
			}
			walk(child)
		}
	}
	walk(h.Stack)
	return n
}

// MostDestinations is how many destinations fit the parent template of
// this deployment's sources and settings.
func (h *Hookfan) MostDestinations() int {
	return mostDestinations(h.ParentResources() - len(h.LaneStacks) - len(h.DashboardStacks))
}

// mostDestinations is how many destinations fit beside fixed resources: a
// nested stack each, and a dashboard page per LanesPerDashboard past the
// first LanesPerDashboard.
func mostDestinations(fixed int) int {
	most := 0
	for n := 1; fixed+n+(n-1)/LanesPerDashboard <= MaxResources; n++ {
		most = n
	}
	return most
}

// checkResourceCount fails, with the largest deployment that fits, when
// the parent template would hold more than CloudFormation's 500 resources.
// A destination costs the parent one resource (its nested stack), and one
// more per LanesPerDashboard destinations (a dashboard page).
func (h *Hookfan) checkResourceCount() error {
	total := h.ParentResources()
	if total <= MaxResources {
		return nil
	}
	most := mostDestinations(total - len(h.LaneStacks) - len(h.DashboardStacks))
	return fmt.Errorf("%d destinations need %d resources in the parent stack, more than CloudFormation's %d: this configuration holds at most %d destinations; split it into two stacks (-c %s=FILE -c hookfanStackName=NAME)",
		len(h.Lanes), total, MaxResources, most, config.ContextFileKey)
}

// addDashboards makes the overview dashboard, which holds the first
// LanesPerDashboard lanes' rows, and one more dashboard per further
// LanesPerDashboard lanes, each in its own nested stack (a dashboard holds
// 500 widgets, and its body counts against its template's size). The saved
// Logs Insights queries follow the same pages: a query reads at most
// MaxQueryLogGroups log groups, so each page's lanes have their own event
// trail and failure queries, beside its dashboard.
func (h *Hookfan) addDashboards(cfg *config.Config) error {
	first := h.Lanes[:min(len(h.Lanes), LanesPerDashboard)]
	if cfg.Metrics.Dashboards() {
		h.Dashboard = NewDashboard(h.Stack, "Dashboard", &DashboardProps{Config: cfg, Ingest: h.Ingest, Lanes: first})
	}
	folder := QueryFolder(*h.Stack.StackName())
	firstNames := make([]LaneNames, len(first))
	for i, l := range first {
		firstNames[i] = namesOf(l)
	}
	q, err := NewInsightsQueries(h.Stack, "Queries", &InsightsQueriesProps{
		Folder: folder, IngestLogGroup: h.Ingest.LogGroup.LogGroupName(), Lanes: firstNames,
		Range: pageRange(0, len(first), len(h.Lanes)), Unauthorized: true,
	})
	if err != nil {
		return err
	}
	h.Queries = append(h.Queries, q)
	for i := LanesPerDashboard; i < len(h.Lanes); i += LanesPerDashboard {
		page := i/LanesPerDashboard + 1
		lanes := h.Lanes[i:min(len(h.Lanes), i+LanesPerDashboard)]
		ns := awscdk.NewNestedStack(h.Stack, jsii.String(fmt.Sprintf("Dashboard-%d", page)), &awscdk.NestedStackProps{
			Description: jsii.String(fmt.Sprintf("Hookfan dashboard %d: destinations %s to %s", page, lanes[0].Destination.Name, lanes[len(lanes)-1].Destination.Name)),
		})
		// One parameter per lane, set to the lane stack's joined names.
		names := make([]LaneNames, len(lanes))
		for j, l := range lanes {
			param := fmt.Sprintf("Lane%d", j)
			awscdk.NewCfnParameter(ns, jsii.String(param), &awscdk.CfnParameterProps{
				Type: jsii.String("String"), Description: jsii.String("Dashboard names of destination " + l.Destination.Name),
			})
			out := h.LaneStacks[i+j].NestedStackResource().GetAtt(jsii.String("Outputs."+laneNamesOutput), awscdk.ResolutionTypeHint_STRING)
			ns.SetParameter(jsii.String(param), awscdk.Token_AsString(out, nil))
			names[j] = splitNames(l.Destination.Name, awscdk.Fn_Ref(jsii.String(param)))
		}
		if cfg.Metrics.Dashboards() {
			h.LaneDashboards = append(h.LaneDashboards, NewLaneDashboard(ns, "Dashboard", names, nil, cfg.Metrics.PerLane()))
		}
		awscdk.NewCfnParameter(ns, jsii.String("IngestLogGroup"), &awscdk.CfnParameterProps{
			Type: jsii.String("String"), Description: jsii.String("The ingest function's log group (the event trail query reads it)"),
		})
		ns.SetParameter(jsii.String("IngestLogGroup"), h.Ingest.LogGroup.LogGroupName())
		q, err := NewInsightsQueries(ns, "Queries", &InsightsQueriesProps{
			Folder: folder, IngestLogGroup: awscdk.Fn_Ref(jsii.String("IngestLogGroup")), Lanes: names,
			Range: pageRange(i, i+len(lanes), len(h.Lanes)),
		})
		if err != nil {
			return err
		}
		h.Queries = append(h.Queries, q)
		h.DashboardStacks = append(h.DashboardStacks, ns)
	}
	return nil
}

func (h *Hookfan) addOutputs(cfg *config.Config) {
	out := func(id, desc string, value *string) {
		awscdk.NewCfnOutput(h.Stack, jsii.String(id), &awscdk.CfnOutputProps{Value: value, Description: jsii.String(desc)})
	}
	out("ApiUrl", "Base URL of the webhook API", h.Ingest.URL())
	for _, s := range cfg.Sources {
		out("Source"+outputID(s.Name)+"Url", "Webhook URL of source "+s.Name+" (give it to the provider)", h.Ingest.SourceURL(s.Name))
	}
	if d := h.Ingest.Domain; d != nil && d.Record == nil {
		out("ApiDomainTarget", "Point a CNAME (or an alias) for "+d.Name+" at this name", d.Target)
	}
	if h.Dashboard != nil {
		out("DashboardName", "CloudWatch dashboard", h.Dashboard.DashboardName())
	}
	out("IndexParameter", "SSM parameter describing the stack; each destination's lane is described under "+IndexPrefix(*h.Stack.StackName())+"destinations/", h.Index.ParameterName())
	if h.Egress != nil {
		h.Egress.addOutputs(h.Stack)
	}
	out("OperatorRoleArn", "Role to assume for ops redrive, ops replay and a console DLQ redrive: the only principal, besides SNS, that may send to a lane's queue", h.Operator.Role.RoleArn())
}

// outputID turns a source or destination name ([a-z0-9-]) into the
// alphanumeric part of an output's logical ID: "order-events" → "OrderEvents".
func outputID(name string) string {
	var b strings.Builder
	for part := range strings.SplitSeq(name, "-") {
		if part == "" {
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

// MaxOutputs is CloudFormation's limit on the outputs of one template.
const MaxOutputs = 200

// outputCount is how many outputs the parent stack declares: the API URL,
// one URL per source, the domain's DNS target, the dashboard name, the
// index parameter and the operator role. Destinations add none: their lanes
// are described in their own nested stacks and SSM parameters.
func outputCount(cfg *config.Config) int {
	n := 4 + len(cfg.Sources)
	if cfg.API.HasDomain() && !cfg.API.HasHostedZone() {
		n++
	}
	if cfg.Egress.StaticAddresses {
		n++ // EgressAddresses
	}
	return n
}

// checkOutputCount fails early, with the fix, when the outputs would exceed
// CloudFormation's limit.
func checkOutputCount(cfg *config.Config) error {
	if n := outputCount(cfg); n > MaxOutputs {
		return fmt.Errorf("%d sources need %d stack outputs, more than CloudFormation's %d; split the configuration into two stacks (-c %s=FILE -c hookfanStackName=NAME)",
			len(cfg.Sources), n, MaxOutputs, config.ContextFileKey)
	}
	return nil
}

// checkOutputIDs rejects names that differ only in hyphens ("a-b" and "ab"),
// whose outputs would collide.
func checkOutputIDs(cfg *config.Config) error {
	var errs []error
	check := func(kind string, names []string) {
		seen := map[string]string{}
		for _, n := range names {
			id := outputID(n)
			if prev, ok := seen[id]; ok {
				errs = append(errs, fmt.Errorf("%s names %q and %q differ only in hyphens, so their logical IDs and outputs would collide; rename one", kind, prev, n))
			}
			seen[id] = n
		}
	}
	var src, dst []string
	for _, s := range cfg.Sources {
		src = append(src, s.Name)
	}
	for _, d := range cfg.Destinations {
		dst = append(dst, d.Name)
	}
	check("source", src)
	check("destination", dst)
	return errors.Join(errs...)
}

// topicTracing is the fan-out topic's tracing: with "sampled" it passes the
// publisher's trace header on to each subscription, with "all" it records
// its own segments too; off, neither.
func topicTracing(mode string) awssns.TracingConfig {
	switch mode {
	case config.TracingSampled:
		return awssns.TracingConfig_PASS_THROUGH
	case config.TracingAll:
		return awssns.TracingConfig_ACTIVE
	}
	return ""
}
