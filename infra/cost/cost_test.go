package cost_test

import (
	"flag"
	"math"
	"os"
	"testing"

	"github.com/hookfan/hookfan/infra/cost"
)

var update = flag.Bool("update", false, "rewrite the generated tables of docs/cost.md")

const page = "../../docs/cost.md"

// TestPageIsGenerated keeps docs/cost.md's tables equal to the model's:
// change the model, then run go test ./infra/cost -update.
func TestPageIsGenerated(t *testing.T) {
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	want, err := cost.Page(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.WriteFile(page, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if string(data) != want {
		t.Errorf("docs/cost.md's tables differ from the model's; run go test ./infra/cost -update and review the diff")
	}
}

func TestPageNeedsMarkers(t *testing.T) {
	if _, err := cost.Page("# Cost\n\nno markers\n"); err == nil {
		t.Error("a page without markers: no error")
	}
	if _, err := cost.Page(cost.End + "\n" + cost.Begin); err == nil {
		t.Error("markers in the wrong order: no error")
	}
}

func line(t *testing.T, lines []cost.Line, item string) float64 {
	t.Helper()
	for _, l := range lines {
		if l.Item == item {
			return l.USD
		}
	}
	t.Fatalf("no line %q in %v", item, lines)
	return 0
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestLinesByHand checks lines against sums done by hand from the page's
// prices, so that a slip in a formula shows.
func TestLinesByHand(t *testing.T) {
	small5 := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 5}
	v := cost.Variable(small5, cost.Prices.APIRest)
	for item, want := range map[string]float64{
		"API Gateway (REST API)": 3.50,
		"SNS publishes":          0.50,
		// 5 million deliveries, each a send, a receive and a delete.
		"SQS requests": 15 * 0.40,
		// 5 million deliveries, two writes each.
		"DynamoDB: claim and finish writes": 10 * 0.625,
		// a 1 KB body is billed as one 5 KB record: 5e6 KB.
		"Firehose archive (5 KB steps)": 5e6 * 1024 / (1 << 30) * 0.029,
		// 1 + 5 services, each under one request a second: all sampled.
		"X-Ray: ingest traces":  5.00,
		"X-Ray: deliver traces": 25.00,
	} {
		if got := line(t, v, item); !near(got, want) {
			t.Errorf("%s: %v, want %v", item, got, want)
		}
	}
	if got := line(t, cost.Variable(small5, cost.Prices.APIHTTP), "API Gateway (HTTP API)"); !near(got, 1.00) {
		t.Errorf("HTTP API: %v, want 1.00", got)
	}
	// 16 KB: the same requests (under 64 KB), a 20 KB Firehose record.
	large := cost.Variable(cost.Scenario{Events: 1e6, BodyKB: 16, Destinations: 5}, cost.Prices.APIRest)
	if got, want := line(t, large, "Firehose archive (5 KB steps)"), 20e6*1024/(1<<30)*0.029; !near(got, want) {
		t.Errorf("16 KB Firehose: %v, want %v", got, want)
	}
	if line(t, large, "SQS requests") != line(t, v, "SQS requests") {
		t.Error("16 KB bodies fit one 64 KB chunk: SQS requests should not change")
	}
	// Billed durations: a 20 ms publish, and claim + 100 ms POST + finish
	// + the CPU at a seventh of a vCPU (0.173 ms × 1769/256 = 1.2 ms),
	// rounded up to the millisecond.
	if got := cost.IngestMs(small5); got != 21 {
		t.Errorf("ingest billed %v ms, want 21", got)
	}
	if got := cost.DeliverMs(small5); got != 112 {
		t.Errorf("deliver billed %v ms, want 112", got)
	}

	f := cost.Fixed(20)
	// 4 per destination, 4 per source (its IngestFailed reading two
	// metrics for Stripe), 2 on ingest, 1 for the archive.
	if got := line(t, f, "CloudWatch: alarms"); !near(got, (4*20+4+1+2+1)*0.10) {
		t.Errorf("alarms of 20 destinations: %v", got)
	}
	if got := line(t, f, "Secrets Manager: secrets"); !near(got, 21*0.40) {
		t.Errorf("secrets of 20 destinations: %v", got)
	}
	// Five 20 s long polls at a time for 30 days: 648,000 receives a lane.
	if got := line(t, f, "SQS: the event source mappings' idle long polls"); !near(got, 20*0.648*0.40) {
		t.Errorf("idle polls of 20 lanes: %v", got)
	}
}

// TestCostGrows checks the model's shape: more destinations and larger
// bodies never cost less, and more deliveries cost more.
func TestCostGrows(t *testing.T) {
	scs := cost.Scenarios()
	for i, sc := range scs {
		total := cost.Sum(cost.Variable(sc, cost.Prices.APIRest))
		if http := cost.Sum(cost.Variable(sc, cost.Prices.APIHTTP)); http >= total {
			t.Errorf("%+v: the HTTP API (%v) should cost less than REST (%v)", sc, http, total)
		}
		if i%3 > 0 && total <= cost.Sum(cost.Variable(scs[i-1], cost.Prices.APIRest)) {
			t.Errorf("%+v costs no more than %+v", sc, scs[i-1])
		}
		if i >= 3 && total < cost.Sum(cost.Variable(scs[i-3], cost.Prices.APIRest)) {
			t.Errorf("%+v costs less than the same with 1 KB bodies", sc)
		}
		for _, l := range cost.Variable(sc, cost.Prices.APIRest) {
			if l.USD <= 0 || math.IsNaN(l.USD) {
				t.Errorf("%+v: line %q is %v", sc, l.Item, l.USD)
			}
		}
	}
	if cost.Sum(cost.Fixed(20)) <= cost.Sum(cost.Fixed(5)) {
		t.Error("20 destinations' fixed part is no larger than 5's")
	}
}

func TestResourcesOfTheReference(t *testing.T) {
	c := cost.Resources(cost.Reference(41))
	if c.Dashboards != 2 || c.Alarms != 4*41+4+2+1 || c.AlarmMetrics != c.Alarms+1 || c.Queues != 3*41+1 || c.GeneratedSecrets != 41 || c.BilledSecrets != 42 {
		t.Errorf("41 destinations: %+v", c)
	}
	if err := cost.Reference(3).Validate(); err != nil {
		t.Errorf("the reference configuration is not valid: %v", err)
	}
}
