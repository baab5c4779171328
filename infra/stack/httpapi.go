package stack

import (
	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2integrations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// httpAccessLogFormat is the HTTP API stage's access log line: the REST
// line's fields, with the route key in place of the resource path (HTTP
// APIs have no resources and no X-Ray).
const httpAccessLogFormat = `{"requestId":"$context.requestId","requestTime":"$context.requestTime","ip":"$context.identity.sourceIp",` +
	`"userAgent":"$context.identity.userAgent","httpMethod":"$context.httpMethod","path":"$context.path",` +
	`"routeKey":"$context.routeKey","status":"$context.status","responseLength":"$context.responseLength",` +
	`"responseLatency":"$context.responseLatency","integrationStatus":"$context.integrationStatus",` +
	`"integrationLatency":"$context.integrationLatency","error":"$context.error.message","integrationError":"$context.integrationErrorMessage"}`

// HTTPIngest is the HTTP API front door (api.type "http"): a route per
// source and the catch-all POST /webhooks/{source}, each integrated with
// the ingest function (payload format 2.0), on the stage "v1".
type HTTPIngest struct {
	API   awsapigatewayv2.HttpApi
	Stage awsapigatewayv2.HttpStage
	// CatchAll is POST /webhooks/{source}; Routes are the sources' own.
	CatchAll awsapigatewayv2.HttpRoute
	Routes   map[string]awsapigatewayv2.HttpRoute
}

func newHTTPIngest(scope constructs.Construct, cfg *config.Config, fn awslambda.IFunction, accessLogs awslogs.ILogGroup) *HTTPIngest {
	h := &HTTPIngest{Routes: map[string]awsapigatewayv2.HttpRoute{}}
	h.API = awsapigatewayv2.NewHttpApi(scope, jsii.String("HttpApi"), &awsapigatewayv2.HttpApiProps{
		ApiName:                   jsii.String(*awscdk.Stack_Of(scope).StackName() + "-webhooks"),
		Description:               jsii.String("Hookfan webhook ingest: POST /webhooks/{source}"),
		CreateDefaultStage:        jsii.Bool(false),
		DisableExecuteApiEndpoint: jsii.Bool(cfg.API.HasDomain()),
	})
	// One integration and one invoke permission for every route.
	integration := awsapigatewayv2integrations.NewHttpLambdaIntegration(jsii.String("Ingest"), fn, &awsapigatewayv2integrations.HttpLambdaIntegrationProps{
		PayloadFormatVersion:   awsapigatewayv2.PayloadFormatVersion_VERSION_2_0(),
		ScopePermissionToRoute: jsii.Bool(false),
	})
	post := &[]awsapigatewayv2.HttpMethod{awsapigatewayv2.HttpMethod_POST}
	h.CatchAll = (*h.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{Path: jsii.String("/webhooks/{source}"), Methods: post, Integration: integration}))[0]
	routeSettings := map[string]any{}
	var routes []constructs.IDependable
	for _, s := range cfg.Sources {
		r := (*h.API.AddRoutes(&awsapigatewayv2.AddRoutesOptions{Path: jsii.String("/webhooks/" + s.Name), Methods: post, Integration: integration}))[0]
		h.Routes[s.Name] = r
		routes = append(routes, r)
		routeSettings["POST /webhooks/"+s.Name] = map[string]any{
			"ThrottlingRateLimit":    s.Limits.Rate(cfg.API),
			"ThrottlingBurstLimit":   s.Limits.Burst(cfg.API),
			"DetailedMetricsEnabled": cfg.API.Detailed(),
		}
	}
	h.Stage = awsapigatewayv2.NewHttpStage(scope, jsii.String("Stage"), &awsapigatewayv2.HttpStageProps{
		HttpApi:    h.API,
		StageName:  jsii.String(StageName),
		AutoDeploy: jsii.Bool(true),
		// The default route settings: the catch-all route (unknown sources).
		Throttle: &awsapigatewayv2.ThrottleSettings{
			RateLimit:  jsii.Number(cfg.API.Rate()),
			BurstLimit: jsii.Number(float64(cfg.API.Burst())),
		},
		DetailedMetricsEnabled: jsii.Bool(cfg.API.Detailed()),
	})
	stage := h.Stage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	stage.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: accessLogs.LogGroupArn(),
		Format:         jsii.String(httpAccessLogFormat),
	})
	if len(routeSettings) > 0 {
		// Route settings name routes by key; the routes must exist first.
		stage.AddPropertyOverride(jsii.String("RouteSettings"), routeSettings)
		h.Stage.Node().AddDependency(routes...)
	}

	const authReason = "Webhook providers cannot sign requests with SigV4 or present JWTs; each request is authenticated by the provider's HMAC signature over the exact body, which the ingest function verifies fail-closed. An authorizer cannot see the body, so it cannot check that signature."
	suppress(h.API, suppression{id: "AwsSolutions-APIG4", reason: authReason})
	return h
}

// URL is the stage's base URL, ending in "/".
func (h *HTTPIngest) URL() *string {
	s := awscdk.Stack_Of(h.API)
	return awscdk.Fn_Join(jsii.String(""), &[]*string{
		jsii.String("https://"), h.API.ApiId(), jsii.String(".execute-api."), s.Region(), jsii.String("."), s.UrlSuffix(), jsii.String("/" + StageName + "/"),
	})
}
