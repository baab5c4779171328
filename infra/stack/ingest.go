package stack

import (
	"errors"
	"fmt"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsdynamodb"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// IngestTimeout is the ingest function's timeout: verify, then one SNS
// publish; well inside API Gateway's 29 s integration timeout.
const IngestTimeout = 10

// StageName is the stage of either API type: URLs end in /v1/webhooks/{source}.
const StageName = "v1"

// accessLogFormat is the REST stage's access log line: JSON, one per
// request, no headers or bodies (they carry signatures).
const accessLogFormat = `{"requestId":"$context.requestId","requestTime":"$context.requestTime","ip":"$context.identity.sourceIp",` +
	`"userAgent":"$context.identity.userAgent","httpMethod":"$context.httpMethod","path":"$context.path",` +
	`"resourcePath":"$context.resourcePath","status":"$context.status","responseLength":"$context.responseLength",` +
	`"responseLatency":"$context.responseLatency","integrationStatus":"$context.integration.status",` +
	`"integrationLatency":"$context.integration.latency","error":"$context.error.message","xrayTraceId":"$context.xrayTraceId"}`

// IngestAPIProps configures the ingest API. Nil fields get defaults.
type IngestAPIProps struct {
	// Config supplies the sources, the API type and the stage, WAF and
	// domain settings (required).
	Config *config.Config
	// Topic is where accepted events are published (required).
	Topic awssns.ITopic
	// OrderedTopic is the SNS FIFO topic ingest also publishes to when
	// some destination is ordered (fifo.go); nil: none.
	OrderedTopic awssns.ITopic
	// Code is the ingest function's code (required).
	Code awslambda.Code
	// SourceSecrets maps each source to its secret (required: one per source).
	SourceSecrets map[string]awssecretsmanager.ISecret
	// Table holds the replay records of the sources with replay protection
	// (the delivery-record table, keys "replay:…"); required when a source
	// has it.
	Table awsdynamodb.ITable
	// MemoryMB is the ingest function's memory; nil: functions.ingestMemoryMB.
	MemoryMB *float64
	// AlarmAction receives the per-source alarms; nil: alarms without actions.
	AlarmAction awscloudwatch.IAlarmAction
	// Payloads is where bodies over one SNS message go; nil: none.
	Payloads *PayloadBucket
	// Archive is the event archive: with Payloads, ingest writes each
	// large body into its bucket too (shared/payload; the caller grants
	// it, Archive.GrantPayloadCopies); nil: none.
	Archive *Archive
}

// IngestAPI is the webhook entry: POST /webhooks/{source} proxied to the
// ingest function, with one route per configured source (its own
// throttling, metrics and alarms) and a catch-all route for the rest, on a
// regional REST API or an HTTP API (config api.type).
type IngestAPI struct {
	constructs.Construct
	// Type is config.APITypeREST or config.APITypeHTTP.
	Type string
	// REST API (Type rest): the API, the catch-all method and one method
	// per source.
	API           awsapigateway.RestApi
	Method        awsapigateway.Method
	SourceMethods map[string]awsapigateway.Method
	// HTTP API (Type http): the API, its stage and one route per source
	// besides the catch-all.
	HTTP *HTTPIngest
	// AccessLogs receives the stage's access log (JSON, one line per request).
	AccessLogs awslogs.LogGroup
	Function   awslambda.Function
	Role       awsiam.Role
	LogGroup   awslogs.LogGroup
	// WebACL is the WAF in front of the REST stage; nil unless api.waf.enabled.
	WebACL *WebACL
	// Domain is the custom domain; nil without api.domainName.
	Domain *CustomDomain
	// SourceAlarms are each source's alarms, by source name.
	SourceAlarms map[string]*SourceAlarms
	// ServerErrors fires on any 5xx of the stage in a minute; it stands
	// for every source's SourceAlarms.ServerErrors (then nil) when
	// api.detailedMetrics is false, and is nil otherwise.
	ServerErrors awscloudwatch.Alarm
	// FunctionErrors and FunctionThrottles fire on any error or throttle
	// of the ingest function in a minute: a crash or timeout (API Gateway
	// answers 5xx), or an account pool with no room left for it.
	FunctionErrors, FunctionThrottles awscloudwatch.Alarm
	// Throttled counts 429 answers from the access log, by route.
	Throttled awslogs.MetricFilter
	// Env is the function's environment contract; its Render is the
	// function's Environment.
	Env ingest.Env
}

// NewIngestAPI builds the API, its stage and the ingest function.
func NewIngestAPI(scope constructs.Construct, id string, props *IngestAPIProps) (*IngestAPI, error) {
	if props == nil || props.Config == nil || props.Topic == nil || props.Code == nil {
		return nil, errors.New("ingest API: Config, Topic and Code are required")
	}
	cfg := props.Config
	replayProtected := config.ReplayProtected(cfg.Sources)
	if replayProtected && props.Table == nil {
		return nil, errors.New("ingest API: a source has replay protection, so Table is required")
	}
	memory := float64(cfg.Functions.IngestMemory())
	if props.MemoryMB != nil {
		memory = *props.MemoryMB
	}
	retention, err := retentionDays(cfg.API.LogRetention())
	if err != nil {
		return nil, err
	}
	a := &IngestAPI{Construct: constructs.NewConstruct(scope, jsii.String(id)), Type: cfg.API.Kind()}
	res := ingest.Resources{TopicARN: *props.Topic.TopicArn()}
	if props.OrderedTopic != nil {
		res.OrderedTopicARN = *props.OrderedTopic.TopicArn()
	}
	if props.Payloads != nil {
		res.PayloadBucket = *props.Payloads.Bucket.BucketName()
		if props.Archive != nil {
			res.ArchiveBucket = *props.Archive.Bucket.BucketName()
		}
	}
	if replayProtected {
		res.ReplayTable = *props.Table.TableName()
	}
	a.Env = ingest.FunctionEnv(cfg, res)
	parts, err := newFunction(a.Construct, functionSpec{
		description:    "Hookfan ingest: verifies webhooks and publishes them to the fan-out topic",
		code:           props.Code,
		memoryMB:       memory,
		tracing:        ingestTracing(cfg),
		systemLogLevel: cfg.Functions.SystemLog(),
		timeout:        awscdk.Duration_Seconds(jsii.Number(IngestTimeout)),
		retention:      retention,
		env:            a.Env.Render(),
	})
	if err != nil {
		return nil, err
	}
	a.Function, a.Role, a.LogGroup = parts.Function, parts.Role, parts.LogGroup
	if r := cfg.Ingest.ReservedConcurrency; r > 0 {
		// Kept for ingest whatever the lanes draw (config.Ingest).
		a.Function.Node().DefaultChild().(awslambda.CfnFunction).SetReservedConcurrentExecutions(jsii.Number(r))
	}
	suppress(a.Function, suppression{id: "Serverless-LambdaDLQ", reason: reasonSync})

	// Least privilege: publish to the topic (with the topic key) and read
	// the configured source secrets.
	props.Topic.GrantPublish(a.Role)
	if props.OrderedTopic != nil {
		props.OrderedTopic.GrantPublish(a.Role)
	}
	suppress(a.Role, suppression{id: "AwsSolutions-IAM5", reason: "Publishing to a KMS-encrypted topic needs kms:GenerateDataKey* (GenerateDataKey and its WithoutPlaintext variant, as AWS documents for SNS publishers) on the topic's key only; the resource is that one key.", appliesTo: []string{"Action::kms:GenerateDataKey*"}})
	names := make([]string, 0, len(props.SourceSecrets))
	for n := range props.SourceSecrets {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		props.SourceSecrets[n].GrantRead(a.Role, nil)
	}
	if props.Payloads != nil {
		props.Payloads.GrantPut(a.Role)
	}
	if replayProtected {
		// Replay protection's claim, confirm and release are conditional
		// UpdateItems (a refused claim returns the record itself), and a
		// copy that names no event is looked up with a GetItem: on the
		// replay records only, every key starting with "replay:".
		a.Role.AddToPrincipalPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
			Actions:   jsii.Strings("dynamodb:GetItem", "dynamodb:UpdateItem"),
			Resources: &[]*string{props.Table.TableArn()},
			Conditions: &map[string]any{
				"ForAllValues:StringLike": map[string]any{"dynamodb:LeadingKeys": []string{replayguard.KeyPrefix + "*"}},
			},
		}))
	}

	a.AccessLogs = awslogs.NewLogGroup(a.Construct, jsii.String("AccessLogs"), &awslogs.LogGroupProps{
		Retention:     retention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	if a.Type == config.APITypeHTTP {
		a.HTTP = newHTTPIngest(a.Construct, cfg, a.Function, a.AccessLogs)
	} else {
		a.newRestAPI(cfg)
	}
	if cfg.API.WAF.Enabled {
		a.WebACL = NewWebACL(a.Construct, "WebAcl", &WebACLProps{Config: cfg, StageArn: a.API.DeploymentStage().StageArn()})
	}
	if cfg.API.HasDomain() {
		a.Domain = NewCustomDomain(a.Construct, "Domain", &CustomDomainProps{API: cfg.API, Rest: a.API, HTTP: a.HTTP})
	}
	a.addSourceAlarms(cfg, props.AlarmAction)
	a.addFunctionAlarms(props.AlarmAction)
	a.warnIngestConcurrency(cfg)
	return a, nil
}

// newRestAPI makes the regional REST API: a method per source under
// /webhooks, each throttled on its own, and the catch-all
// /webhooks/{source} under the stage default.
func (a *IngestAPI) newRestAPI(cfg *config.Config) {
	methodOptions := map[string]*awsapigateway.MethodDeploymentOptions{}
	for _, s := range cfg.Sources {
		methodOptions["/webhooks/"+s.Name+"/POST"] = &awsapigateway.MethodDeploymentOptions{
			ThrottlingRateLimit:  jsii.Number(s.Limits.Rate(cfg.API)),
			ThrottlingBurstLimit: jsii.Number(float64(s.Limits.Burst(cfg.API))),
			MetricsEnabled:       jsii.Bool(cfg.API.Detailed()),
		}
	}
	a.API = awsapigateway.NewRestApi(a.Construct, jsii.String("Api"), &awsapigateway.RestApiProps{
		// Named after the stack: the API's metrics carry the name as their
		// ApiName dimension, so two Hookfan stacks in one account keep
		// theirs apart.
		RestApiName:           jsii.String(*awscdk.Stack_Of(a.Construct).StackName() + "-webhooks"),
		Description:           jsii.String("Hookfan webhook ingest: POST /webhooks/{source}"),
		EndpointConfiguration: &awsapigateway.EndpointConfiguration{Types: &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL}},
		// With a custom domain, providers are given its URLs only.
		DisableExecuteApiEndpoint: jsii.Bool(cfg.API.HasDomain()),
		// Every body is binary to API Gateway, so the function receives it
		// base64-encoded, byte for byte: signatures are computed over the
		// exact bytes, which a text pass-through could alter.
		BinaryMediaTypes: &[]*string{jsii.String("*/*")},
		// Access logging needs the account's API Gateway CloudWatch role;
		// CDK sets it (and keeps it when the stack goes, as other APIs in the
		// account may rely on it).
		CloudWatchRole:              jsii.Bool(true),
		CloudWatchRoleRemovalPolicy: awscdk.RemovalPolicy_RETAIN,
		DeployOptions: &awsapigateway.StageOptions{
			StageName: jsii.String(StageName),
			// The stage default: the catch-all route (unknown sources) and
			// the ceiling of nothing else; each source's method has its own.
			ThrottlingRateLimit:  jsii.Number(cfg.API.Rate()),
			ThrottlingBurstLimit: jsii.Number(float64(cfg.API.Burst())),
			MethodOptions:        &methodOptions,
			MetricsEnabled:       jsii.Bool(cfg.API.Detailed()),
			TracingEnabled:       jsii.Bool(cfg.TracingMode() != config.TracingOff),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(a.AccessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat)),
		},
	})
	// The stack publishes the URLs itself (ApiUrl and one per source).
	a.API.Node().TryRemoveChild(jsii.String("Endpoint"))
	validator := a.API.AddRequestValidator(jsii.String("PathValidator"), &awsapigateway.RequestValidatorOptions{
		ValidateRequestParameters: jsii.Bool(true),
	})
	// One permission for the whole API instead of two per method: a
	// function's resource policy holds 20 KB, which two per source would
	// exhaust at a few dozen sources.
	integration := awsapigateway.NewLambdaIntegration(a.Function, &awsapigateway.LambdaIntegrationOptions{
		Proxy: jsii.Bool(true), ScopePermissionToMethod: jsii.Bool(false),
	})
	webhooks := a.API.Root().AddResource(jsii.String("webhooks"), nil)
	a.Method = webhooks.AddResource(jsii.String("{source}"), nil).AddMethod(jsii.String("POST"), integration, &awsapigateway.MethodOptions{
		RequestValidator:  validator,
		RequestParameters: &map[string]*bool{"method.request.path.source": jsii.Bool(true)},
	})
	a.SourceMethods = map[string]awsapigateway.Method{}
	for _, s := range cfg.Sources {
		// A fixed path part wins over {source}, so this source's requests
		// use this method, its throttle and its metrics.
		a.SourceMethods[s.Name] = webhooks.AddResource(jsii.String(s.Name), nil).AddMethod(jsii.String("POST"), integration, nil)
	}

	const authReason = "Webhook providers (Stripe, GitHub, Shopify, Slack, Standard Webhooks senders) cannot sign requests with SigV4 or present Cognito tokens; each request is authenticated by the provider's HMAC signature over the exact body, which the ingest function verifies fail-closed. A request authorizer cannot see the body, so it cannot check that signature."
	list := []suppression{
		{id: "AwsSolutions-APIG4", reason: authReason},
		{id: "AwsSolutions-COG4", reason: authReason},
		{id: "AwsSolutions-APIG2", reason: "A request validator requires the {source} path parameter. The body is deliberately not validated by API Gateway: it is the provider's exact bytes in several formats (JSON, form-encoded), checked by the function against the provider's signature; a body model cannot express that and must not alter it."},
		{id: "AwsSolutions-APIG6", reason: "Access logging (JSON, one line per request, with status and latencies) and metrics are enabled; execution logging would write request details to an API Gateway-created log group outside the stack with no retention."},
		{id: "AwsSolutions-IAM4", reason: "The account-level API Gateway CloudWatch role that access logging requires uses AmazonAPIGatewayPushToCloudWatchLogs, the AWS-managed policy made for exactly this service role; only apigateway.amazonaws.com can assume it.", appliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"}},
	}
	if !cfg.API.WAF.Enabled {
		list = append(list, suppression{id: "AwsSolutions-APIG3", reason: "No WAF web ACL: config api.waf.enabled is false (a web ACL costs a fixed monthly fee). Requests are authenticated by signature and every source's route is throttled on its own; setting api.waf.enabled adds a web ACL with a per-IP rate rule, AWS's common rule set and per-source IP allow-lists."})
	}
	suppress(a.API, list...)
}

// URL is the API's base URL, ending in "/": the custom domain's when one
// is configured, else the stage's.
func (a *IngestAPI) URL() *string {
	if a.Domain != nil {
		return jsii.String("https://" + a.Domain.Name + "/")
	}
	if a.HTTP != nil {
		return a.HTTP.URL()
	}
	return a.API.Url()
}

// SourceURL is the URL a provider posts to for the named source.
func (a *IngestAPI) SourceURL(source string) *string {
	return awscdk.Fn_Join(jsii.String(""), &[]*string{a.URL(), jsii.String("webhooks/" + source)})
}

// Route is the name the API's per-route metrics and the access log give a
// source's route: its resource path (REST) or its route key (HTTP).
func (a *IngestAPI) Route(source string) string {
	if a.Type == config.APITypeHTTP {
		return "POST /webhooks/" + source
	}
	return "/webhooks/" + source
}

// apiMetric is one of the API's metrics over all routes: count, 4xx, 5xx
// or latency.
func (a *IngestAPI) apiMetric(kind string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if a.HTTP != nil {
		api := a.HTTP.API
		switch kind {
		case "count":
			return api.MetricCount(opts)
		case "4xx":
			return api.MetricClientError(opts)
		case "5xx":
			return api.MetricServerError(opts)
		}
		return api.MetricLatency(opts)
	}
	switch kind {
	case "count":
		return a.API.MetricCount(opts)
	case "4xx":
		return a.API.MetricClientError(opts)
	case "5xx":
		return a.API.MetricServerError(opts)
	}
	return a.API.MetricLatency(opts)
}

// SourceMetric is one of the API's detailed metrics ("Count", "4xx",
// "5xx", "Latency") on a source's route.
func (a *IngestAPI) SourceMetric(source, name string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if a.HTTP != nil {
		return a.HTTP.API.Metric(jsii.String(name), &awscloudwatch.MetricOptions{
			Period: opts.Period, Statistic: opts.Statistic, Label: opts.Label,
			DimensionsMap: &map[string]*string{"ApiId": a.HTTP.API.ApiId(), "Stage": jsii.String(StageName), "Route": jsii.String(a.Route(source))},
		})
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String(restMetricName(name)),
		Period: opts.Period, Statistic: opts.Statistic, Label: opts.Label,
		DimensionsMap: &map[string]*string{
			"ApiName": a.API.RestApiName(), "Stage": jsii.String(StageName),
			"Resource": jsii.String(a.Route(source)), "Method": jsii.String("POST"),
		},
	})
}

// StageMetric is one of the metrics API Gateway publishes for the whole
// stage ("4xx", "5xx"; by ApiName and Stage on a REST API, ApiId and
// Stage on an HTTP API), detailed metrics or not.
func (a *IngestAPI) StageMetric(name string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	if a.HTTP != nil {
		return a.HTTP.API.Metric(jsii.String(name), &awscloudwatch.MetricOptions{
			Period: opts.Period, Statistic: opts.Statistic, Label: opts.Label,
			DimensionsMap: &map[string]*string{"ApiId": a.HTTP.API.ApiId(), "Stage": jsii.String(StageName)},
		})
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String("AWS/ApiGateway"), MetricName: jsii.String(restMetricName(name)),
		Period: opts.Period, Statistic: opts.Statistic, Label: opts.Label,
		DimensionsMap: &map[string]*string{"ApiName": a.API.RestApiName(), "Stage": jsii.String(StageName)},
	})
}

// restMetricName is a REST API's name for an HTTP API's metric: 4XXError
// and 5XXError for 4xx and 5xx, the others the same.
func restMetricName(name string) string {
	if n, ok := map[string]string{"4xx": "4XXError", "5xx": "5XXError"}[name]; ok {
		return n
	}
	return name
}

// ThrottledMetric counts a source's 429 answers (read from the access log).
func (a *IngestAPI) ThrottledMetric(source string, opts *awscloudwatch.MetricOptions) awscloudwatch.Metric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(MetricAPIThrottled),
		Period: opts.Period, Statistic: opts.Statistic, Label: opts.Label,
		DimensionsMap: &map[string]*string{dimRoute: jsii.String(a.Route(source))},
	})
}

// addFunctionAlarms adds the alarms on the ingest function itself: any
// error (a crash or a timeout; ingest answers every failure it sees as an
// HTTP answer, so an error is one it could not) and any throttle.
func (a *IngestAPI) addFunctionAlarms(action awscloudwatch.IAlarmAction) {
	opts := &awscloudwatch.MetricOptions{Period: awscdk.Duration_Minutes(jsii.Number(1)), Statistic: jsii.String("Sum")}
	a.FunctionErrors = newAlarm(a.Construct, "FunctionErrorsAlarm", a.Function.MetricErrors(opts), 0,
		"Hookfan ingest: the function failed (crashed or timed out); API Gateway answered 5xx and events were not accepted. See the runbook FunctionErrorsAlarm in docs/operations.md.", action)
	a.FunctionThrottles = newAlarm(a.Construct, "FunctionThrottlesAlarm", a.Function.MetricThrottles(opts), 0,
		"Hookfan ingest: the function was throttled (the account's concurrency, or ingest.reservedConcurrency, is used up); API Gateway answered 5xx. See the runbook FunctionThrottlesAlarm in docs/operations.md.", action)
}

// warnIngestConcurrency warns at synthesis when nothing is reserved for
// ingest and busy lanes with what the API admits at once could use up a
// default account's concurrency: ingest would then be throttled, answered
// 5xx, which GitHub never retries.
func (a *IngestAPI) warnIngestConcurrency(cfg *config.Config) {
	lanes, api := cfg.LaneConcurrency(), cfg.MinReservedConcurrency()
	if cfg.Ingest.ReservedConcurrency > 0 || lanes+api <= config.DefaultAccountConcurrency {
		return
	}
	awscdk.Annotations_Of(a.Function).AddWarningV2(jsii.String("hookfan:ingestConcurrency"), jsii.String(fmt.Sprintf(
		"the lanes can run %d deliveries at once and the API admit %d requests at once, more than a default account's %d concurrent Lambda executions: busy lanes could starve ingest (5xx answers, which GitHub never retries). Set ingest.reservedConcurrency (at least %d), lower destinations' maxConcurrency, or raise the account's Lambda quota",
		lanes, api, config.DefaultAccountConcurrency, api)), nil)
}

func ingestTracing(cfg *config.Config) awslambda.Tracing {
	t, _ := tracingModes(cfg.TracingMode())
	return t
}
