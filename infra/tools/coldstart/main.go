// Command coldstart measures the cold start of Hookfan's two functions and
// of a hello-world aws-lambda-go baseline built with the same flags, under
// the Lambda Runtime Interface Emulator (RIE), in one run (make coldstart).
//
// Each start is a fresh RIE process with a fresh function process: the RIE
// starts the function on the first invoke, so "first response" runs from
// sending that invoke (process start included) to its answer; "init" is
// the RIE's INIT REPORT (from starting the process to its first call for
// work: package initialisation and main up to lambda.Start); "peak RSS" is
// the function process's VmHWM after the answer. The functions run with
// the environment Lambda gives them (package rie) and their contract's
// rendering, and nothing from this machine's; their
// AWS endpoint is a local stub that answers every call with an error and
// counts it. The first events need no AWS call (ingest: a request for an
// unknown source, answered 404; deliver: an empty batch), so the stub must
// see none. Ingest's init is held to -budget (default 2) times the
// baseline's; deliver's is reported beside its floor. Rounds interleave
// the functions so that noise on a
// shared machine falls on all of them alike; each figure is a median.
//
// Two more programs show what the functions cannot shed: sdk-ingest and
// sdk-deliver are the baseline linking the AWS SDK service packages each
// function links (infra/tools/coldstart/sdkfloor), whose package initialisation
// runs at every cold start whether or not a client is built.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hookfan/hookfan/infra/rie"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
)

// function is one program measured.
type function struct {
	name  string // its bootstrap's file name in -dir
	event string // the first invocation's payload
	want  string // what the answer must contain
	env   map[string]string
	floor string // the program linking only its SDK packages; "" for the baselines
	// budgeted: its init is held to the budget. Only ingest is: it is on
	// the provider's path (its cold start delays a webhook's answer);
	// deliver's runs asynchronously, and is reported beside its floor.
	budgeted bool
}

// baseline is the function the others are compared with.
const baseline = "hello"

// The functions, and their SDK floors, in the environment their contract
// renders (ingest.Env, delivery.Env: what the stack gives them) for a
// plain configuration. One binary per function serves every
// configuration; a lane that pauses is not configured here only because
// its first batch reads the lane's state, an AWS call.
var functions = []function{
	{name: baseline, event: `{}`, want: `"hello"`},
	{name: "sdk-ingest", event: `{}`, want: `"hello"`},
	{name: "ingest", floor: "sdk-ingest", budgeted: true, event: ingestEvent, want: `"statusCode":404`, env: ingestEnv},
	{name: "sdk-deliver", event: `{}`, want: `"hello"`},
	{name: "deliver", floor: "sdk-deliver", event: deliverEvent, want: `"batchItemFailures":[]`, env: deliverEnv},
}

// The first events need no AWS call: ingest answers a request for an
// unknown source 404, deliver an empty batch.
const (
	ingestEvent  = `{"resource":"/webhooks/{source}","path":"/webhooks/unknown","httpMethod":"POST","headers":{"Content-Type":"application/json"},"pathParameters":{"source":"unknown"},"requestContext":{"requestId":"coldstart"},"body":"{}","isBase64Encoded":false}`
	deliverEvent = `{"Records":[]}`
)

var (
	ingestEnv = ingest.Env{
		Sources:     []config.Source{{Name: "stripe", Verify: config.Verify{Kind: "stripe", SecretName: "hookfan/sources/stripe"}}},
		TopicARN:    "arn:aws:sns:us-east-1:123456789012:hookfan-events",
		APIType:     config.APITypeREST,
		MetricsSink: config.SinkEMF,
	}.Render()
	deliverEnv = delivery.Env{
		Destination: config.Destination{Name: "orders", URL: "https://orders.example.com/hooks"},
		TableName:   "hookfan-deliveries",
		QueueURL:    "https://sqs.us-east-1.amazonaws.com/123456789012/hookfan-orders",
		SecretID:    "hookfan/destinations/orders",
		RecordDays:  config.DefaultRecordDays,
		MetricsSink: config.SinkEMF,
	}.Render()
)

// sample is one cold start.
type sample struct {
	first time.Duration // invoke sent → answer
	init  time.Duration // the RIE's INIT REPORT
	rss   int64         // bytes
}

func main() {
	rie := flag.String("rie", "", "path of the aws-lambda-rie binary")
	dir := flag.String("dir", "", "directory holding the bootstraps: hello, ingest, deliver")
	runs := flag.Int("runs", 5, "cold starts of each function")
	budget := flag.Float64("budget", 2, "largest init time allowed to ingest, as a multiple of the baseline's")
	flag.Parse()
	if *rie == "" || *dir == "" || *runs < 1 {
		fmt.Fprintln(os.Stderr, "usage: coldstart -rie PATH -dir DIR [-runs N] [-budget X]")
		os.Exit(2)
	}
	if err := run(os.Stdout, *rie, *dir, *runs, *budget); err != nil {
		fmt.Fprintln(os.Stderr, "coldstart:", err)
		os.Exit(1)
	}
}

func run(out io.Writer, rie, dir string, runs int, budget float64) error {
	var calls atomic.Int64
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		calls.Add(1)
		http.Error(w, `{"__type":"InternalFailure","message":"coldstart stub"}`, http.StatusInternalServerError)
	}))
	defer stub.Close()

	samples := map[string][]sample{}
	for round := range runs {
		for i := range functions {
			f := functions[(i+round)%len(functions)] // rotate the order
			s, err := coldStart(rie, dir, f, stub.URL)
			for retry := 0; errors.Is(err, errUnreached) && retry < 2; retry++ {
				s, err = coldStart(rie, dir, f, stub.URL) // a sample lost to the machine, not to the function
			}
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", f.name, round+1, err)
			}
			samples[f.name] = append(samples[f.name], s)
		}
	}
	over := report(out, samples, runs, budget)
	fmt.Fprintf(out, "AWS calls during the runs: %d (stub endpoint; the first events need none)\n", calls.Load())
	switch {
	case calls.Load() != 0:
		return fmt.Errorf("the functions called AWS %d times before or during their first invocation", calls.Load())
	case len(over) > 0:
		return fmt.Errorf("init over %.1f× the baseline's: %s", budget, strings.Join(over, ", "))
	}
	return nil
}

// report prints the medians and returns the functions over budget.
func report(out io.Writer, samples map[string][]sample, runs int, budget float64) (over []string) {
	med := func(name string) (first, init, fastest time.Duration, rss int64) {
		var f, i []time.Duration
		var r []int64
		for _, s := range samples[name] {
			f, i, r = append(f, s.first), append(i, s.init), append(r, s.rss)
		}
		return median(f), median(i), slices.Min(i), median(r)
	}
	baseFirst, baseInit, _, _ := med(baseline)
	fmt.Fprintf(out, "cold start under the Lambda RIE, median of %d (%s/%s, %s)\n", runs, runtime.GOOS, runtime.GOARCH, runtime.Version())
	fmt.Fprintf(out, "%-15s %15s %9s %9s %9s %15s %15s\n", "function", "first response", "init", "init min", "peak RSS", "init vs hello", "first vs hello")
	var floors []string
	for _, f := range functions {
		first, init, fastest, rss := med(f.name)
		initRatio := float64(init) / float64(baseInit)
		fmt.Fprintf(out, "%-15s %12.1f ms %6.1f ms %6.1f ms %6.1f MB %14.2f× %14.2f×\n", f.name, ms(first), ms(init), ms(fastest), float64(rss)/(1<<20),
			initRatio, float64(first)/float64(baseFirst))
		if f.floor == "" {
			continue
		}
		if f.budgeted && initRatio > budget {
			over = append(over, fmt.Sprintf("%s %.2f×", f.name, initRatio))
		}
		_, floorInit, _, _ := med(f.floor)
		floors = append(floors, fmt.Sprintf("%s %.2f× (the function adds %+.1f ms)", f.name, float64(floorInit)/float64(baseInit), ms(init-floorInit)))
	}
	fmt.Fprintf(out, "init of the SDK service packages alone, vs hello: %s\n", strings.Join(floors, "; "))
	return over
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func median[T int64 | time.Duration](v []T) T {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// errUnreached is a cold start lost to the machine: the function could
// not reach the RIE's runtime API (rie.Function.Unreached).
var errUnreached = errors.New("the function could not reach the RIE's runtime API")

// coldStart runs one fresh RIE with f and invokes it once.
func coldStart(rieBin, dir string, f function, endpoint string) (sample, error) {
	ctx := context.Background()
	fn, err := rie.Start(ctx, rieBin, filepath.Join(dir, f.name), rie.Env(f.name, endpoint, 20*time.Second, f.env))
	if err != nil {
		return sample{}, err
	}
	defer fn.Stop()

	start := time.Now()
	body, err := fn.Invoke(ctx, []byte(f.event))
	first := time.Since(start)
	if err != nil && fn.Unreached() {
		return sample{}, fmt.Errorf("%w: %v", errUnreached, err)
	}
	if err != nil || !strings.Contains(string(body), f.want) {
		return sample{}, fmt.Errorf("answer %q (%v), want one holding %s; RIE log:\n%s", body, err, f.want, fn.Logs())
	}

	child, err := rie.ChildOf(fn.Pid())
	if err != nil {
		return sample{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", child))
	if err != nil {
		return sample{}, fmt.Errorf("read the function's status: %w", err)
	}
	rss, err := peakRSS(string(status))
	if err != nil {
		return sample{}, err
	}
	// The RIE writes its report from another goroutine: it may reach the
	// pipe after the answer.
	var init time.Duration
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(time.Millisecond) {
		if init, err = initDuration(fn.Logs()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return sample{}, fmt.Errorf("%w; RIE log:\n%s", err, fn.Logs())
		}
	}
	return sample{first: first, init: init, rss: rss}, nil
}

var vmHWM = regexp.MustCompile(`(?m)^VmHWM:\s+(\d+) kB$`)

// peakRSS reads VmHWM from /proc/<pid>/status, in bytes.
func peakRSS(status string) (int64, error) {
	m := vmHWM.FindStringSubmatch(status)
	if m == nil {
		return 0, errors.New("no VmHWM in the function's status")
	}
	kb, err := strconv.ParseInt(m[1], 10, 64)
	return kb << 10, err
}

var initReport = regexp.MustCompile(`INIT REPORT\(durationMs: ([0-9.]+)\)`)

// initDuration reads the RIE's report of the init phase.
func initDuration(log string) (time.Duration, error) {
	m := initReport.FindStringSubmatch(log)
	if m == nil {
		return 0, errors.New("no INIT REPORT in the RIE log")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	return time.Duration(v * float64(time.Millisecond)), err
}
