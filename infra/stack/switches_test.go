package stack_test

import (
	"regexp"
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

// costSwitchesConfig is TestCostSwitches's: the cost switches off their
// defaults, beside a lane that pauses (TestTimeIndexSwitch reads it
// without the time index).
func costSwitchesConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}}],
	  "destinations": [
	    {"name": "plain", "url": "https://a.example.com/hooks"},
	    {"name": "pauses", "url": "https://b.example.com/hooks", "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"}}
	  ],
	  "dedupe": {"mode": "check", "timeIndex": false},
	  "metrics": {"dashboard": false, "laneDimensions": false},
	  "functions": {"logLevel": "WARN"}
	}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestCostSwitches synthesizes the cost switches off their defaults in one
// stack — dedupe.mode check, dedupe.timeIndex false, metrics.dashboard
// false, metrics.laneDimensions false, functions.logLevel WARN — beside a
// lane that pauses: every lane check holds (each function reads its mode,
// its time index and its metrics' dimension from its environment; GetItem
// is granted where the lane reads), no dashboard is made, every alarm is
// there, and the cost model counts what the templates hold.
func TestCostSwitches(t *testing.T) {
	cfg := costSwitchesConfig(t)
	h, outdir := synth(t, cfg)
	for i, d := range cfg.Destinations {
		_, res := templateOf(t, h.LaneStacks[i])
		checkLane(t, d, cfg, res, false)
	}
	docs := readTemplates(t, outdir)
	checkCostCounts(t, cfg, docs)
	checkRunbooks(t, docs)
	alarms, leveled := 0, 0
	for name, doc := range docs {
		for id, fn := range ofType(doc.Resources, "AWS::Lambda::Function") {
			env, _ := fn.Properties["Environment"].(map[string]any)
			vars, _ := env["Variables"].(map[string]any)
			if _, ours := vars[config.EnvMetricsSink]; !ours {
				continue // the custom-resource provider
			}
			leveled++
			if vars[config.EnvLogLevel] != config.LogLevelWarn {
				t.Errorf("%s: %s: %s = %v, want WARN (functions.logLevel)", name, id, config.EnvLogLevel, vars[config.EnvLogLevel])
			}
		}
		if n := len(ofType(doc.Resources, "AWS::CloudWatch::Dashboard")); n != 0 {
			t.Errorf("%s: %d dashboards with metrics.dashboard false", name, n)
		}
		alarms += len(ofType(doc.Resources, "AWS::CloudWatch::Alarm"))
	}
	if want := cost.Resources(cost.Reference(2)).Alarms + 1; alarms != want {
		t.Errorf("%d alarms with the switches off, want the defaults' %d (and the paused lane's)", alarms, want)
	}
	if leveled != 3 {
		t.Errorf("%d functions read %s, want ingest and both lanes'", leveled, config.EnvLogLevel)
	}
	if _, ok := docs["Hookfan.template.json"].Outputs["DashboardName"]; ok {
		t.Error("a DashboardName output without a dashboard")
	}
}

// dashboardMetrics counts the metrics a synthesized dashboard graphs: each
// metric array and each expression of its widgets.
func dashboardMetrics(dash resource) int {
	return len(metricEntry.FindAllString(joined(dash.Properties["DashboardBody"]), -1))
}

// metricEntry matches one entry of a widget's "metrics": a metric
// (["namespace","name",…]) or an expression ([{"expression":…}]).
var metricEntry = regexp.MustCompile(`\[\{"expression"|\["(Hookfan|AWS/[A-Za-z]+)",`)
