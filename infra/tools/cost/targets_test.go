package cost_test

import (
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

// TestTargetChargeByHand: each target's charge per million deliveries,
// worked out by hand from the prices.
func TestTargetChargeByHand(t *testing.T) {
	tests := []struct {
		t      cost.Target
		bodyKB float64
		want   float64
	}{
		{cost.Target{Type: config.TypeSQS}, 1, 0.40},
		{cost.Target{Type: config.TypeSQS}, 64, 0.80}, // 65 KB with attributes: two chunks
		{cost.Target{Type: config.TypeSQS, FIFO: true}, 1, 0.50},
		{cost.Target{Type: config.TypeEventBridge}, 1, 1.00},
		{cost.Target{Type: config.TypeEventBridge}, 100, 2.00},
		// $0.20 a million invokes, 0.1 s × 0.125 GB × $0.0000133334 each.
		{cost.Target{Type: config.TypeLambda}, 1, 0.20 + 1e6*0.1*0.125*0.0000133334},
	}
	for _, tt := range tests {
		if got := cost.TargetCharge(tt.t, 1e6, tt.bodyKB).USD; !near(got, tt.want) {
			t.Errorf("%v, %v KB: %v, want %v", tt.t, tt.bodyKB, got, tt.want)
		}
	}
}

// TestTargetLaneSendsNothingOut: an AWS target's lane drops the data-out
// line, keeps the rest of the lane, adds the target's charge, and has no
// signing secret.
func TestTargetLaneSendsNothingOut(t *testing.T) {
	sc := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 1}
	lines := cost.TargetVariable(sc, cost.Defaults(), cost.Target{Type: config.TypeSQS})
	if got := line(t, lines, "target: SQS SendMessage"); !near(got, 0.40) {
		t.Errorf("target line %v", got)
	}
	for _, l := range lines {
		if l.Item == "Data transfer out to subscribers" {
			t.Error("an sqs lane pays data out")
		}
	}
	if len(lines) != len(cost.Variable(sc, cost.Defaults())) {
		t.Errorf("%d lines, want the https lane's count (data out replaced by the target)", len(lines))
	}
	cfg := cost.Reference(2)
	cfg.Destinations[1] = config.Destination{Name: "queue", Type: config.TypeSQS, Target: "arn:aws:sqs:us-east-1:123456789012:q"}
	if got, ref := cost.Resources(cfg).BilledSecrets, cost.Resources(cost.Reference(2)).BilledSecrets; got != ref-1 {
		t.Errorf("billed secrets %d, want %d (no signing secret for the sqs lane)", got, ref-1)
	}
}
