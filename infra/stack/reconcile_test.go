package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/reconcilejob"
)

// reconcileConfig reconciles a Stripe source every 15 minutes and a
// GitHub source every hour; a Shopify source is not reconciled. One
// destination takes everything, one Stripe only, one GitHub only, and a
// large-body Stripe source puts the payload bucket and the archive in.
// Three Shopify-only lanes (a lane that pauses, one with an imported
// signing secret, one with a transform and SigV4), the HTTP API, the
// sink named and dedupe.recordDays 20 make it the configuration that uses
// every variable of the functions' environments
// (TestFunctionEnvironmentIsTheContract).
func reconcileConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{
	  "sources": [
	    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}, "maxBodyBytes": 1000000,
	     "reconcile": {"every": "15m", "lookback": "72h", "secretName": "hookfan/reconcile/stripe"}},
	    {"name": "github", "verify": {"kind": "github", "secretName": "hookfan/sources/github"},
	     "reconcile": {"every": "1h", "secretName": "arn:aws:secretsmanager:us-east-1:123456789012:secret:gh-token-AbCdEf", "hook": {"owner": "acme", "repo": "app", "id": 42}}},
	    {"name": "shop", "verify": {"kind": "shopify", "secretName": "hookfan/sources/shop"}}
	  ],
	  "destinations": [
	    {"name": "everything", "url": "https://all.example.com/hooks"},
	    {"name": "payments", "url": "https://pay.example.com/hooks", "filter": {"sources": ["stripe"]}},
	    {"name": "code", "url": "https://code.example.com/hooks", "filter": {"sources": ["github"]}},
	    {"name": "pauses", "url": "https://a.example.com/hooks", "filter": {"sources": ["shop"]},
	     "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"}},
	    {"name": "plain", "url": "https://b.example.com/hooks", "filter": {"sources": ["shop"]}, "secretName": "hookfan/destinations/plain"},
	    {"name": "shaped", "url": "https://c.example.com/hooks", "filter": {"sources": ["shop"]}, "transform": "{text: .type}",
	     "auth": {"sigv4": {"service": "lambda", "region": "eu-west-1"}}}
	  ],
	  "alarms": {"email": "ops@example.com"},
	  "api": {"type": "http"},
	  "metrics": {"sink": "emf"},
	  "dedupe": {"recordDays": 20}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestReconcilers: each reconciled source gets one arm64 function with
// its own role and log group, run by an EventBridge Scheduler schedule at
// its every with its own input and no retries, allowed only what its run
// calls, and four alarms; a source without reconcile gets none.
func TestReconcilers(t *testing.T) {
	cfg := reconcileConfig(t)
	h, _ := synth(t, cfg)
	_, res := templateOf(t, h.Stack)
	if len(h.Reconcilers) != 2 {
		t.Fatalf("%d reconcilers, want stripe's and github's", len(h.Reconcilers))
	}
	_, db := only(t, res, "AWS::CloudWatch::Dashboard")
	body := joined(db.Properties["DashboardBody"])
	for _, m := range []string{metrics.ReconcileListed, metrics.ReconcileMissing, metrics.ReconcileBroughtIn, metrics.ReconcileStopped} {
		if !strings.Contains(body, `MetricName=\"`+m+`\"`) {
			t.Errorf("the overview does not search %s", m)
		}
	}
	logical := func(e awscdk.CfnElement) string { return *h.Stack.GetLogicalId(e) }
	schedules := ofType(res, "AWS::Scheduler::Schedule")
	if len(schedules) != 2 {
		t.Fatalf("%d schedules, want 2", len(schedules))
	}
	for _, r := range h.Reconcilers {
		name, every := r.Source.Name, r.Source.Reconcile.Interval()
		t.Run(name, func(t *testing.T) {
			fnID := logical(r.Function.Node().DefaultChild().(awscdk.CfnElement))
			fn := res[fnID]
			if fn.Properties["Runtime"] != "provided.al2023" || fmt.Sprint(fn.Properties["Architectures"]) != "[arm64]" || fn.Properties["Handler"] != "bootstrap" {
				t.Errorf("function: runtime %v, architectures %v, handler %v", fn.Properties["Runtime"], fn.Properties["Architectures"], fn.Properties["Handler"])
			}
			if got := fn.Properties["MemorySize"]; got != float64(stack.ReconcileMemoryMB) || got != cost.ReconcileFigures.ReconcileMB.Value {
				t.Errorf("memory %v MB, want stack.ReconcileMemoryMB %d, which the cost model prices (%v)", got, stack.ReconcileMemoryMB, cost.ReconcileFigures.ReconcileMB.Value)
			}
			if got, want := fn.Properties["Timeout"], stack.ReconcileTimeout(every).Seconds(); got != want {
				t.Errorf("timeout %v, want %v (one run apart, at most 15 min)", got, want)
			}
			vars := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			var src config.Source
			if err := json.Unmarshal([]byte(fmt.Sprint(vars[reconcilejob.EnvSource])), &src); err != nil || src.Name != name || src.Reconcile == nil {
				t.Errorf("%s = %v (%v)", reconcilejob.EnvSource, vars[reconcilejob.EnvSource], err)
			}
			_, topic := vars["HOOKFAN_TOPIC_ARN"]
			if topic != reconcilejob.Publishes(r.Source) {
				t.Errorf("topic in the environment: %v, publishes %v", topic, reconcilejob.Publishes(r.Source))
			}
			logsID := logical(r.LogGroup.Node().DefaultChild().(awscdk.CfnElement))
			if res[logsID].Properties["RetentionInDays"] != float64(cfg.API.LogRetention()) || res[logsID].DeletionPolicy != "Retain" {
				t.Errorf("log group: retention %v, deletion %v", res[logsID].Properties["RetentionInDays"], res[logsID].DeletionPolicy)
			}

			// The schedule: its rate, its input, the function, no retries.
			var sched resource
			for _, s := range schedules {
				if refID(s.Properties["Target"].(map[string]any)["Arn"]) == fnID {
					sched = s
				}
			}
			if sched.Properties == nil {
				t.Fatal("no schedule targets the function")
			}
			wantRate := fmt.Sprintf("rate(%d minutes)", int(every.Minutes()))
			if every.Minutes() == 60 {
				wantRate = "rate(1 hour)"
			}
			if sched.Properties["ScheduleExpression"] != wantRate {
				t.Errorf("schedule %v, want %s", sched.Properties["ScheduleExpression"], wantRate)
			}
			target := sched.Properties["Target"].(map[string]any)
			var in reconcilejob.Input
			if err := json.Unmarshal([]byte(fmt.Sprint(target["Input"])), &in); err != nil || in != (reconcilejob.Input{Source: name}) {
				t.Errorf("input %v (%v), want {\"source\": %q}", target["Input"], err, name)
			}
			if rp := target["RetryPolicy"].(map[string]any); rp["MaximumRetryAttempts"] != float64(0) {
				t.Errorf("retry policy %v: a failed run waits for the next", rp)
			}
			if fw := sched.Properties["FlexibleTimeWindow"].(map[string]any); fw["Mode"] != "OFF" {
				t.Errorf("flexible time window %v", fw)
			}

			// The role: what the run calls, nothing more.
			policy := rolePolicy(t, res, logical(r.Role.Node().DefaultChild().(awscdk.CfnElement)))
			secrets := actionsOn(policy, "secretsmanager:GetSecretValue")
			if len(secrets) != 1 || !strings.Contains(secrets[0], strings.TrimSuffix(strings.TrimPrefix(r.Source.Reconcile.SecretName, "arn:aws:secretsmanager:us-east-1:123456789012:secret:"), "-AbCdEf")) {
				t.Errorf("secrets read: %v, want only %s", secrets, r.Source.Reconcile.SecretName)
			}
			var keys []string
			for _, st := range policy {
				if slices.Contains(anyStrings(st["Action"]), "dynamodb:BatchGetItem") || slices.Contains(anyStrings(st["Action"]), "dynamodb:UpdateItem") {
					cond, _ := st["Condition"].(map[string]any)
					for _, c := range cond {
						keys = append(keys, anyStrings(c.(map[string]any)["dynamodb:LeadingKeys"])...)
					}
					if slices.ContainsFunc(anyStrings(st["Action"]), func(a string) bool {
						return a == "dynamodb:PutItem" || a == "dynamodb:DeleteItem" || a == "dynamodb:Query" || a == "dynamodb:Scan"
					}) {
						t.Errorf("records: %v", st["Action"])
					}
				}
			}
			wantKeys := map[string][]string{
				"stripe": {"everything#*", "payments#*", "reconcile:stripe"},
				"github": {"everything#*", "code#*", "reconcile:github"},
			}[name]
			slices.Sort(keys)
			slices.Sort(wantKeys)
			if !slices.Equal(keys, wantKeys) {
				t.Errorf("record keys %v, want %v", keys, wantKeys)
			}
			publishes := len(actionsOn(policy, "sns:Publish")) > 0
			puts := len(actionsOn(policy, "s3:PutObject")) > 0
			if publishes != reconcilejob.Publishes(r.Source) || puts != reconcilejob.Publishes(r.Source) {
				t.Errorf("sns:Publish %v, s3:PutObject %v; want both %v", publishes, puts, reconcilejob.Publishes(r.Source))
			}
			for _, obj := range actionsOn(policy, "s3:PutObject") {
				if !strings.HasSuffix(obj, "/payloads/"+name+"/*") {
					t.Errorf("s3:PutObject on %s, want the source's prefix only", obj)
				}
			}

			// Four alarms: missing, skipped, stopped on the run's metrics
			// by source, and the function's errors.
			got := map[string]bool{}
			for aid, a := range ofType(res, "AWS::CloudWatch::Alarm") {
				if !strings.HasPrefix(aid, "Reconcile"+strings.ToUpper(name[:1])+name[1:]) {
					continue
				}
				m := fmt.Sprint(a.Properties["MetricName"])
				if m == "Errors" {
					m = "Errors:" + refID(dimension(a, "FunctionName"))
				} else if dimension(a, metrics.DimSource) != name {
					t.Errorf("alarm %s on %s: dimension %v", aid, m, a.Properties["Dimensions"])
				}
				if a.Properties["Period"] != every.Seconds() || a.Properties["Threshold"] != float64(0) || len(asSlice(a.Properties["AlarmActions"])) != 1 {
					t.Errorf("alarm %s: period %v threshold %v actions %v", aid, a.Properties["Period"], a.Properties["Threshold"], a.Properties["AlarmActions"])
				}
				got[m] = true
			}
			for _, m := range []string{metrics.ReconcileMissing, metrics.ReconcileSkipped, metrics.ReconcileStopped, "Errors:" + fnID} {
				if !got[m] {
					t.Errorf("no alarm on %s (have %v)", m, got)
				}
			}
		})
	}

	// Each source's index parameter names its function and log group
	// (ops reconcile invokes the one; an operator reads the other).
	params := map[string]stackindex.Reconciler{}
	for _, p := range ofType(res, "AWS::SSM::Parameter") {
		name := fmt.Sprint(p.Properties["Name"])
		if strings.HasPrefix(name, stackindex.ReconcilePath("Hookfan")) {
			var v stackindex.Reconciler
			if err := json.Unmarshal([]byte(joined(p.Properties["Value"])), &v); err != nil {
				t.Fatal(err)
			}
			params[name] = v
		}
	}
	for _, r := range h.Reconcilers {
		got := params[stackindex.ReconcileParameter("Hookfan", r.Source.Name)]
		if got.Source != r.Source.Name || got.EverySeconds != int(r.Source.Reconcile.Interval().Seconds()) || got.FunctionName == "" || got.LogGroup == "" {
			t.Errorf("%s's index: %+v (all: %v)", r.Source.Name, got, params)
		}
	}
	// The operator role may invoke each function (ops reconcile), and
	// nothing else of Lambda's but the lanes' mappings.
	operator := rolePolicy(t, res, logical(h.Operator.Role.Node().DefaultChild().(awscdk.CfnElement)))
	var invokes, fns []string
	for _, st := range operator {
		if slices.Contains(anyStrings(st["Action"]), "lambda:InvokeFunction") {
			for _, r := range asSlice(st["Resource"]) {
				invokes = append(invokes, refID(r))
			}
		}
	}
	for _, r := range h.Reconcilers {
		fns = append(fns, logical(r.Function.Node().DefaultChild().(awscdk.CfnElement)))
	}
	slices.Sort(invokes)
	slices.Sort(fns)
	if !slices.Equal(invokes, fns) {
		t.Errorf("the operator may invoke %v, want the reconcile functions %v", invokes, fns)
	}

	// Only ingest and the Stripe reconciler may publish to the topic.
	stripeRole := logical(h.Reconcilers[0].Role.Node().DefaultChild().(awscdk.CfnElement))
	githubRole := logical(h.Reconcilers[1].Role.Node().DefaultChild().(awscdk.CfnElement))
	ingestRole := logical(h.Ingest.Role.Node().DefaultChild().(awscdk.CfnElement))
	for _, p := range ofType(res, "AWS::SNS::TopicPolicy") {
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			if st["Sid"] != "OnlyIngestPublishes" {
				continue
			}
			var allowed []string
			for _, v := range asSlice(st["Condition"].(map[string]any)["ArnNotEquals"].(map[string]any)["aws:PrincipalArn"]) {
				allowed = append(allowed, refID(v))
			}
			if !slices.Equal(allowed, []string{ingestRole, stripeRole}) || slices.Contains(allowed, githubRole) {
				t.Errorf("the topic lets %v publish, want ingest %s and the Stripe reconciler %s", allowed, ingestRole, stripeRole)
			}
		}
	}
}

// TestNoReconcilerWithoutReconcile: a configuration without a reconcile
// block builds no reconcile function and no schedule.
func TestNoReconcilerWithoutReconcile(t *testing.T) {
	h, _ := synth(t, testConfig(t, 1, ""))
	_, res := templateOf(t, h.Stack)
	if len(h.Reconcilers) != 0 || len(ofType(res, "AWS::Scheduler::Schedule")) != 0 {
		t.Errorf("%d reconcilers, %d schedules without a reconcile block", len(h.Reconcilers), len(ofType(res, "AWS::Scheduler::Schedule")))
	}
	_, db := only(t, res, "AWS::CloudWatch::Dashboard")
	if body := joined(db.Properties["DashboardBody"]); strings.Contains(body, metrics.ReconcileMissing) || strings.Contains(body, metrics.DeliveryBatches) {
		t.Errorf("a stack without reconcile or batch graphs their metrics")
	}
}

// TestReconcileTimeout: a run lasts at most one period, and never more
// than Lambda's 15 minutes.
func TestReconcileTimeout(t *testing.T) {
	for every, want := range map[string]string{"1m": "1m0s", "15m": "15m0s", "1h": "15m0s", "24h": "15m0s"} {
		var d config.Duration
		if err := json.Unmarshal([]byte(`"`+every+`"`), &d); err != nil {
			t.Fatal(err)
		}
		if got := stack.ReconcileTimeout(d.D()).String(); got != want {
			t.Errorf("every %s: timeout %s, want %s", every, got, want)
		}
	}
}

// rolePolicy returns the statements of the policies attached to role.
func rolePolicy(t *testing.T, res map[string]resource, role string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, p := range ofType(res, "AWS::IAM::Policy") {
		if slices.ContainsFunc(asSlice(p.Properties["Roles"]), func(v any) bool { return refID(v) == role }) {
			out = append(out, statements(p.Properties["PolicyDocument"])...)
		}
	}
	if len(out) == 0 {
		t.Fatalf("role %s has no policy", role)
	}
	return out
}

// actionsOn lists the resources (as text) of the statements allowing
// action.
func actionsOn(policy []map[string]any, action string) []string {
	var out []string
	for _, st := range policy {
		if st["Effect"] == "Allow" && slices.Contains(anyStrings(st["Action"]), action) {
			for _, r := range asSlice(st["Resource"]) {
				out = append(out, joined(r))
			}
		}
	}
	return out
}

// dimension is an alarm's value of the dimension name.
func dimension(a resource, name string) any {
	for _, d := range asSlice(a.Properties["Dimensions"]) {
		if m := d.(map[string]any); m["Name"] == name {
			return m["Value"]
		}
	}
	return nil
}
