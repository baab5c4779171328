package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParsers(t *testing.T) {
	if got, err := initDuration("01 Dec 2026 02:24:42,655 [INFO] (rapid) INIT REPORT(durationMs: 7.775000)\n"); err != nil || got != 7775*time.Microsecond {
		t.Errorf("initDuration = %s, %v; want 7.775ms", got, err)
	}
	if _, err := initDuration("START RequestId: x"); err == nil {
		t.Error("initDuration without a report succeeded")
	}
	if got, err := peakRSS("Name:\tbootstrap\nVmPeak:\t  712000 kB\nVmHWM:\t    12345 kB\nVmRSS:\t 12000 kB\n"); err != nil || got != 12345<<10 {
		t.Errorf("peakRSS = %d, %v; want %d", got, err, 12345<<10)
	}
	if _, err := peakRSS("Name:\tbootstrap\n"); err == nil {
		t.Error("peakRSS without VmHWM succeeded")
	}
}

func TestMedian(t *testing.T) {
	if got := median([]time.Duration{5, 1, 3}); got != 3 {
		t.Errorf("median odd = %d, want 3", got)
	}
	if got := median([]int64{4, 1, 3, 2}); got != 2 {
		t.Errorf("median even = %d, want 2", got)
	}
	if got := median([]int64(nil)); got != 0 {
		t.Errorf("median empty = %d, want 0", got)
	}
}

// TestContractEnv: the functions run with their contract's rendering.
func TestContractEnv(t *testing.T) {
	for _, f := range functions {
		if f.name == "ingest" && (f.env["HOOKFAN_TOPIC_ARN"] == "" || f.env["GOGC"] == "") {
			t.Errorf("ingest's environment %v lacks the contract's topic or GOGC", f.env)
		}
		if f.name == "deliver" && f.env["HOOKFAN_TABLE_NAME"] != "hookfan-deliveries" {
			t.Errorf("deliver's environment %v lacks the contract's table", f.env)
		}
	}
}

func TestReport(t *testing.T) {
	ms := time.Millisecond
	samples := map[string][]sample{
		"hello":      {{first: 10 * ms, init: 4 * ms, rss: 6 << 20}},
		"sdk-ingest": {{first: 14 * ms, init: 4800 * time.Microsecond, rss: 9 << 20}},
		"ingest":     {{first: 15 * ms, init: 9 * ms, rss: 10 << 20}},
		// Deliver is reported, not budgeted.
		"sdk-deliver": {{first: 18 * ms, init: 7 * ms, rss: 11 << 20}},
		"deliver":     {{first: 20 * ms, init: 10 * ms, rss: 12 << 20}},
	}
	var out bytes.Buffer
	over := report(&out, samples, 1, 2)
	if len(over) != 1 || !strings.HasPrefix(over[0], "ingest 2.25×") {
		t.Errorf("over budget = %v, want ingest at 2.25× alone", over)
	}
	for _, want := range []string{
		"ingest                  15.0 ms    9.0 ms    9.0 ms   10.0 MB           2.25×           1.50×",
		"deliver                 20.0 ms   10.0 ms   10.0 ms   12.0 MB           2.50×           2.00×",
		"vs hello: ingest 1.20× (the function adds +4.2 ms); deliver 1.75× (the function adds +3.0 ms)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
	samples["ingest"][0].init = 8 * ms // 2.00×: at the budget, not over it
	if over := report(&bytes.Buffer{}, samples, 1, 2); len(over) != 0 {
		t.Errorf("over budget = %v at 2.00×, want none", over)
	}
}

// TestFloorsMatchTheFunctions: each SDK floor links the same AWS service
// packages as its function, so the comparison stays fair as they change.
func TestFloorsMatchTheFunctions(t *testing.T) {
	services := func(tags, pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", "-tags", tags, pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		var s []string
		for _, p := range strings.Fields(string(out)) {
			if rest, ok := strings.CutPrefix(p, "github.com/aws/aws-sdk-go-v2/service/"); ok && !strings.Contains(rest, "/") && rest != "internal" {
				s = append(s, rest)
			}
		}
		slices.Sort(s)
		return s
	}
	for _, f := range []string{"ingest", "deliver"} {
		fn := services("lambda.norpc", "github.com/hookfan/hookfan/functions/"+f)
		floor := services("lambda.norpc", "github.com/hookfan/hookfan/infra/tools/coldstart/sdkfloor/"+f)
		if !slices.Equal(fn, floor) || len(fn) == 0 {
			t.Errorf("%s links the SDK services %v, its floor %v", f, fn, floor)
		}
	}
}
