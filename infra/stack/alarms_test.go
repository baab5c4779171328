package stack_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"
)

// alarmsDests are the lanes TestAlarmsReachIncidentToolsAndNameTheirView
// adds: one with its own alarms.dlq (the lanes beside it have none).
var alarmsDests = []string{
	`{"name": "watched", "url": "https://w.example.com/hooks", "alarms": {"dlq": {"threshold": 3, "windowMinutes": 15}}}`,
}

// TestAlarmsReachIncidentToolsAndNameTheirView: every alarms.https
// endpoint is an https subscription of the alarm topic (beside the
// e-mail); a lane with alarms.dlq alarms on more than its threshold of
// messages reaching its DLQ within its window (the rise of the DLQ's
// depth), one without on any message; and every lane alarm's description
// names the ops command and the console page to open. It checks every
// lane of alarmedLanesConfig, one of them (alarmsDests) with alarms.dlq.
func TestAlarmsReachIncidentToolsAndNameTheirView(t *testing.T) {
	cfg := alarmedLanesConfig(t)
	if len(cfg.Alarms.HTTPS) != 2 || len(cfg.Alarms.HTTPSSecrets) != 1 {
		t.Fatalf("alarms.https %v, alarms.httpsSecrets %v: want two endpoints and one secret", cfg.Alarms.HTTPS, cfg.Alarms.HTTPSSecrets)
	}
	laneIndex(t, cfg, "watched") // the lane with its own alarms.dlq
	h, outdir := synth(t, cfg)
	tmpl, parent := templateOf(t, h.Stack)
	topicID := *awscdk.Stack_Of(h.AlarmTopic).GetLogicalId(h.AlarmTopic.Node().DefaultChild().(awscdk.CfnElement))
	for _, endpoint := range cfg.Alarms.HTTPS {
		tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
			"Protocol": "https", "Endpoint": endpoint, "TopicArn": map[string]any{"Ref": topicID},
		})
	}
	tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{"Protocol": "email", "Endpoint": "ops@example.com"})
	https := 0
	for _, s := range ofType(parent, "AWS::SNS::Subscription") {
		if s.Properties["Protocol"] == "https" {
			https++
		}
	}
	// An endpoint kept in Secrets Manager is a dynamic reference in the
	// template, never its value.
	tmpl.HasResourceProperties(jsii.String("AWS::SNS::Subscription"), map[string]any{
		"Protocol": "https", "Endpoint": "{{resolve:secretsmanager:hookfan/alarms/incident-tool:SecretString:::}}", "TopicArn": map[string]any{"Ref": topicID},
	})
	if https != cfg.Alarms.Endpoints() {
		t.Errorf("%d https subscriptions, want %d", https, cfg.Alarms.Endpoints())
	}
	checkCostCounts(t, cfg, readTemplates(t, outdir))

	stackName := *h.Stack.StackName()
	for i, l := range h.Lanes {
		name := l.Env.Destination.Name
		_, res := templateOf(t, h.LaneStacks[i])
		alarms := ofType(res, "AWS::CloudWatch::Alarm")
		if len(alarms) == 0 {
			t.Fatalf("lane %s: no alarms", name)
		}
		for id, a := range alarms {
			desc, _ := a.Properties["AlarmDescription"].(string)
			view := fmt.Sprintf("ops --stack %s ", stackName)
			if !strings.Contains(desc, view) || !strings.Contains(desc, " "+name+",") || !strings.Contains(desc, "/lanes/"+name+" in ops --stack "+stackName+" console") {
				t.Errorf("lane %s alarm %s: description %q names no ops command and console page", name, id, desc)
			}
		}
		id := *awscdk.Stack_Of(l.Alarms.DeadLetters).GetLogicalId(l.Alarms.DeadLetters.Node().DefaultChild().(awscdk.CfnElement))
		p := alarms[id].Properties
		if !strings.Contains(p["AlarmDescription"].(string), "ops --stack "+stackName+" dlq "+name) {
			t.Errorf("lane %s: DLQ alarm description %q, want ops dlq", name, p["AlarmDescription"])
		}
		if anyLen(p["AlarmActions"]) != 1 || p["ComparisonOperator"] != "GreaterThanThreshold" || p["TreatMissingData"] != "notBreaching" {
			t.Errorf("lane %s: DLQ alarm %v", name, p)
		}
		switch name {
		case "watched": // its own alarms.dlq: more than 3 within 15 minutes
			var expr string
			for _, q := range asSlice(p["Metrics"]) {
				qm := q.(map[string]any)
				if e, ok := qm["Expression"].(string); ok {
					expr = e
					continue
				}
				stat := qm["MetricStat"].(map[string]any)
				m := stat["Metric"].(map[string]any)
				if m["MetricName"] != "ApproximateNumberOfMessagesVisible" || stat["Stat"] != "Maximum" || stat["Period"] != 900.0 || qm["ReturnData"] != false {
					t.Errorf("lane %s: DLQ alarm's metric %v", name, qm)
				}
			}
			if expr != "DIFF(depth)" || num(p["Threshold"]) != 3 {
				t.Errorf("lane %s: DLQ alarm on %q above %v, want DIFF(depth) above 3", name, expr, p["Threshold"])
			}
		default: // any message held
			if p["MetricName"] != "ApproximateNumberOfMessagesVisible" || num(p["Threshold"]) != 0 || p["Period"] != 60.0 {
				t.Errorf("lane %s: DLQ alarm %v %v/%v, want any message within a minute", name, p["MetricName"], p["Threshold"], p["Period"])
			}
		}
	}
}
