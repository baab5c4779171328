package main

import (
	"bytes"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
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
	if got, err := parentPID("4242 (boot strap (x)) S 17 4242 4242 0 -1"); err != nil || got != 17 {
		t.Errorf("parentPID = %d, %v; want 17", got, err)
	}
	if _, err := parentPID("garbage"); err == nil {
		t.Error("parentPID of garbage succeeded")
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

func TestLambdaEnv(t *testing.T) {
	t.Setenv("AWS_CA_BUNDLE", "/etc/ssl/bundle.pem")
	env := strings.Join(lambdaEnv(functions[4], "http://127.0.0.1:1"), "\n")
	for _, want := range []string{"AWS_REGION=us-east-1", "AWS_ENDPOINT_URL=http://127.0.0.1:1", "HOOKFAN_TABLE_NAME=hookfan-deliveries", "AWS_LAMBDA_FUNCTION_NAME=deliver"} {
		if !strings.Contains(env, want+"\n") && !strings.HasSuffix(env, want) {
			t.Errorf("environment lacks %s", want)
		}
	}
	if strings.Contains(env, "AWS_CA_BUNDLE") {
		t.Error("the machine's environment leaks into the function's")
	}
}

func TestReport(t *testing.T) {
	ms := time.Millisecond
	samples := map[string][]sample{
		"hello":       {{first: 10 * ms, init: 4 * ms, rss: 6 << 20}},
		"sdk-ingest":  {{first: 14 * ms, init: 4800 * time.Microsecond, rss: 9 << 20}},
		"ingest":      {{first: 15 * ms, init: 5 * ms, rss: 10 << 20}},
		"sdk-deliver": {{first: 18 * ms, init: 7 * ms, rss: 11 << 20}},
		"deliver":     {{first: 20 * ms, init: 8 * ms, rss: 12 << 20}},
		// The builds with every feature are reported, not budgeted.
		"sdk-ingest-all":  {{first: 16 * ms, init: 6 * ms, rss: 10 << 20}},
		"ingest-all":      {{first: 17 * ms, init: 7 * ms, rss: 11 << 20}},
		"sdk-deliver-all": {{first: 19 * ms, init: 8 * ms, rss: 12 << 20}},
		"deliver-all":     {{first: 21 * ms, init: 9 * ms, rss: 13 << 20}},
	}
	var out bytes.Buffer
	over := report(&out, samples, 1, 1.5)
	if len(over) != 1 || !strings.HasPrefix(over[0], "deliver 2.00×") {
		t.Errorf("over budget = %v, want deliver at 2.00× alone", over)
	}
	for _, want := range []string{
		"ingest                  15.0 ms    5.0 ms    5.0 ms   10.0 MB           1.25×           1.50×",
		"deliver-all             21.0 ms    9.0 ms    9.0 ms   13.0 MB           2.25×           2.10×",
		"vs hello: ingest 1.20× (the function adds +0.2 ms); deliver 1.75× (the function adds +1.0 ms); ingest-all 1.50× (the function adds +1.0 ms)",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, out.String())
		}
	}
}

// TestFloorsMatchTheFunctions: each SDK floor links the same AWS service
// packages as its function, built with every feature and with none (the
// tags make coldstart uses), so the comparison stays fair as they change.
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
	trim := strings.Join([]string{lambdaenv.NoPayloadsBuildTag, lambdaenv.NoPauseBuildTag, lambdaenv.NoReplayBuildTag}, ",")
	for _, tags := range []string{"lambda.norpc", "lambda.norpc," + trim} {
		for _, f := range []string{"ingest", "deliver"} {
			fn := services(tags, "github.com/hookfan/hookfan/functions/"+f)
			floor := services(tags, "github.com/hookfan/hookfan/infra/coldstart/sdkfloor/"+f)
			if !slices.Equal(fn, floor) || len(fn) == 0 {
				t.Errorf("built with %s, %s links the SDK services %v, its floor %v", tags, f, fn, floor)
			}
		}
	}
}
