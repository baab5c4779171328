package config

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func leanConfig(extra string) string {
	return `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}], "destinations": []` + extra + `}`
}

// TestLeanDefaults: a configuration that says nothing gets the HTTP API,
// no tracing, WARN platform logs and 128 MB functions.
func TestLeanDefaults(t *testing.T) {
	c, err := Parse([]byte(leanConfig("")))
	if err != nil {
		t.Fatal(err)
	}
	got := []any{c.API.Kind(), c.TracingMode(), c.Functions.SystemLog(), c.Functions.IngestMemory(), c.Functions.DeliverMemory()}
	want := []any{APITypeHTTP, TracingOff, SystemLogWarn, 128, 128}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	c, err = Parse([]byte(leanConfig(`, "tracing": "sampled", "functions": {"ingestMemoryMB": 256, "deliverMemoryMB": 512, "systemLogLevel": "INFO"}`)))
	if err != nil {
		t.Fatal(err)
	}
	got = []any{c.API.Kind(), c.TracingMode(), c.Functions.SystemLog(), c.Functions.IngestMemory(), c.Functions.DeliverMemory()}
	want = []any{APITypeHTTP, TracingSampled, SystemLogInfo, 256, 512}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("set (-want +got):\n%s", diff)
	}
}

func TestLeanInvalid(t *testing.T) {
	_, err := Parse([]byte(leanConfig(`, "tracing": "on", "functions": {"ingestMemoryMB": 64, "deliverMemoryMB": 20000, "systemLogLevel": "ERROR"}`)))
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`functions.deliverMemoryMB: 20000 is out of range; use 128 to 10240 MB (default 128)`,
		`functions.ingestMemoryMB: 64 is out of range; use 128 to 10240 MB (default 128)`,
		`functions.systemLogLevel: unknown level "ERROR"; use "WARN" (default: no START/END/REPORT lines), "INFO" or "DEBUG"`,
		`tracing: unknown mode "on"; use "off" (default), "sampled" or "all"`,
	}
	got := strings.Split(err.Error(), "\n")
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}

// TestDedupeAndMetricSwitches: dedupe.mode and the metric switches take
// their defaults, their other values, and an unknown mode is reported with
// the field, the value and the fix.
func TestDedupeAndMetricSwitches(t *testing.T) {
	c, err := Parse([]byte(leanConfig(``)))
	if err != nil {
		t.Fatal(err)
	}
	if c.DedupeMode() != DedupeLease || !c.Metrics.Dashboards() || !c.Metrics.PerLane() {
		t.Errorf("defaults: mode %q, dashboards %v, per-lane %v; want lease, true, true", c.DedupeMode(), c.Metrics.Dashboards(), c.Metrics.PerLane())
	}
	c, err = Parse([]byte(leanConfig(`, "dedupe": {"mode": "check"}, "metrics": {"dashboard": false, "laneDimensions": false}`)))
	if err != nil {
		t.Fatal(err)
	}
	if c.DedupeMode() != DedupeCheck || c.Metrics.Dashboards() || c.Metrics.PerLane() {
		t.Errorf("set: mode %q, dashboards %v, per-lane %v; want check, false, false", c.DedupeMode(), c.Metrics.Dashboards(), c.Metrics.PerLane())
	}
	_, err = Parse([]byte(leanConfig(`, "dedupe": {"mode": "optimistic"}`)))
	want := `dedupe.mode: unknown mode "optimistic"; use "lease" (default: a lease before the POST, two writes per attempt) or "check" (a read before, one write after; copies at the same moment can both be POSTed)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestLogLevel: functions.logLevel defaults to INFO, takes WARN, and an
// unknown level names the field, the value and the fix.
func TestLogLevel(t *testing.T) {
	c, err := Parse([]byte(leanConfig(`, "functions": {"logLevel": "WARN"}`)))
	if err != nil || c.Functions.AppLog() != LogLevelWarn {
		t.Fatalf("WARN: %v, %q", err, c.Functions.AppLog())
	}
	if (Functions{}).AppLog() != LogLevelInfo {
		t.Error("the default is not INFO")
	}
	_, err = Parse([]byte(leanConfig(`, "functions": {"logLevel": "ERROR"}`)))
	want := `functions.logLevel: unknown level "ERROR"; use "INFO" (default: a line per ingest request and per delivery attempt) or "WARN" (only rejections, failures and errors)`
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %s", err, want)
	}
}

// TestTimeIndexSwitch: dedupe.timeIndex is on unless set false, and a
// value that is not a boolean is refused, naming the field.
func TestTimeIndexSwitch(t *testing.T) {
	for _, tc := range []struct {
		extra string
		want  bool
	}{
		{``, true},
		{`, "dedupe": {"timeIndex": true}`, true},
		{`, "dedupe": {"timeIndex": false}`, false},
		{`, "dedupe": {"timeIndex": false, "mode": "check", "pointInTimeRecovery": false}`, false},
	} {
		c, err := Parse([]byte(leanConfig(tc.extra)))
		if err != nil {
			t.Fatalf("%s: %v", tc.extra, err)
		}
		if got := c.Dedupe.Indexed(); got != tc.want {
			t.Errorf("%q: Indexed() = %v, want %v", tc.extra, got, tc.want)
		}
	}
	for _, bad := range []string{`"no"`, `0`, `{}`} {
		_, err := Parse([]byte(leanConfig(`, "dedupe": {"timeIndex": ` + bad + `}`)))
		if err == nil || !strings.HasPrefix(err.Error(), "dedupe.timeIndex: ") || !strings.HasSuffix(err.Error(), "; want true or false") {
			t.Errorf("timeIndex %s: error %v, want one naming dedupe.timeIndex and what it takes", bad, err)
		}
	}
}
