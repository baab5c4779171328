package stack

import (
	"errors"
	"slices"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigateway"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssecretsmanager"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// IngestTimeout is the ingest function's timeout: verify, then one SNS
// publish; well inside API Gateway's 29 s integration timeout.
const IngestTimeout = 10

// accessLogFormat is the stage's access log line: JSON, one per request, no
// headers or bodies (they carry signatures).
const accessLogFormat = `{"requestId":"$context.requestId","requestTime":"$context.requestTime","ip":"$context.identity.sourceIp",` +
	`"userAgent":"$context.identity.userAgent","httpMethod":"$context.httpMethod","path":"$context.path",` +
	`"resourcePath":"$context.resourcePath","status":"$context.status","responseLength":"$context.responseLength",` +
	`"responseLatency":"$context.responseLatency","integrationStatus":"$context.integration.status",` +
	`"integrationLatency":"$context.integration.latency","error":"$context.error.message","xrayTraceId":"$context.xrayTraceId"}`

// IngestAPIProps configures the ingest API. Nil fields get defaults.
type IngestAPIProps struct {
	// Config supplies the sources and the stage settings (required).
	Config *config.Config
	// Topic is where accepted events are published (required).
	Topic awssns.ITopic
	// Code is the ingest function's code (required).
	Code awslambda.Code
	// SourceSecrets maps each source to its secret (required: one per source).
	SourceSecrets map[string]awssecretsmanager.ISecret
	// MemoryMB is the ingest function's memory; nil: DefaultMemoryMB.
	MemoryMB *float64
}

// IngestAPI is the webhook entry: a regional REST API with
// POST /webhooks/{source} proxied to the ingest function.
type IngestAPI struct {
	constructs.Construct
	API        awsapigateway.RestApi
	Method     awsapigateway.Method
	AccessLogs awslogs.LogGroup
	Function   awslambda.Function
	Role       awsiam.Role
	LogGroup   awslogs.LogGroup
}

// NewIngestAPI builds the API, its stage and the ingest function.
func NewIngestAPI(scope constructs.Construct, id string, props *IngestAPIProps) (*IngestAPI, error) {
	if props == nil || props.Config == nil || props.Topic == nil || props.Code == nil {
		return nil, errors.New("ingest API: Config, Topic and Code are required")
	}
	cfg := props.Config
	memory := DefaultMemoryMB * 1.0
	if props.MemoryMB != nil {
		memory = *props.MemoryMB
	}
	retention, err := retentionDays(cfg.API.LogRetention())
	if err != nil {
		return nil, err
	}
	a := &IngestAPI{Construct: constructs.NewConstruct(scope, jsii.String(id))}

	parts, err := newFunction(a.Construct, functionSpec{
		description: "Hookfan ingest: verifies webhooks and publishes them to the fan-out topic",
		code:        props.Code,
		memoryMB:    memory,
		metricsSink: cfg.Metrics.SinkName(),
		timeout:     awscdk.Duration_Seconds(jsii.Number(IngestTimeout)),
		retention:   retention,
		env: map[string]string{
			config.EnvSources:     config.EncodeSources(cfg.Sources),
			config.EnvTopicARN:    *props.Topic.TopicArn(),
			config.EnvMetricsSink: cfg.Metrics.SinkName(),
		},
	})
	if err != nil {
		return nil, err
	}
	a.Function, a.Role, a.LogGroup = parts.Function, parts.Role, parts.LogGroup
	suppress(a.Function, suppression{id: "Serverless-LambdaDLQ", reason: reasonSync})

	// Least privilege: publish to the topic (with the topic key) and read
	// the configured source secrets.
	props.Topic.GrantPublish(a.Role)
	suppress(a.Role, suppression{id: "AwsSolutions-IAM5", reason: "Publishing to a KMS-encrypted topic needs kms:GenerateDataKey* (GenerateDataKey and its WithoutPlaintext variant, as AWS documents for SNS publishers) on the topic's key only; the resource is that one key.", appliesTo: []string{"Action::kms:GenerateDataKey*"}})
	names := make([]string, 0, len(props.SourceSecrets))
	for n := range props.SourceSecrets {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		props.SourceSecrets[n].GrantRead(a.Role, nil)
	}

	a.AccessLogs = awslogs.NewLogGroup(a.Construct, jsii.String("AccessLogs"), &awslogs.LogGroupProps{
		Retention:     retention,
		RemovalPolicy: awscdk.RemovalPolicy_RETAIN,
	})
	a.API = awsapigateway.NewRestApi(a.Construct, jsii.String("Api"), &awsapigateway.RestApiProps{
		Description:           jsii.String("Hookfan webhook ingest: POST /webhooks/{source}"),
		EndpointConfiguration: &awsapigateway.EndpointConfiguration{Types: &[]awsapigateway.EndpointType{awsapigateway.EndpointType_REGIONAL}},
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
			StageName:            jsii.String("v1"),
			ThrottlingRateLimit:  jsii.Number(cfg.API.Rate()),
			ThrottlingBurstLimit: jsii.Number(float64(cfg.API.Burst())),
			MetricsEnabled:       jsii.Bool(true),
			TracingEnabled:       jsii.Bool(true),
			AccessLogDestination: awsapigateway.NewLogGroupLogDestination(a.AccessLogs),
			AccessLogFormat:      awsapigateway.AccessLogFormat_Custom(jsii.String(accessLogFormat)),
		},
	})
	// The stack publishes the URLs itself (ApiUrl and one per source).
	a.API.Node().TryRemoveChild(jsii.String("Endpoint"))
	validator := a.API.AddRequestValidator(jsii.String("PathValidator"), &awsapigateway.RequestValidatorOptions{
		ValidateRequestParameters: jsii.Bool(true),
	})
	a.Method = a.API.Root().AddResource(jsii.String("webhooks"), nil).AddResource(jsii.String("{source}"), nil).AddMethod(
		jsii.String("POST"),
		awsapigateway.NewLambdaIntegration(a.Function, &awsapigateway.LambdaIntegrationOptions{Proxy: jsii.Bool(true)}),
		&awsapigateway.MethodOptions{
			RequestValidator:  validator,
			RequestParameters: &map[string]*bool{"method.request.path.source": jsii.Bool(true)},
		},
	)

	const authReason = "Webhook providers (Stripe, GitHub, Shopify, Slack, Standard Webhooks senders) cannot sign requests with SigV4 or present Cognito tokens; each request is authenticated by the provider's HMAC signature over the exact body, which the ingest function verifies fail-closed. A request authorizer cannot see the body, so it cannot check that signature."
	suppress(a.API,
		suppression{id: "AwsSolutions-APIG4", reason: authReason},
		suppression{id: "AwsSolutions-COG4", reason: authReason},
		suppression{id: "AwsSolutions-APIG2", reason: "A request validator requires the {source} path parameter. The body is deliberately not validated by API Gateway: it is the provider's exact bytes in several formats (JSON, form-encoded), checked by the function against the provider's signature; a body model cannot express that and must not alter it."},
		suppression{id: "AwsSolutions-APIG3", reason: "No WAF web ACL by default: requests are authenticated by signature and the stage is throttled; a web ACL (for example IP allow lists of a provider) can be associated with the stage without changing this stack."},
		suppression{id: "AwsSolutions-APIG6", reason: "Access logging (JSON, one line per request, with status and latencies) and metrics are enabled; execution logging would write request details to an API Gateway-created log group outside the stack with no retention."},
		suppression{id: "AwsSolutions-IAM4", reason: "The account-level API Gateway CloudWatch role that access logging requires uses AmazonAPIGatewayPushToCloudWatchLogs, the AWS-managed policy made for exactly this service role; only apigateway.amazonaws.com can assume it.", appliesTo: []string{"Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs"}},
	)
	return a, nil
}

// SourceURL is the URL a provider posts to for the named source.
func (a *IngestAPI) SourceURL(source string) *string {
	return a.API.UrlForPath(jsii.String("/webhooks/" + source))
}
