package stack_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// ingestReservedConfig is edgeConfig's HTTP API (detailed metrics, the
// alarm e-mail) with its lane at maxConcurrency 500 and 600 executions
// reserved for ingest.
func ingestReservedConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg := edgeConfig(t, map[string]any{"type": config.APITypeHTTP}, nil)
	cfg.Destinations[0].MaxConcurrency = 500
	cfg.Ingest.ReservedConcurrency = 600
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// busyDests is the lane TestIngestConcurrencyWarning adds to
// alarmedLanesConfig: it may run 500 deliveries at once.
var busyDests = []string{`{"name": "busy", "url": "https://busy.example.com/hooks", "maxConcurrency": 500}`}

// alarmWithID is the one alarm whose logical ID starts with prefix.
func alarmWithID(t *testing.T, res map[string]resource, prefix string) resource {
	t.Helper()
	var found []resource
	for id, r := range ofType(res, "AWS::CloudWatch::Alarm") {
		if strings.HasPrefix(id, prefix) && len(id) == len(prefix)+8 {
			found = append(found, r)
		}
	}
	if len(found) != 1 {
		t.Fatalf("%d alarms %s…, want 1", len(found), prefix)
	}
	return found[0]
}

// checkAnyAlarm fails unless the alarm fires on one count in a minute and
// notifies the alarm topic as it fires and clears.
func checkAnyAlarm(t *testing.T, name string, a resource, topicID string) {
	t.Helper()
	p := a.Properties
	if p["Threshold"] != 0.0 || p["ComparisonOperator"] != "GreaterThanThreshold" || p["EvaluationPeriods"] != 1.0 || p["TreatMissingData"] != "notBreaching" {
		t.Errorf("%s: threshold %v %v over %v periods (missing data %v), want > 0 over one", name, p["ComparisonOperator"], p["Threshold"], p["EvaluationPeriods"], p["TreatMissingData"])
	}
	for _, k := range []string{"AlarmActions", "OKActions"} {
		if acts := asSlice(p[k]); len(acts) != 1 || refID(acts[0]) != topicID {
			t.Errorf("%s: %s %v, want the alarm topic %s", name, k, p[k], topicID)
		}
	}
}

// dims reads a metric's dimensions as name → value (values as printed).
func dims(v any) map[string]string {
	out := map[string]string{}
	for _, d := range asSlice(v) {
		dm := d.(map[string]any)
		out[fmt.Sprint(dm["Name"])] = fmt.Sprint(dm["Value"])
	}
	return out
}

// TestIngestOutageAlarms: on either API type, each source gets an alarm on
// any 5xx of its route (API Gateway's own metric, named as each API type
// names it) and one on any 5xx ingest counted (IngestPublishFailed and
// IngestRejected under each 5xx reason the source can produce: the replay
// reasons only with replay protection); the ingest function gets one on
// any error and one on any throttle. Every one notifies the alarm topic.
//
// The REST API is testConfig's (3 destinations, alarm e-mail), the HTTP
// API ingestReservedConfig's.
func TestIngestOutageAlarms(t *testing.T) {
	for _, tt := range []struct {
		apiType string
		cfg     func(*testing.T) *config.Config
	}{
		{config.APITypeREST, func(t *testing.T) *config.Config { return testConfig(t, 3, "ops@example.com") }},
		{config.APITypeHTTP, ingestReservedConfig},
	} {
		apiType := tt.apiType
		t.Run(apiType, func(t *testing.T) {
			cfg := tt.cfg(t)
			if cfg.API.Kind() != apiType || !cfg.API.Detailed() {
				t.Fatalf("api.type %q (detailed metrics %v), want %q with detailed metrics", cfg.API.Kind(), cfg.API.Detailed(), apiType)
			}
			h, _ := synth(t, cfg)
			_, res := templateOf(t, h.Stack)
			topicID := *awscdk.Stack_Of(h.AlarmTopic).GetLogicalId(h.AlarmTopic.Node().DefaultChild().(awscdk.CfnElement))
			for _, tt := range []struct {
				source, id string
				reasons    []string
			}{
				{"stripe", "Stripe", []string{ingest.CodeSecretStoreUnavailable}},
				{"github", "Github", []string{ingest.CodeReplayCheckUnavailable, ingest.CodeRequestInFlight, ingest.CodeSecretStoreUnavailable}},
			} {
				// The route's 5xx.
				name := "Source" + tt.id + "ServerErrorsAlarm"
				a := alarmWithID(t, res, "Ingest"+name)
				checkAnyAlarm(t, name, a, topicID)
				p := a.Properties
				wantMetric, wantRoute := "5XXError", "/webhooks/"+tt.source
				if apiType == config.APITypeHTTP {
					wantMetric, wantRoute = "5xx", "POST /webhooks/"+tt.source
				}
				if d := dims(p["Dimensions"]); p["MetricName"] != wantMetric || p["Namespace"] != "AWS/ApiGateway" || p["Period"] != 60.0 || p["Statistic"] != "Sum" ||
					(d["Resource"] != wantRoute && d["Route"] != wantRoute) || d["Stage"] != stack.StageName {
					t.Errorf("%s watches %v %v %v/%v s %v, want %s on %s", name, p["Namespace"], p["MetricName"], p["Statistic"], p["Period"], d, wantMetric, wantRoute)
				}

				// Ingest's own 5xx answers, by reason.
				name = "Source" + tt.id + "IngestFailedAlarm"
				a = alarmWithID(t, res, "Ingest"+name)
				checkAnyAlarm(t, name, a, topicID)
				var reasons, expr []string
				publishFailed := false
				for _, q := range asSlice(a.Properties["Metrics"]) {
					qm := q.(map[string]any)
					if e, ok := qm["Expression"].(string); ok {
						if qm["ReturnData"] != true {
							t.Errorf("%s: expression %s does not return data", name, e)
						}
						expr = append(expr, e)
						continue
					}
					stat := qm["MetricStat"].(map[string]any)
					m := stat["Metric"].(map[string]any)
					d := dims(m["Dimensions"])
					if m["Namespace"] != metrics.Namespace || d[metrics.DimSource] != tt.source || stat["Stat"] != "Sum" || stat["Period"] != 60.0 || qm["ReturnData"] != false {
						t.Errorf("%s: metric %v %v", name, m, stat)
					}
					switch m["MetricName"] {
					case metrics.IngestPublishFailed:
						publishFailed = len(d) == 1
					case metrics.IngestRejected:
						reasons = append(reasons, d[metrics.DimReason])
					default:
						t.Errorf("%s: metric %v", name, m["MetricName"])
					}
				}
				slices.Sort(reasons)
				if !publishFailed || !slices.Equal(reasons, tt.reasons) || len(expr) != 1 || !strings.HasPrefix(expr[0], "SUM([") {
					t.Errorf("%s: IngestPublishFailed %v, IngestRejected reasons %v, expression %v; want IngestPublishFailed and %v summed", name, publishFailed, reasons, expr, tt.reasons)
				}
			}
			fnID := *awscdk.Stack_Of(h.Ingest.Function).GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
			for name, metric := range map[string]string{"FunctionErrorsAlarm": "Errors", "FunctionThrottlesAlarm": "Throttles"} {
				a := alarmWithID(t, res, "Ingest"+name)
				checkAnyAlarm(t, name, a, topicID)
				p := a.Properties
				if d := asSlice(p["Dimensions"]); p["Namespace"] != "AWS/Lambda" || p["MetricName"] != metric || p["Statistic"] != "Sum" || p["Period"] != 60.0 ||
					len(d) != 1 || refID(d[0].(map[string]any)["Value"]) != fnID {
					t.Errorf("%s watches %v %v %v on %v, want %s of the ingest function", name, p["Namespace"], p["MetricName"], p["Statistic"], p["Dimensions"], metric)
				}
			}
		})
	}
}

// TestStageServerErrorsAlarmWithoutDetailedMetrics: with
// api.detailedMetrics false the API publishes no per-route metrics, so a
// source's ServerErrorsAlarm on its route would never have data and never
// fire. Instead one alarm watches the stage's 5xx, which API Gateway
// always publishes (REST: 5XXError by ApiName and Stage; HTTP: 5xx by
// ApiId and Stage), and no alarm is left on a route's 5xx.
//
// The REST API is costOptionsConfig's, the HTTP API alarmedLanesConfig's.
func TestStageServerErrorsAlarmWithoutDetailedMetrics(t *testing.T) {
	for _, tt := range []struct {
		apiType string
		cfg     func(*testing.T) *config.Config
	}{{config.APITypeREST, costOptionsConfig}, {config.APITypeHTTP, alarmedLanesConfig}} {
		apiType := tt.apiType
		t.Run(apiType, func(t *testing.T) {
			cfg := tt.cfg(t)
			if cfg.API.Kind() != apiType || cfg.API.Detailed() || cfg.Alarms.Email == "" {
				t.Fatalf("api.type %q (detailed metrics %v, alarm e-mail %q), want %q without detailed metrics, with the alarm topic", cfg.API.Kind(), cfg.API.Detailed(), cfg.Alarms.Email, apiType)
			}
			h, _ := synth(t, cfg)
			_, res := templateOf(t, h.Stack)
			for id := range ofType(res, "AWS::CloudWatch::Alarm") {
				if strings.HasPrefix(id, "IngestSource") && strings.Contains(id, "ServerErrorsAlarm") {
					t.Errorf("%s: a source's route 5xx alarm, which has no data without detailed metrics", id)
				}
			}
			topicID := *awscdk.Stack_Of(h.AlarmTopic).GetLogicalId(h.AlarmTopic.Node().DefaultChild().(awscdk.CfnElement))
			a := alarmWithID(t, res, "IngestServerErrorsAlarm")
			checkAnyAlarm(t, "ServerErrorsAlarm", a, topicID)
			p := a.Properties
			wantMetric, apiDim, apiID := "5XXError", "ApiName", ""
			if apiType == config.APITypeHTTP {
				wantMetric, apiDim = "5xx", "ApiId"
				apiID, _ = only(t, res, "AWS::ApiGatewayV2::Api")
			}
			got := map[string]any{}
			for _, d := range asSlice(p["Dimensions"]) {
				dm := d.(map[string]any)
				got[fmt.Sprint(dm["Name"])] = dm["Value"]
			}
			want := map[string]any{"Stage": stack.StageName, apiDim: map[string]any{"Ref": apiID}}
			if apiType == config.APITypeREST {
				_, api := only(t, res, "AWS::ApiGateway::RestApi")
				want[apiDim] = api.Properties["Name"]
			}
			if diff := cmp.Diff(want, got); diff != "" || p["Namespace"] != "AWS/ApiGateway" || p["MetricName"] != wantMetric || p["Period"] != 60.0 || p["Statistic"] != "Sum" {
				t.Errorf("ServerErrorsAlarm watches %v %v %v/%v s, want %s Sum/60 s; dimensions (-want +got):\n%s", p["Namespace"], p["MetricName"], p["Statistic"], p["Period"], wantMetric, diff)
			}
		})
	}
}

// TestIngestReservedConcurrency: ingest.reservedConcurrency reserves that
// many executions for the ingest function (and no lane's function gets a
// reservation); without it nothing is reserved, so the stack deploys in
// an account without headroom.
//
// Without a reservation: httpEdgeConfig; with 600: ingestReservedConfig.
func TestIngestReservedConcurrency(t *testing.T) {
	for _, tt := range []struct {
		reserved int
		cfg      func(*testing.T) *config.Config
	}{{0, httpEdgeConfig}, {600, ingestReservedConfig}} {
		reserved := tt.reserved
		t.Run(fmt.Sprint(reserved), func(t *testing.T) {
			cfg := tt.cfg(t)
			if cfg.Ingest.ReservedConcurrency != reserved {
				t.Fatalf("ingest.reservedConcurrency %d, want %d", cfg.Ingest.ReservedConcurrency, reserved)
			}
			h, _ := synth(t, cfg)
			_, res := templateOf(t, h.Stack)
			fnID := *awscdk.Stack_Of(h.Ingest.Function).GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
			for id, fn := range ofType(res, "AWS::Lambda::Function") {
				got, set := fn.Properties["ReservedConcurrentExecutions"]
				switch {
				case id == fnID && reserved == 0 && set:
					t.Errorf("ingest reserves %v, want nothing by default", got)
				case id == fnID && reserved > 0 && got != float64(reserved):
					t.Errorf("ingest reserves %v, want %d", got, reserved)
				case id != fnID && set:
					t.Errorf("function %s reserves %v", id, got)
				}
			}
		})
	}
}

// TestIngestConcurrencyWarning: synthesis warns when nothing is reserved
// for ingest and busy lanes plus what the API admits at once exceed a
// default account's 1,000 executions (one lane at 500 beside 600 of
// bursts), and not once ingest has its reservation or the sum fits.
//
// The configurations: httpEdgeConfig (its lane at 5), alarmedLanesConfig
// (busyDests, one lane at 500) and ingestReservedConfig (its lane at 500,
// 600 reserved); each case first checks that its configuration is what
// it says.
func TestIngestConcurrencyWarning(t *testing.T) {
	for _, tt := range []struct {
		name     string
		cfg      func(*testing.T) *config.Config
		over     bool // lanes and the API's bursts exceed a default account
		reserved bool
		want     bool
	}{
		{"fits", httpEdgeConfig, false, false, false},
		{"lanes can take the pool", alarmedLanesConfig, true, false, true},
		{"ingest has its reservation", ingestReservedConfig, true, true, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg(t)
			lanes, api := cfg.LaneConcurrency(), cfg.MinReservedConcurrency()
			if over := lanes+api > config.DefaultAccountConcurrency; over != tt.over || (cfg.Ingest.ReservedConcurrency > 0) != tt.reserved {
				t.Fatalf("lanes %d + API %d over %d: %v, ingest.reservedConcurrency %d; want over %v, reserved %v",
					lanes, api, config.DefaultAccountConcurrency, over, cfg.Ingest.ReservedConcurrency, tt.over, tt.reserved)
			}
			h, _ := synth(t, cfg)
			found := assertions.Annotations_FromStack(h.Stack).FindWarning(jsii.String("*"), assertions.Match_StringLikeRegexp(jsii.String("hookfan:ingestConcurrency")))
			if got := len(*found) > 0; got != tt.want {
				t.Errorf("warned %v, want %v (%v)", got, tt.want, *found)
			}
		})
	}
}
