package stack_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/metrics"
)

// pausingDests are TestPausingLane's lanes: one that pauses, one that
// does not.
var pausingDests = []string{
	`{"name": "pauses", "url": "https://a.example.com/hooks", "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"}}`,
	`{"name": "steady", "url": "https://b.example.com/hooks"}`,
}

// TestPausingLane checks one destination that pauses beside one that does
// not (pausingDests, in alarmedLanesConfig: one synthesis for every
// check): the pausing lane's function may switch only its own event
// source mapping, is ticked on its probe schedule, has an alarm on its
// paused gauge, and its queue keeps a message through the longest pause
// plus the whole schedule.
func TestPausingLane(t *testing.T) {
	cfg := alarmedLanesConfig(t)
	h, outdir := synth(t, cfg)
	pausingLane, plainLane := laneIndex(t, cfg, "pauses"), laneIndex(t, cfg, "steady")
	pausing, plain := cfg.Destinations[pausingLane], cfg.Destinations[plainLane]
	// One deliver asset for the lane that pauses and the one that does not.
	checkFunctionBuilds(t, outdir)
	_, res := templateOf(t, h.LaneStacks[pausingLane])
	_, plainRes := templateOf(t, h.LaneStacks[plainLane])

	t.Run("every lane check", func(t *testing.T) {
		checkLane(t, pausing, cfg, res, true)
		checkLane(t, plain, cfg, plainRes, true)
	})

	fnID, fn := only(t, res, "AWS::Lambda::Function")
	queueID := ""
	for id, q := range ofType(res, "AWS::SQS::Queue") {
		if q.Properties["RedrivePolicy"] != nil {
			queueID = id
		}
	}

	t.Run("retention covers the longest pause", func(t *testing.T) {
		// The default schedule needs 72666 s; twice that plus the 12 h
		// bound is 188532 s, rounded up to the minute.
		q := ofType(res, "AWS::SQS::Queue")[queueID].Properties
		if got, want := num(q["MessageRetentionPeriod"]), 188580.0; got != want {
			t.Errorf("retention %v s, want %v", got, want)
		}
		pq := ""
		for id, qq := range ofType(plainRes, "AWS::SQS::Queue") {
			if qq.Properties["RedrivePolicy"] != nil {
				pq = id
			}
		}
		if got := num(ofType(plainRes, "AWS::SQS::Queue")[pq].Properties["MessageRetentionPeriod"]); got != 145380 {
			t.Errorf("a lane that does not pause keeps %v s, want 145380 (no pause reserve)", got)
		}
	})

	t.Run("the function finds its mapping by its queue", func(t *testing.T) {
		env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if diff := cmp.Diff(map[string]any{"Fn::GetAtt": []any{queueID, "Arn"}}, env[delivery.EnvQueueARN]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", delivery.EnvQueueARN, diff)
		}
		_, plainFn := only(t, plainRes, "AWS::Lambda::Function")
		if _, ok := plainFn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)[delivery.EnvQueueARN]; ok {
			t.Errorf("a lane that does not pause gets %s", delivery.EnvQueueARN)
		}
	})

	t.Run("the switch is scoped to its own mapping and makes no cycle", func(t *testing.T) {
		// checkLane checked the statements; here: they sit in a policy the
		// function does not wait for, attached to the lane's role.
		var switchID string
		for id, p := range ofType(res, "AWS::IAM::Policy") {
			if strings.Contains(fmtJSON(p.Properties), "lambda:UpdateEventSourceMapping") {
				switchID = id
				roleID, _ := only(t, res, "AWS::IAM::Role")
				if roles := asSlice(p.Properties["Roles"]); len(roles) != 1 || refID(roles[0]) != roleID {
					t.Errorf("switch policy attached to %v, want the lane's role", p.Properties["Roles"])
				}
			}
		}
		if switchID == "" {
			t.Fatal("no switch policy")
		}
		tmpl, _ := templateOf(t, h.LaneStacks[pausingLane])
		fnJSON := fmtJSON((*tmpl.ToJSON())["Resources"].(map[string]any)[fnID])
		if strings.Contains(fnJSON, switchID) {
			t.Errorf("the function depends on the switch policy, which names its ARN: a cycle")
		}
		if strings.Contains(fmtJSON(plainRes), "lambda:UpdateEventSourceMapping") {
			t.Error("a lane that does not pause may switch its mapping")
		}
	})

	t.Run("the probe schedule ticks the function, without retries", func(t *testing.T) {
		_, rule := only(t, res, "AWS::Events::Rule")
		rp := rule.Properties
		if rp["ScheduleExpression"] != "rate(2 minutes)" || rp["State"] != "ENABLED" {
			t.Errorf("rule %v, want rate(2 minutes), enabled", rp)
		}
		targets := asSlice(rp["Targets"])
		if len(targets) != 1 {
			t.Fatalf("targets %v", targets)
		}
		tg := targets[0].(map[string]any)
		if diff := cmp.Diff(map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}}, tg["Arn"]); diff != "" {
			t.Errorf("target (-want +got):\n%s", diff)
		}
		if tg["Input"] != `{"hookfan":"tick"}` {
			t.Errorf("input %v, want the tick event", tg["Input"])
		}
		if rpol, _ := tg["RetryPolicy"].(map[string]any); num(rpol["MaximumRetryAttempts"]) != 0 || num(rpol["MaximumEventAgeInSeconds"]) != 120 {
			t.Errorf("retry policy %v, want none and 2 minutes", tg["RetryPolicy"])
		}
		_, perm := only(t, res, "AWS::Lambda::Permission")
		if perm.Properties["Principal"] != "events.amazonaws.com" || refID(perm.Properties["FunctionName"]) != fnID || perm.Properties["SourceArn"] == nil {
			t.Errorf("permission %v, want EventBridge, from the rule, on the function", perm.Properties)
		}
		_, eic := only(t, res, "AWS::Lambda::EventInvokeConfig")
		if num(eic.Properties["MaximumRetryAttempts"]) != 0 {
			t.Errorf("async retries %v, want 0", eic.Properties)
		}
		for _, typ := range []string{"AWS::Events::Rule", "AWS::Lambda::Permission", "AWS::Lambda::EventInvokeConfig"} {
			if len(ofType(plainRes, typ)) != 0 {
				t.Errorf("a lane that does not pause has a %s", typ)
			}
		}
	})

	t.Run("an alarm on a paused lane", func(t *testing.T) {
		var found bool
		for _, a := range ofType(res, "AWS::CloudWatch::Alarm") {
			p := a.Properties
			if p["MetricName"] != metrics.LanePaused {
				continue
			}
			found = true
			want := map[string]any{"Namespace": metrics.Namespace, "Statistic": "Maximum", "Period": float64((2 * time.Minute).Seconds()),
				"Threshold": 0.0, "ComparisonOperator": "GreaterThanThreshold", "EvaluationPeriods": 1.0,
				"Dimensions": []any{map[string]any{"Name": metrics.DimDestination, "Value": "pauses"}}}
			for k, v := range want {
				if diff := cmp.Diff(v, p[k]); diff != "" {
					t.Errorf("alarm %s (-want +got):\n%s", k, diff)
				}
			}
			if anyLen(p["AlarmActions"]) != 1 || anyLen(p["OKActions"]) != 1 {
				t.Errorf("alarm actions %v / %v, want the alarm topic", p["AlarmActions"], p["OKActions"])
			}
		}
		if !found {
			t.Error("no LanePaused alarm")
		}
	})

	t.Run("the index tells the operator command the rule and the retention", func(t *testing.T) {
		for _, tt := range []struct {
			res  map[string]resource
			want stackindex.Lane
		}{
			{res, stackindex.Lane{Pause: stackindex.LanePause{Enabled: true, AfterFailures: 10, FailureRate: 0.9, WindowSeconds: 300, MinAttempts: 20,
				ProbeEverySeconds: 120, MaxPauseSeconds: 43200}, RetentionSeconds: 188580}},
			{plainRes, stackindex.Lane{RetentionSeconds: 145380}},
		} {
			_, param := only(t, tt.res, "AWS::SSM::Parameter")
			var got stackindex.Lane
			if err := json.Unmarshal([]byte(joined(param.Properties["Value"])), &got); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, stackindex.Lane{Pause: got.Pause, RetentionSeconds: got.RetentionSeconds}); diff != "" {
				t.Errorf("%s index (-want +got):\n%s", got.Destination, diff)
			}
		}
		if r, ok := stackindex.PauseOf(pausing).Rule(); !ok || r != mustRule(t, pausing) {
			t.Errorf("the index's rule %+v does not read back as the configured one", r)
		}
	})

	t.Run("the dashboard shows paused lanes", func(t *testing.T) {
		_, parent := templateOf(t, h.Stack)
		_, db := only(t, parent, "AWS::CloudWatch::Dashboard")
		body := joined(db.Properties["DashboardBody"])
		if strings.Count(body, metrics.LanePaused) < 3 {
			t.Errorf("dashboard mentions %s %d times, want the overview search and one series per lane row", metrics.LanePaused, strings.Count(body, metrics.LanePaused))
		}
		// No destination is paced: no pacing widget (TestPacedLane).
		if strings.Contains(body, metrics.DeliveryPaced) {
			t.Errorf("a stack without rateLimit graphs %s", metrics.DeliveryPaced)
		}
	})
}

func mustRule(t *testing.T, d config.Destination) config.PauseRule {
	t.Helper()
	r, ok := d.PauseRule()
	if !ok {
		t.Fatalf("%s does not pause", d.Name)
	}
	return r
}

func fmtJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
