package stack_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// shapedDests are TestShapedLane's lanes: one with a transform and SigV4,
// one without.
var shapedDests = []string{
	`{"name": "shaped", "url": "https://a.example.com/hooks", "transform": "{text: .type}",
	  "auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1", "resources": ["arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks"]}}}`,
	`{"name": "unshaped", "url": "https://b.example.com/hooks"}`,
}

// TestShapedLane: no lane may send to its own DLQ or is told its URL, a
// transform's included (its failures reach the DLQ through the queue's
// redrive policy). Every lane names its role, the principal a receiver
// grants for auth.sigv4, in its outputs; auth.sigv4.resources are granted
// to the role by an identity policy. Its lanes are shapedDests, in
// lanesConfig.
func TestShapedLane(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	for _, lane := range []struct {
		name   string
		shaped bool
	}{{"shaped", true}, {"unshaped", false}} {
		i, shaped := laneIndex(t, cfg, lane.name), lane.shaped
		tmpl, res := templateOf(t, h.LaneStacks[i])
		dlq := ""
		for id := range ofType(res, "AWS::SQS::Queue") {
			if strings.Contains(id, "DeadLetterQueue") && !strings.Contains(id, "Subscription") {
				dlq = id
			}
		}
		if dlq == "" {
			t.Fatalf("lane %s: no DLQ among %v", lane.name, ofType(res, "AWS::SQS::Queue"))
		}
		policies, _ := json.Marshal(ofType(res, "AWS::IAM::Policy"))
		sendsToDLQ := strings.Contains(string(policies), `"sqs:SendMessage"`) && strings.Contains(string(policies), `"Fn::GetAtt":["`+dlq+`","Arn"]`)
		_, fn := only(t, res, "AWS::Lambda::Function")
		_, hasURL := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)["HOOKFAN_DLQ_URL"]
		invokes := strings.Contains(string(policies), `"execute-api:Invoke"`) && strings.Contains(string(policies), `"arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/prod/POST/hooks"`)
		if invokes != shaped {
			t.Errorf("lane %s: may invoke the SigV4 receiver %v, want %v", lane.name, invokes, shaped)
		}
		if sendsToDLQ || hasURL {
			t.Errorf("lane %s (transform %v): may send to its DLQ %v, told its URL %v", lane.name, shaped, sendsToDLQ, hasURL)
		}
		outputs, _ := json.Marshal(tmpl.ToJSON())
		if !strings.Contains(string(outputs), `"Description":"Role of destination `+cfg.Destinations[i].Name+`'s deliver function`) {
			t.Errorf("lane %s: no RoleArn output", lane.name)
		}
	}
}
