package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
)

// edgeConfig is testConfig(1 destination) with the given api section and
// limits on the github source.
func edgeConfig(t *testing.T, api map[string]any, githubLimits map[string]any) *config.Config {
	t.Helper()
	doc := map[string]any{
		"sources": []any{
			map[string]any{"name": "stripe", "verify": map[string]any{"kind": "stripe", "secretName": "hookfan/sources/stripe"}},
			map[string]any{"name": "github", "verify": map[string]any{"kind": "github", "secretName": "hookfan/sources/github"}, "limits": githubLimits},
		},
		"destinations": []any{map[string]any{"name": "orders", "url": "https://orders.example.com/hooks"}},
		"api":          api,
		"alarms":       map[string]any{"email": "ops@example.com"},
	}
	data, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(data)
	if err != nil {
		t.Fatalf("edge config: %v", err)
	}
	return cfg
}

// outputsOf returns a template's outputs by logical ID.
func outputsOf(t *testing.T, s awscdk.Stack) map[string]any {
	t.Helper()
	tmpl := awscdkTemplate(t, s)
	out, _ := tmpl["Outputs"].(map[string]any)
	return out
}

func awscdkTemplate(t *testing.T, s awscdk.Stack) map[string]any {
	t.Helper()
	tmpl, _ := templateOf(t, s)
	raw, err := json.Marshal(*tmpl.ToJSON())
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func outputValue(outputs map[string]any, id string) string {
	o, _ := outputs[id].(map[string]any)
	if o == nil {
		return ""
	}
	if s, ok := o["Value"].(string); ok {
		return s
	}
	b, _ := json.Marshal(o["Value"])
	return string(b)
}

// sourceAlarms returns the alarms on the API's and the throttle filter's
// metrics, by metric name and the route dimension's value.
func sourceAlarms(res map[string]resource) map[string]resource {
	out := map[string]resource{}
	for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
		p := a.Properties
		route := ""
		for _, d := range asSlice(p["Dimensions"]) {
			dm := d.(map[string]any)
			if dm["Name"] == "Resource" || dm["Name"] == "Route" {
				route = fmt.Sprint(dm["Value"])
			}
		}
		if route != "" {
			out[fmt.Sprint(p["MetricName"])+" "+route] = a
		}
	}
	return out
}

// TestRestEdge: a REST API with the WAF (a per-source allow-list of both
// address families), a custom domain in a hosted zone (the certificate
// created and DNS-validated), per-source limits and alarms.
func TestRestEdge(t *testing.T) {
	cfg := edgeConfig(t,
		map[string]any{"type": "rest", "rateLimit": 40, "burstLimit": 80, "waf": map[string]any{"enabled": true, "rateLimit": 900},
			"domainName": "hooks.example.com", "hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"},
		map[string]any{"rateLimit": 5, "burstLimit": 10, "clientErrorAlarm": 7, "allowedIps": []string{"192.30.252.0/22", "140.82.112.0/20", "2a0a:a440::/29"}})
	h, _ := synth(t, cfg)
	_, res := templateOf(t, h.Stack)

	// The API: execute-api endpoint off (providers get the domain's URLs),
	// a method per source and the catch-all, one invoke permission.
	_, api := only(t, res, "AWS::ApiGateway::RestApi")
	if api.Properties["DisableExecuteApiEndpoint"] != true || api.Properties["Name"] != "Hookfan-webhooks" {
		t.Errorf("REST API %v, want the execute-api endpoint disabled and the stack's name", api.Properties)
	}
	var parts []string
	for _, r := range ofType(res, "AWS::ApiGateway::Resource") {
		parts = append(parts, fmt.Sprint(r.Properties["PathPart"]))
	}
	slices.Sort(parts)
	if diff := cmp.Diff([]string{"github", "stripe", "webhooks", "{source}"}, parts); diff != "" {
		t.Errorf("API resources (-want +got):\n%s", diff)
	}
	if n := len(ofType(res, "AWS::ApiGateway::Method")); n != 3 {
		t.Errorf("got %d methods, want the catch-all and one per source", n)
	}
	_, perm := only(t, res, "AWS::Lambda::Permission")
	if arn, _ := json.Marshal(perm.Properties["SourceArn"]); !strings.Contains(string(arn), "/*/*/*") {
		t.Errorf("invoke permission on %s, want the whole API (one permission for every method)", arn)
	}

	// The WAF: allow-list, per-IP rate rule skipped by allow-listed
	// addresses, the common rules with the body rules counting.
	_, acl := only(t, res, "AWS::WAFv2::WebACL")
	if acl.Properties["Scope"] != "REGIONAL" || fmt.Sprint(acl.Properties["DefaultAction"]) != "map[Allow:map[]]" {
		t.Errorf("web ACL scope %v default %v", acl.Properties["Scope"], acl.Properties["DefaultAction"])
	}
	rules := map[string]map[string]any{}
	var order []string
	for _, r := range asSlice(acl.Properties["Rules"]) {
		rm := r.(map[string]any)
		rules[rm["Name"].(string)] = rm
		order = append(order, rm["Name"].(string))
	}
	if diff := cmp.Diff([]string{"AllowList-github", "RatePerIP", "AWSManagedRulesCommonRuleSet"}, order); diff != "" {
		t.Errorf("rules in priority order (-want +got):\n%s", diff)
	}
	sets := ofType(res, "AWS::WAFv2::IPSet")
	got := map[string][]string{}
	for id, s := range sets {
		got[s.Properties["IPAddressVersion"].(string)] = anyStrings(s.Properties["Addresses"])
		if !strings.Contains(fmt.Sprint(rules["AllowList-github"]["Statement"]), id) || !strings.Contains(fmt.Sprint(rules["RatePerIP"]["Statement"]), id) {
			t.Errorf("IP set %s is not in the allow-list rule and the rate rule's scope-down", id)
		}
	}
	if diff := cmp.Diff(map[string][]string{"IPV4": {"140.82.112.0/20", "192.30.252.0/22"}, "IPV6": {"2a0a:a440::/29"}}, got); diff != "" {
		t.Errorf("github's IP sets (-want +got):\n%s", diff)
	}
	allow := fmt.Sprint(rules["AllowList-github"])
	for _, want := range []string{"Block", "NotStatement", "OrStatement", "/webhooks/github/?$", "URL_DECODE", "NORMALIZE_PATH", "UriPath"} {
		if !strings.Contains(allow, want) {
			t.Errorf("allow-list rule lacks %s: %s", want, allow)
		}
	}
	rate := rules["RatePerIP"]["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
	if num(rate["Limit"]) != 900 || rate["AggregateKeyType"] != "IP" || num(rate["EvaluationWindowSec"]) != 300 || rate["ScopeDownStatement"] == nil {
		t.Errorf("rate rule %v, want 900 per IP in 300 s, allow-listed addresses scoped out", rate)
	}
	managed := rules["AWSManagedRulesCommonRuleSet"]
	var counted []string
	for _, o := range asSlice(managed["Statement"].(map[string]any)["ManagedRuleGroupStatement"].(map[string]any)["RuleActionOverrides"]) {
		om := o.(map[string]any)
		if fmt.Sprint(om["ActionToUse"]) == "map[Count:map[]]" {
			counted = append(counted, om["Name"].(string))
		}
	}
	if diff := cmp.Diff(stack.CountedCommonRules, counted); diff != "" || !slices.Contains(counted, "SizeRestrictions_BODY") {
		t.Errorf("common rules set to count (-want +got):\n%s", diff)
	}
	_, assoc := only(t, res, "AWS::WAFv2::WebACLAssociation")
	stageID, _ := only(t, res, "AWS::ApiGateway::Stage")
	if arn, _ := json.Marshal(assoc.Properties["ResourceArn"]); !strings.Contains(string(arn), stageID) {
		t.Errorf("web ACL associated with %s, want the stage %s", arn, stageID)
	}
	if md, _ := json.Marshal(api); strings.Contains(string(md), "AwsSolutions-APIG3") {
		t.Error("the APIG3 (no WAF) suppression is on the API although the WAF is enabled")
	}

	// The domain: a DNS-validated certificate, a regional domain mapped at
	// its root to the stage, an alias record; the outputs on the domain.
	_, cert := only(t, res, "AWS::CertificateManager::Certificate")
	if cert.Properties["DomainName"] != "hooks.example.com" || cert.Properties["ValidationMethod"] != "DNS" || cert.DeletionPolicy != "Retain" ||
		!strings.Contains(fmt.Sprint(cert.Properties["DomainValidationOptions"]), "Z0123456789ABCDEFGHIJ") {
		t.Errorf("certificate %v (deletion %s), want DNS validation in the zone, retained", cert.Properties, cert.DeletionPolicy)
	}
	_, dn := only(t, res, "AWS::ApiGateway::DomainName")
	if dn.Properties["DomainName"] != "hooks.example.com" || fmt.Sprint(dn.Properties["EndpointConfiguration"]) != "map[Types:[REGIONAL]]" || dn.Properties["SecurityPolicy"] != "TLS_1_2" {
		t.Errorf("domain %v", dn.Properties)
	}
	_, bpm := only(t, res, "AWS::ApiGateway::BasePathMapping")
	if bpm.Properties["BasePath"] != nil || refID(bpm.Properties["Stage"]) != stageID {
		t.Errorf("base path mapping %v, want the root mapped to the stage", bpm.Properties)
	}
	_, record := only(t, res, "AWS::Route53::RecordSet")
	if record.Properties["Type"] != "A" || record.Properties["HostedZoneId"] != "Z0123456789ABCDEFGHIJ" || record.Properties["AliasTarget"] == nil {
		t.Errorf("record %v, want an A alias in the zone", record.Properties)
	}
	outputs := outputsOf(t, h.Stack)
	if got := outputValue(outputs, "SourceGithubUrl"); got != "https://hooks.example.com/webhooks/github" {
		t.Errorf("SourceGithubUrl = %s", got)
	}
	if got := outputValue(outputs, "ApiUrl"); got != "https://hooks.example.com/" {
		t.Errorf("ApiUrl = %s", got)
	}
	if _, ok := outputs["ApiDomainTarget"]; ok {
		t.Error("ApiDomainTarget output although the stack manages the record")
	}

	// Alarms per source: 4xx over the configured count in five minutes,
	// any 429 in a minute (from the access log's metric filter).
	alarms := sourceAlarms(res)
	for _, tt := range []struct {
		key       string
		threshold float64
		period    float64
	}{
		{"4XXError /webhooks/github", 7, 300}, {"4XXError /webhooks/stripe", config.DefaultClientErrorAlarm, 300},
		{stack.MetricAPIThrottled + " /webhooks/github", 0, 60}, {stack.MetricAPIThrottled + " /webhooks/stripe", 0, 60},
	} {
		a, ok := alarms[tt.key]
		if !ok {
			t.Errorf("no alarm on %s (have %v)", tt.key, slices.Collect(mapsKeys(alarms)))
			continue
		}
		p := a.Properties
		if num(p["Threshold"]) != tt.threshold || num(p["Period"]) != tt.period || p["Statistic"] != "Sum" || anyLen(p["AlarmActions"]) != 1 {
			t.Errorf("%s: threshold %v period %v statistic %v actions %v", tt.key, p["Threshold"], p["Period"], p["Statistic"], p["AlarmActions"])
		}
	}
	_, filter := only(t, res, "AWS::Logs::MetricFilter")
	tr := asSlice(filter.Properties["MetricTransformations"])[0].(map[string]any)
	if filter.Properties["FilterPattern"] != `{ $.status = "429" }` || tr["MetricName"] != stack.MetricAPIThrottled || !strings.Contains(fmt.Sprint(tr["Dimensions"]), "$.resourcePath") {
		t.Errorf("metric filter %v", filter.Properties)
	}
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// httpEdgeConfig is TestHTTPEdge's: an HTTP API with its own limits on a
// custom domain with an imported certificate, no source with replay
// protection, and its lane at maxConcurrency 5 (TestIngestConcurrencyWarning
// and TestIngestReservedConcurrency read it too).
func httpEdgeConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := edgeConfig(t,
		map[string]any{"type": "http", "rateLimit": 40, "burstLimit": 80, "logRetentionDays": 14,
			"domainName": "hooks.example.com", "certificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/0c1f2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f"},
		map[string]any{"rateLimit": 5, "burstLimit": 10})
	// Replay protection turned off for the one source that has it: ingest
	// gets neither the table nor a grant on it (TestBase checks them on).
	off := false
	cfg.Sources[1].ReplayProtection.Enabled = &off
	cfg.Destinations[0].MaxConcurrency = 5
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestHTTPEdge: an HTTP API (payload 2.0, a route per source with its own
// throttle, access logs) on a custom domain with an imported certificate
// and no hosted zone.
func TestHTTPEdge(t *testing.T) {
	cfg := httpEdgeConfig(t)
	h, _ := synth(t, cfg)
	_, res := templateOf(t, h.Stack)
	ingestFn := res[*awscdk.Stack_Of(h.Ingest.Function).GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))]
	if env := fmt.Sprint(ingestFn.Properties["Environment"]); strings.Contains(env, ingest.EnvReplayTable) {
		t.Errorf("ingest environment %s names a replay table, with no source protected", env)
	}
	for _, pol := range ofType(res, "AWS::IAM::Policy") {
		if refs := fmt.Sprint(pol.Properties["Roles"]); strings.Contains(refs, refID(ingestFn.Properties["Role"])) && strings.Contains(fmt.Sprint(pol.Properties["PolicyDocument"]), "dynamodb:") {
			t.Errorf("ingest may use DynamoDB with no source protected: %v", pol.Properties["PolicyDocument"])
		}
	}

	for _, typ := range []string{"AWS::ApiGateway::RestApi", "AWS::WAFv2::WebACL", "AWS::Route53::RecordSet", "AWS::CertificateManager::Certificate"} {
		if n := len(ofType(res, typ)); n != 0 {
			t.Errorf("%d %s in an HTTP API stack without a zone", n, typ)
		}
	}
	_, api := only(t, res, "AWS::ApiGatewayV2::Api")
	if api.Properties["ProtocolType"] != "HTTP" || api.Properties["DisableExecuteApiEndpoint"] != true {
		t.Errorf("HTTP API %v", api.Properties)
	}
	var keys []string
	for _, r := range ofType(res, "AWS::ApiGatewayV2::Route") {
		keys = append(keys, fmt.Sprint(r.Properties["RouteKey"]))
	}
	slices.Sort(keys)
	if diff := cmp.Diff([]string{"POST /webhooks/github", "POST /webhooks/stripe", "POST /webhooks/{source}"}, keys); diff != "" {
		t.Errorf("routes (-want +got):\n%s", diff)
	}
	_, integ := only(t, res, "AWS::ApiGatewayV2::Integration")
	if integ.Properties["IntegrationType"] != "AWS_PROXY" || integ.Properties["PayloadFormatVersion"] != "2.0" {
		t.Errorf("integration %v, want a Lambda proxy with payload 2.0", integ.Properties)
	}
	only(t, res, "AWS::Lambda::Permission")

	stageID, stage := only(t, res, "AWS::ApiGatewayV2::Stage")
	p := stage.Properties
	if p["StageName"] != stack.StageName || p["AutoDeploy"] != true {
		t.Errorf("stage %v", p)
	}
	def := p["DefaultRouteSettings"].(map[string]any)
	if num(def["ThrottlingRateLimit"]) != 40 || num(def["ThrottlingBurstLimit"]) != 80 || def["DetailedMetricsEnabled"] != true {
		t.Errorf("default route settings %v, want the stage default 40/80 and detailed metrics", def)
	}
	want := map[string]any{
		"POST /webhooks/github": map[string]any{"ThrottlingRateLimit": 5.0, "ThrottlingBurstLimit": 10.0, "DetailedMetricsEnabled": true},
		"POST /webhooks/stripe": map[string]any{"ThrottlingRateLimit": 40.0, "ThrottlingBurstLimit": 80.0, "DetailedMetricsEnabled": true},
	}
	if diff := cmp.Diff(want, p["RouteSettings"]); diff != "" {
		t.Errorf("route settings (-want +got):\n%s", diff)
	}
	als := p["AccessLogSettings"].(map[string]any)
	var format map[string]any
	if err := json.Unmarshal([]byte(fmt.Sprint(als["Format"])), &format); err != nil || format["routeKey"] != "$context.routeKey" || refID(als["DestinationArn"]) == "" {
		t.Errorf("access log settings %v: %v", als, err)
	}
	tmpl := awscdkTemplate(t, h.Stack)
	depends := fmt.Sprint(tmpl["Resources"].(map[string]any)[stageID].(map[string]any)["DependsOn"])
	for id, r := range ofType(res, "AWS::ApiGatewayV2::Route") {
		if r.Properties["RouteKey"] != "POST /webhooks/{source}" && !strings.Contains(depends, id) {
			t.Errorf("stage does not wait for route %s (DependsOn %s): its route settings name it", id, depends)
		}
	}

	_, dn := only(t, res, "AWS::ApiGatewayV2::DomainName")
	if dn.Properties["DomainName"] != "hooks.example.com" || !strings.Contains(fmt.Sprint(dn.Properties["DomainNameConfigurations"]), "certificate/0c1f2d3e") {
		t.Errorf("domain %v", dn.Properties)
	}
	mappingID, mapping := only(t, res, "AWS::ApiGatewayV2::ApiMapping")
	mappingDeps := fmt.Sprint(tmpl["Resources"].(map[string]any)[mappingID].(map[string]any)["DependsOn"])
	if mapping.Properties["Stage"] != stack.StageName || !strings.Contains(mappingDeps, stageID) {
		t.Errorf("api mapping %v (DependsOn %s), want the stage, created after it", mapping.Properties, mappingDeps)
	}
	outputs := outputsOf(t, h.Stack)
	if got := outputValue(outputs, "SourceStripeUrl"); got != "https://hooks.example.com/webhooks/stripe" {
		t.Errorf("SourceStripeUrl = %s", got)
	}
	if got := outputValue(outputs, "ApiDomainTarget"); !strings.Contains(got, "RegionalDomainName") {
		t.Errorf("ApiDomainTarget = %s, want the domain's regional name (for the CNAME)", got)
	}

	alarms := sourceAlarms(res)
	for _, key := range []string{"4xx POST /webhooks/github", "4xx POST /webhooks/stripe", stack.MetricAPIThrottled + " POST /webhooks/github"} {
		if _, ok := alarms[key]; !ok {
			t.Errorf("no alarm on %s (have %v)", key, slices.Collect(mapsKeys(alarms)))
		}
	}
	_, filter := only(t, res, "AWS::Logs::MetricFilter")
	if !strings.Contains(fmt.Sprint(filter.Properties["MetricTransformations"]), "$.routeKey") {
		t.Errorf("metric filter %v, want the route key as dimension", filter.Properties)
	}
	fnID := *awscdk.Stack_Of(h.Ingest.Function).GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
	env := res[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
	if env[ingest.EnvAPIType] != config.APITypeHTTP {
		t.Errorf("%s = %v, want http (the function reads payload 2.0)", ingest.EnvAPIType, env[ingest.EnvAPIType])
	}
}

// TestStackRefusesWhatTheAPICannotServe: a configuration built in code
// gets the checks a parsed one gets.
func TestStackRefusesWhatTheAPICannotServe(t *testing.T) {
	cfg := edgeConfig(t, map[string]any{}, nil)
	cfg.API.Type = config.APITypeHTTP
	cfg.API.WAF.Enabled = true
	cfg.Sources[1].Limits.AllowedIPs = []string{"10.0.0.1/8"}
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: flagsContext(t)})
	_, err := stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: builder})
	for _, want := range []string{`api.waf.enabled: true with api.type "http"`, `sources[1].limits.allowedIps[0]: "10.0.0.1/8" has host bits set; use 10.0.0.0/8`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want an error with %q", err, want)
		}
	}
}

// TestStackRefusesATransformThatDoesNotCompile: the jq check lives outside
// shared/config (ingest must not link gojq), and synthesis still refuses a
// transform that does not compile, naming its field.
func TestStackRefusesATransformThatDoesNotCompile(t *testing.T) {
	cfg := edgeConfig(t, map[string]any{}, nil)
	cfg.Destinations[0].Transform = "{text: .a | nosuch}"
	app := awscdk.NewApp(&awscdk.AppProps{Outdir: jsii.String(t.TempDir()), Context: flagsContext(t)})
	_, err := stack.New(app, "Hookfan", &stack.Props{Config: cfg, Builder: builder})
	want := `destinations[0].transform: "{text: .a | nosuch}" does not compile: function not defined: nosuch/0`
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want an error with %q", err, want)
	}
}
