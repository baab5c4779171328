package cost_test

import (
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

var update = flag.Bool("update", false, "rewrite the generated tables of docs/cost.md")

const page = "../../../docs/cost.md"

// TestPageIsGenerated keeps docs/cost.md's tables equal to the model's:
// change the model, then run go test ./infra/tools/cost -update.
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
		t.Errorf("docs/cost.md's tables differ from the model's; run go test ./infra/tools/cost -update and review the diff")
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
	def := cost.Defaults()
	v := cost.Variable(small5, def)
	for item, want := range map[string]float64{
		"API Gateway (HTTP API)": 1.00,
		"SNS publishes":          0.50,
		// 5 million deliveries, each a send, a receive and a delete.
		"SQS requests": 15 * 0.40,
		// 5 million deliveries, two writes each.
		"DynamoDB: claim and finish writes": 10 * 0.625,
		// a 1 KB body is billed as one 5 KB record: 5e6 KB.
		"Firehose archive (5 KB steps)": 5e6 * 1024 / (1 << 30) * 0.029,
		// tracing off by default.
		"X-Ray: ingest traces":  0,
		"X-Ray: deliver traces": 0,
		// 760 bytes a delivery, no platform lines at WARN.
		"CloudWatch Logs: deliver lines": 5e6 * (350 + 410) / float64(1<<30) * 0.50,
		// a million requests: their line, the EMF line and the HTTP API's access log.
		"CloudWatch Logs: ingest lines and access log": 1e6 * (362 + 199 + 400) / float64(1<<30) * 0.50,
	} {
		if got := line(t, v, item); !near(got, want) {
			t.Errorf("%s: %v, want %v", item, got, want)
		}
	}
	rich := cost.Variable(small5, cost.Richest())
	if got := line(t, rich, "API Gateway (REST API)"); !near(got, 3.50) {
		t.Errorf("REST API: %v, want 3.50", got)
	}
	// 1 + 5 services, every request and invocation traced.
	if got := line(t, rich, "X-Ray: ingest traces") + line(t, rich, "X-Ray: deliver traces"); !near(got, 30) {
		t.Errorf("traces with tracing all: %v, want 30", got)
	}
	// 16 KB: the same requests (under 64 KB), a 20 KB Firehose record.
	large := cost.Variable(cost.Scenario{Events: 1e6, BodyKB: 16, Destinations: 5}, def)
	if got, want := line(t, large, "Firehose archive (5 KB steps)"), 20e6*1024/(1<<30)*0.029; !near(got, want) {
		t.Errorf("16 KB Firehose: %v, want %v", got, want)
	}
	if line(t, large, "SQS requests") != line(t, v, "SQS requests") {
		t.Error("16 KB bodies fit one 64 KB chunk: SQS requests should not change")
	}
	// Billed durations at 128 MB (a 13.8th of a vCPU): a 20 ms publish
	// plus 0.022 ms × 13.8 = 0.3 ms; claim + 100 ms POST + finish plus a
	// fresh HTTPS connection's 1.577 ms × 13.8 = 21.8 ms, rounded up.
	if got := cost.IngestMs(small5, def); got != 21 {
		t.Errorf("ingest billed %v ms, want 21", got)
	}
	if got := cost.DeliverMs(small5, def); got != 132 {
		t.Errorf("deliver billed %v ms, want 132", got)
	}
	// At 100 M a lane has 38.6 messages a second, so its connection stays
	// open: 0.268 ms × 13.8 = 3.7 ms.
	big := cost.Scenario{Events: 1e8, BodyKB: 1, Destinations: 1}
	if got := cost.DeliverMs(big, def); got != 114 {
		t.Errorf("deliver billed %v ms at 100 M, want 114", got)
	}
	// Batches: 38.6 a second over five pollers is under one message per
	// 110 ms invocation; a 1 s window gathers 7 per poller.
	if got := cost.Batch(big, def); got != 1 {
		t.Errorf("batch at 100 M without a window: %v, want 1", got)
	}
	if got := cost.Batch(big, cost.Cheapest()); got != 7 {
		t.Errorf("batch at 100 M with a 1 s window: %v, want 7", got)
	}

	f := cost.Fixed(20, def)
	// 4 per destination, 4 per source (its IngestFailed reading two
	// metrics for Stripe), 2 on ingest, 2 for the archive.
	if got := line(t, f, "CloudWatch: alarms"); !near(got, (4*20+4+1+2+2)*0.10) {
		t.Errorf("alarms of 20 destinations: %v", got)
	}
	if got := line(t, f, "Secrets Manager: secrets"); !near(got, 21*0.40) {
		t.Errorf("secrets of 20 destinations: %v", got)
	}
	// Five 20 s long polls at a time for 30 days: 648,000 receives a lane.
	if got := line(t, f, "SQS: the event source mappings' idle long polls"); !near(got, 20*0.648*0.40) {
		t.Errorf("idle polls of 20 lanes: %v", got)
	}
	// Without detailed metrics: a source's two ingest metrics and four a lane.
	noRoutes := def
	noRoutes.DetailedMetrics = false
	if got := line(t, cost.Fixed(20, noRoutes), "CloudWatch: custom metrics"); !near(got, (2+4*20)*0.30) {
		t.Errorf("custom metrics of 20 destinations without detailed metrics: %v", got)
	}
	// Dashboards: free within the account's three of up to 50 metrics. One
	// destination's overview has 4 + 12 + 14 = 30 metrics, two's 44: free;
	// three's 58, and 20's 296: billed. 121 destinations: four pages, the
	// first three over 50 metrics, the last (one row, 14) free.
	const dash = "CloudWatch: dashboards (3 of up to 50 metrics free)"
	for n, want := range map[int]float64{1: 0, 2: 0, 3: 3, 20: 3, 121: 9} {
		if got := line(t, cost.Fixed(n, def), dash); !near(got, want) {
			t.Errorf("dashboards of %d destinations (%v metrics): %v, want %v", n, cost.DashboardMetrics(cost.Reference(n)), got, want)
		}
	}
	// Without per-lane dimensions the rows have 7 metrics: 20 + 7 × 4 = 48
	// for four destinations, free; and no dashboard at all costs nothing.
	lean := def
	lean.LaneDimensions = false
	if got := line(t, cost.Fixed(4, lean), dash); got != 0 {
		t.Errorf("dashboard of 4 destinations without lane dimensions: %v, want 0", got)
	}
	if got := line(t, cost.Fixed(20, lean), "CloudWatch: custom metrics"); !near(got, (2+5+4)*0.30) {
		t.Errorf("custom metrics of 20 destinations without lane dimensions: %v, want the lanes' 4 once", got)
	}
	lean.Dashboard = false
	if got := line(t, cost.Fixed(121, lean), dash); got != 0 {
		t.Errorf("no dashboards: %v", got)
	}
	// dedupe.mode check: a read and a write per delivery.
	check := def
	check.DedupeMode = config.DedupeCheck
	if got := line(t, cost.Variable(small5, check), "DynamoDB: a read and one write (dedupe.mode check)"); !near(got, 5*(0.125+0.625)) {
		t.Errorf("check mode's DynamoDB line: %v, want 3.75", got)
	}
}

// TestFloor: the floor is the per-request charges, so every configuration
// costs at least its floor, and the floor itself matches a sum by hand.
func TestFloor(t *testing.T) {
	sc := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 2}
	// 1.00 + 0.20 + 0.50, and per delivery 3 × 0.40 + 0.20 + 0.625 + data out.
	out := 2e6 * (1024 + 700) / float64(1<<30) * 0.09
	if got, want := cost.Sum(cost.Floor(sc, cost.Defaults())), 1.70+2*(1.20+0.20+0.625)+out; !near(got, want) {
		t.Errorf("floor %v, want %v", got, want)
	}
	for _, sc := range cost.Scenarios() {
		for _, o := range []cost.Options{cost.Defaults(), cost.Cheapest(), cost.Richest()} {
			if v, f := cost.Sum(cost.Variable(sc, o)), cost.Sum(cost.Floor(sc, o)); v < f {
				t.Errorf("%+v %s: %v under its floor %v", sc, o.Name, v, f)
			}
		}
	}
}

// TestOptionsOfTheConfig ties the model's options to the config: the
// reference configuration has the defaults, and each field moves its
// option.
func TestOptionsOfTheConfig(t *testing.T) {
	cfg := cost.Reference(1)
	got := cost.OptionsOf(cfg)
	want := cost.Options{API: cost.Prices.APIHTTP, Tracing: "off", SystemLog: "WARN", IngestMB: 128, DeliverMB: 128, Archive: true, PITR: true, DetailedMetrics: true, CustomerKey: true,
		DedupeMode: "lease", Dashboard: true, LaneDimensions: true, AppLog: "INFO", TimeIndex: true}
	if got != want {
		t.Errorf("defaults %+v, want %+v", got, want)
	}
	cfg.API.Type, cfg.API.WAF.Enabled, cfg.Tracing = "rest", true, "all"
	cfg.Functions = config.Functions{IngestMemoryMB: 256, DeliverMemoryMB: 512, SystemLogLevel: "INFO"}
	days := 0
	cfg.Archive.Days = &days
	cfg.Destinations[0].BatchWindowSeconds = 2
	off := false
	cfg.Dedupe.PointInTimeRecovery = &off
	cfg.API.DetailedMetrics = &off
	cfg.TopicKey = "aws-managed"
	cfg.Dedupe.Mode = "check"
	cfg.Functions.LogLevel = "WARN"
	cfg.Metrics.Dashboard, cfg.Metrics.LaneDimensions = &off, &off
	cfg.Dedupe.TimeIndex = &off
	got = cost.OptionsOf(cfg)
	want = cost.Options{API: cost.Prices.APIRest, WAF: true, Tracing: "all", SystemLog: "INFO", IngestMB: 256, DeliverMB: 512, BatchWindow: 2, DedupeMode: "check", AppLog: "WARN"}
	if got != want {
		t.Errorf("set %+v, want %+v", got, want)
	}
}

// TestCostGrows checks the model's shape: more destinations and larger
// bodies never cost less, and the richest options cost more than the
// defaults, which cost no less than the cheapest.
func TestCostGrows(t *testing.T) {
	def := cost.Defaults()
	for _, sc := range cost.Scenarios() {
		d, c, r := cost.Sum(cost.Variable(sc, def)), cost.Sum(cost.Variable(sc, cost.Cheapest())), cost.Sum(cost.Variable(sc, cost.Richest()))
		if !(c <= d && d < r) {
			t.Errorf("%+v: cheapest %v, defaults %v, richest %v", sc, c, d, r)
		}
		more := sc
		more.Destinations++
		if cost.Sum(cost.Variable(more, def)) <= d {
			t.Errorf("%+v costs no more than %+v", more, sc)
		}
		bigger := sc
		bigger.BodyKB = 16
		if cost.Sum(cost.Variable(bigger, def)) < d {
			t.Errorf("%+v costs less than the same with 1 KB bodies", sc)
		}
		for _, l := range cost.Variable(sc, def) {
			if l.USD < 0 || math.IsNaN(l.USD) {
				t.Errorf("%+v: line %q is %v", sc, l.Item, l.USD)
			}
		}
	}
	if cost.Sum(cost.Fixed(20, def)) <= cost.Sum(cost.Fixed(5, def)) {
		t.Error("20 destinations' fixed part is no larger than 5's")
	}
}

func TestResourcesOfTheReference(t *testing.T) {
	c := cost.Resources(cost.Reference(41))
	if c.Dashboards != 2 || c.Alarms != 4*41+4+2+2 || c.AlarmMetrics != c.Alarms+1 || c.Queues != 3*41+1 || c.GeneratedSecrets != 41 || c.BilledSecrets != 42 {
		t.Errorf("41 destinations: %+v", c)
	}
	if err := cost.Reference(3).Validate(); err != nil {
		t.Errorf("the reference configuration is not valid: %v", err)
	}
}

// TestFigureCovers: a size figure covers a line from its size up to a
// fifth above it, and names both and the range otherwise.
func TestFigureCovers(t *testing.T) {
	f := cost.Figure{Value: 120, Unit: "bytes"}
	for n, ok := range map[int]bool{100: true, 120: true, 101: true, 121: false, 99: false, 0: false} {
		err := f.Covers(n)
		if (err == nil) != ok {
			t.Errorf("Covers(%d) = %v, want ok %v", n, err, ok)
		}
		if err != nil && !strings.Contains(err.Error(), fmt.Sprintf("line written is %d bytes: set it between %d and", n, n)) {
			t.Errorf("Covers(%d): %v does not name the line and the range", n, err)
		}
	}
}

// TestGoalsLeast: each target's Least is what its configuration can reach
// keeping what the issue fixes: never above the figure, the defaults' rows
// on Leanest (the lease, a line per delivered attempt, no window, the
// archive), the cheapest rows on a window that gathers batches.
func TestGoalsLeast(t *testing.T) {
	lean, def := cost.Leanest(), cost.Defaults()
	if lean.DedupeMode != def.DedupeMode || lean.AppLog != def.AppLog || lean.BatchWindow != 0 || !lean.Archive {
		t.Errorf("Leanest gave up what the issue fixes: %+v", lean)
	}
	if lean.PITR || lean.CustomerKey || lean.Dashboard || lean.LaneDimensions || lean.TimeIndex {
		t.Errorf("Leanest kept an option the issue leaves free: %+v", lean)
	}
	slow := cost.Cheapest()
	slow.BatchWindow = cost.SlowWindowSeconds
	if got := cost.Batch(cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 1}, slow); got < 2 {
		t.Errorf("a %d s window gathers %v messages a batch at a million events, want 2 or more", cost.SlowWindowSeconds, got)
	}
	for _, g := range cost.Goals() {
		if g.Least > g.Figure+1e-9 || g.How == "" {
			t.Errorf("%s: least %v (%q) above the figure %v", g.Name, g.Least, g.How, g.Figure)
		}
		if g.Met() && !g.Reachable() {
			t.Errorf("%s: met but not reachable", g.Name)
		}
	}
}

// TestFixedFollowsTheOptions: the fixed part of a configuration counts
// the resources its options make: without the archive, its two alarms and
// its data key go; with the AWS managed topic key, the customer key goes.
func TestFixedFollowsTheOptions(t *testing.T) {
	def, cheap := cost.Resources(cost.ReferenceWith(1, cost.Defaults())), cost.Resources(cost.ReferenceWith(1, cost.Cheapest()))
	if def.KMSKeys != 2 || cheap.KMSKeys != 0 {
		t.Errorf("KMS keys: defaults %d, cheapest %d; want 2 (the topic's, the archive's data key) and 0", def.KMSKeys, cheap.KMSKeys)
	}
	if def.Alarms-cheap.Alarms != 2 {
		t.Errorf("alarms: defaults %d, cheapest %d; want the archive's two fewer", def.Alarms, cheap.Alarms)
	}
	if got := line(t, cost.Fixed(1, cost.Cheapest()), "KMS: the topic key, the data key (archive, large bodies) and their requests"); got >= 1 {
		t.Errorf("the cheapest configuration's KMS line is $%.2f a month; want its requests alone, no key", got)
	}
}

// TestTimeIndexLine: the time index's line is in the bill only with the
// index (dedupe.timeIndex), at TimeIndexPerDelivery per delivery; the
// defaults keep it, Leanest and the cheapest configuration drop it, and
// dropping it saves exactly that line.
func TestTimeIndexLine(t *testing.T) {
	sc := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 2}
	has := func(o cost.Options) bool {
		return slices.ContainsFunc(cost.Variable(sc, o), func(l cost.Line) bool { return l.Item == cost.TimeIndexItem })
	}
	def := cost.Defaults()
	off := def
	off.TimeIndex = false
	if !has(def) || has(off) || has(cost.Cheapest()) || has(cost.Leanest()) {
		t.Errorf("the index line: defaults %v, off %v, cheapest %v, leanest %v; want it with the defaults alone",
			has(def), has(off), has(cost.Cheapest()), has(cost.Leanest()))
	}
	if got, want := line(t, cost.Variable(sc, def), cost.TimeIndexItem), 2e6*cost.TimeIndexPerDelivery(); math.Abs(got-want) > 1e-9 {
		t.Errorf("index line $%v, want $%v (a write and an entry per delivery)", got, want)
	}
	if saved := cost.Sum(cost.Variable(sc, def)) - cost.Sum(cost.Variable(sc, off)); math.Abs(saved-2e6*cost.TimeIndexPerDelivery()) > 1e-9 {
		t.Errorf("turning the index off saves $%v, want the line's $%v", saved, 2e6*cost.TimeIndexPerDelivery())
	}
	if d := cost.TimeIndexPerDelivery() * 1e6; d < 0.67 || d > 0.69 {
		t.Errorf("the index costs $%.3f per million deliveries, want the documented $0.68", d)
	}
	// Without the index the cheapest configuration meets issue #21's
	// target for one destination again (it missed it with the index).
	for _, g := range cost.Goals() {
		if g.Name == "cheapest, 1 M: one destination" && !g.Met() {
			t.Errorf("%s: $%.2f, over the target $%.2f", g.Name, g.Figure, g.Most)
		}
	}
}
