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
// the environment Lambda gives them and nothing from this machine's; their
// AWS endpoint is a local stub that answers every call with an error and
// counts it. The first events need no AWS call (ingest: a request for an
// unknown source, answered 404; deliver: an empty batch), so the stub must
// see none. Rounds interleave the three functions so that noise on a
// shared machine falls on all of them alike; each figure is a median.
//
// Two more programs show what the functions cannot shed: sdk-ingest and
// sdk-deliver are the baseline linking the AWS SDK service packages each
// function links (infra/coldstart/sdkfloor), whose package initialisation
// runs at every cold start whether or not a client is built.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// function is one program measured.
type function struct {
	name  string // its bootstrap's file name in -dir
	event string // the first invocation's payload
	want  string // what the answer must contain
	env   map[string]string
	floor string // the program linking only its SDK packages; "" for the baselines
	// budgeted: its init is held to the budget. The builds linking every
	// feature's client (the -all programs) are measured and reported only:
	// a configuration using a feature pays for its client.
	budgeted bool
}

// baseline is the function the others are compared with.
const baseline = "hello"

// The functions as the stack builds them for a configuration using no
// optional feature (every lambdaenv.No*BuildTag), then, as -all, built
// with every feature and configured with large payloads and (ingest)
// replay protection. A lane that pauses is not configured: its first
// batch reads the lane's state, an AWS call. Each function has its SDK
// floor, built with the same tags.
var functions = []function{
	{name: baseline, event: `{}`, want: `"hello"`},
	{name: "sdk-ingest", event: `{}`, want: `"hello"`},
	{name: "ingest", floor: "sdk-ingest", budgeted: true, event: ingestEvent, want: `"statusCode":404`, env: ingestEnv},
	{name: "sdk-deliver", event: `{}`, want: `"hello"`},
	{name: "deliver", floor: "sdk-deliver", budgeted: true, event: deliverEvent, want: `"batchItemFailures":[]`, env: deliverEnv},
	{name: "sdk-ingest-all", event: `{}`, want: `"hello"`},
	{name: "ingest-all", floor: "sdk-ingest-all", event: ingestEvent, want: `"statusCode":404`, env: with(ingestEnv, map[string]string{
		"HOOKFAN_SOURCES":        `[{"name":"stripe","verify":{"kind":"stripe","secretName":"hookfan/sources/stripe"},"maxBodyBytes":4521984},{"name":"github","verify":{"kind":"github","secretName":"hookfan/sources/github"}}]`,
		"HOOKFAN_REPLAY_TABLE":   "hookfan-deliveries",
		"HOOKFAN_PAYLOAD_BUCKET": "hookfan-payloads",
	})},
	{name: "sdk-deliver-all", event: `{}`, want: `"hello"`},
	{name: "deliver-all", floor: "sdk-deliver-all", event: deliverEvent, want: `"batchItemFailures":[]`, env: with(deliverEnv, map[string]string{
		"HOOKFAN_PAYLOAD_BUCKET": "hookfan-payloads",
	})},
}

// The first events need no AWS call: ingest answers a request for an
// unknown source 404, deliver an empty batch.
const (
	ingestEvent  = `{"resource":"/webhooks/{source}","path":"/webhooks/unknown","httpMethod":"POST","headers":{"Content-Type":"application/json"},"pathParameters":{"source":"unknown"},"requestContext":{"requestId":"coldstart"},"body":"{}","isBase64Encoded":false}`
	deliverEvent = `{"Records":[]}`
)

var (
	ingestEnv = map[string]string{
		"HOOKFAN_SOURCES":      `[{"name":"stripe","verify":{"kind":"stripe","secretName":"hookfan/sources/stripe"}}]`,
		"HOOKFAN_TOPIC_ARN":    "arn:aws:sns:us-east-1:123456789012:hookfan-events",
		"HOOKFAN_METRICS_SINK": "emf",
	}
	deliverEnv = map[string]string{
		"HOOKFAN_DESTINATION":  `{"name":"orders","url":"https://orders.example.com/hooks"}`,
		"HOOKFAN_TABLE_NAME":   "hookfan-deliveries",
		"HOOKFAN_QUEUE_URL":    "https://sqs.us-east-1.amazonaws.com/123456789012/hookfan-orders",
		"HOOKFAN_SECRET_ID":    "hookfan/destinations/orders",
		"HOOKFAN_RECORD_DAYS":  "30",
		"HOOKFAN_METRICS_SINK": "emf",
	}
)

// with returns env with more's variables set over it.
func with(env, more map[string]string) map[string]string {
	out := maps.Clone(env)
	maps.Copy(out, more)
	return out
}

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
	budget := flag.Float64("budget", 1.5, "largest init time allowed, as a multiple of the baseline's")
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
		return fmt.Errorf("init over %.1f× the baseline: %s", budget, strings.Join(over, ", "))
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

// coldStart runs one fresh RIE with f and invokes it once.
func coldStart(rie, dir string, f function, endpoint string) (sample, error) {
	addr, err := freeAddr()
	if err != nil {
		return sample{}, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return sample{}, err
	}
	bootstrap, err := filepath.Abs(filepath.Join(dir, f.name))
	if err != nil {
		return sample{}, err
	}
	if rie, err = filepath.Abs(rie); err != nil {
		return sample{}, err
	}
	cmd := exec.Command(rie, "--log-level", "info", "--runtime-interface-emulator-address", addr, "--runtime-api-address", apiAddr, bootstrap)
	cmd.Dir = dir
	cmd.Env = lambdaEnv(f, endpoint)
	var logs lockedBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return sample{}, fmt.Errorf("start the RIE: %w", err)
	}
	defer stop(cmd)
	if err := waitListening(addr, 10*time.Second); err != nil {
		return sample{}, err
	}

	start := time.Now()
	resp, err := http.Post("http://"+addr+"/2015-03-31/functions/function/invocations", "application/json", strings.NewReader(f.event))
	if err != nil {
		return sample{}, fmt.Errorf("invoke: %w", err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	first := time.Since(start)
	if err != nil || !strings.Contains(string(body), f.want) {
		return sample{}, fmt.Errorf("answer %q (%v), want one holding %s; RIE log:\n%s", body, err, f.want, logs.String())
	}

	child, err := childOf(cmd.Process.Pid)
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
		if init, err = initDuration(logs.String()); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return sample{}, fmt.Errorf("%w; RIE log:\n%s", err, logs.String())
		}
	}
	return sample{first: first, init: init, rss: rss}, nil
}

// lambdaEnv is the environment Lambda gives a function, with f's own
// variables; nothing is inherited from this machine (a CA bundle in
// AWS_CA_BUNDLE, say, would cost the SDK milliseconds Lambda never pays).
func lambdaEnv(f function, endpoint string) []string {
	env := map[string]string{
		"PATH":                            "/usr/local/bin:/usr/bin:/bin",
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "AKIDCOLDSTART",
		"AWS_SECRET_ACCESS_KEY":           "coldstart",
		"AWS_SESSION_TOKEN":               "coldstart",
		"AWS_ENDPOINT_URL":                endpoint,
		"AWS_LAMBDA_FUNCTION_NAME":        f.name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     "20",
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + f.name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      "coldstart",
	}
	for k, v := range f.env {
		env[k] = v
	}
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// stop ends the RIE (which ends the function) and makes sure the function
// process is gone.
func stop(cmd *exec.Cmd) {
	child, _ := childOf(cmd.Process.Pid)
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
	if child > 0 {
		_ = syscall.Kill(child, syscall.SIGKILL) // already gone in the usual case
	}
}

func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

func waitListening(addr string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the RIE did not listen on %s within %s", addr, timeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// childOf finds the process whose parent is pid (the RIE has one child:
// the function).
func childOf(pid int) (int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0, err
	}
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if ppid, err := parentPID(string(stat)); err == nil && ppid == pid {
			return n, nil
		}
	}
	return 0, fmt.Errorf("no child process of %d", pid)
}

// parentPID reads the ppid field of /proc/<pid>/stat. The command name,
// in parentheses, may itself hold spaces and parentheses.
func parentPID(stat string) (int, error) {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	fields := strings.Fields(stat[i+1:])
	if len(fields) < 2 {
		return 0, errors.New("malformed stat")
	}
	return strconv.Atoi(fields[1])
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

// lockedBuffer collects a process's output.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
