package stack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
)

// targetLanes are TestTargetLanes's lanes, by name: each AWS target kind, with
// its target's ARN and the one action its role may call there.
var targetLanes = map[string]struct{ typ, arn, action string }{
	"queue": {config.TypeSQS, "arn:aws:sqs:us-east-1:210987654321:orders.fifo", "sqs:SendMessage"},
	"bus":   {config.TypeEventBridge, "arn:aws:events:eu-west-1:210987654321:event-bus/orders", "events:PutEvents"},
	"fn":    {config.TypeLambda, "arn:aws:lambda:us-east-1:123456789012:function:orders:live", "lambda:InvokeFunction"},
}

// targetDests are TestTargetLanes's lanes (in lanesConfig), each pausing.
func targetDests() []string {
	var dests []string
	for _, name := range []string{"queue", "bus", "fn"} {
		tg := targetLanes[name]
		d, _ := json.Marshal(map[string]any{"name": name, "type": tg.typ, "target": tg.arn,
			"pause": map[string]any{"afterFailures": 5}})
		dests = append(dests, string(d))
	}
	return dests
}

// TestTargetLanes: each AWS target's lane role may call its type's one
// action on its target's exact ARN (cross-account included), nothing
// with a wildcard; the lane has no signing secret and its function's
// environment names none; cdk-nag finds nothing (synth fails on findings).
// Its lanes are targetDests, in lanesConfig.
func TestTargetLanes(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	for _, name := range []string{"queue", "bus", "fn"} {
		i := laneIndex(t, cfg, name)
		d := cfg.Destinations[i]
		tg := targetLanes[d.Name]
		_, res := templateOf(t, h.LaneStacks[i])
		if n := len(ofType(res, "AWS::SecretsManager::Secret")); n != 0 {
			t.Errorf("%s: %d signing secrets, want none", d.Name, n)
		}
		_, fn := only(t, res, "AWS::Lambda::Function")
		env := fn.Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
		if _, ok := env[delivery.EnvSecretID]; ok {
			t.Errorf("%s: environment names a signing secret", d.Name)
		}
		grants := 0
		for id, p := range ofType(res, "AWS::IAM::Policy") {
			for _, st := range statements(p.Properties["PolicyDocument"]) {
				actions := anyStrings(st["Action"])
				for _, r := range asSlice(st["Resource"]) {
					if s, ok := r.(string); ok && strings.Contains(s, "*") && slices.Contains(actions, tg.action) {
						t.Errorf("%s %s: %s on %q", d.Name, id, tg.action, s)
					}
				}
				if slices.Contains(anyStrings(st["Resource"]), tg.arn) {
					grants++
					if len(actions) != 1 || !slices.Equal(anyStrings(st["Resource"]), []string{tg.arn}) {
						t.Errorf("%s %s: grant %v on %v, want %s on %s alone", d.Name, id, actions, st["Resource"], tg.action, tg.arn)
					}
				}
				for _, a := range actions {
					if strings.HasPrefix(a, "secretsmanager:") {
						t.Errorf("%s %s: %s granted to an unsigned lane", d.Name, id, a)
					}
				}
			}
		}
		// (A pausing lane also sends to its own queue, re-queueing a held
		// message: that grant names the lane's queue, by reference.)
		if grants != 1 {
			t.Errorf("%s: %d grants of %s, want 1", d.Name, grants, tg.action)
		}
	}
}
