package cost_test

import (
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/tools/cost"
)

// TestReconcileLinesByHand checks a month of a reconciled source against
// sums done by hand: a million events a month to five destinations, a run
// every 15 minutes (2,880 runs), each listing 25 minutes (every and the
// 10-minute overlap) of events.
func TestReconcileLinesByHand(t *testing.T) {
	sc := cost.ReconcileScenario{Events: 1e6, Destinations: 5, Every: 15 * time.Minute}
	listed := 1e6 * 25 * 60 / 2592000.0 // 578.7 a run
	for _, tt := range []struct {
		name      string
		got, want float64
	}{
		{"runs", sc.Runs(), 2880},
		{"listed", sc.Listed(), listed},
		{"pages", sc.Pages(), 6},
		{"lookups", sc.Lookups(), 5 * listed},
	} {
		if !near(tt.got, tt.want) {
			t.Errorf("%s: %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	lines := cost.ReconcileLines(sc)
	// Half a read unit per record looked up and one for the watermark,
	// each run; $0.125 per million read units.
	if got, want := line(t, lines, "DynamoDB: record reads"), 2880*(5*listed*0.5+1)*0.125/1e6; !near(got, want) {
		t.Errorf("record reads: %v, want %v", got, want)
	}
	// $1 per million scheduled invocations.
	if got, want := line(t, lines, "EventBridge Scheduler: invocations"), 2880/1e6; !near(got, want) {
		t.Errorf("scheduler: %v, want %v", got, want)
	}
	// The key's secret, and a read a run (the cache's 5 minutes are up
	// by the next run), at $0.05 per 10,000 calls.
	if got, want := line(t, lines, "Secrets Manager: the provider key and its reads"), 0.40+2880/1e4*0.05; !near(got, want) {
		t.Errorf("secret: %v, want %v", got, want)
	}
	// Six metrics and four alarms a source.
	if got, want := line(t, lines, "CloudWatch: metrics")+line(t, lines, "CloudWatch: alarms"), 6*0.30+4*0.10; !near(got, want) {
		t.Errorf("metrics and alarms: %v, want %v", got, want)
	}
	// A run more often than the cache's TTL reads the key once per TTL.
	fast := cost.ReconcileScenario{Events: 1e6, Destinations: 1, Every: time.Minute}
	if got, want := fast.SecretReads(), 2592000/300.0; !near(got, want) {
		t.Errorf("secret reads at every 1m: %v, want %v", got, want)
	}
	// A quiet source still reads a page a run.
	if quiet := (cost.ReconcileScenario{Events: 0, Destinations: 1, Every: time.Hour}); quiet.Pages() != 1 {
		t.Errorf("pages of a quiet source: %v", quiet.Pages())
	}
}
