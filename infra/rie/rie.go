// Package rie runs a Lambda function's built bootstrap under the Lambda
// Runtime Interface Emulator (aws-lambda-rie) and invokes it over the
// RIE's Invoke API, as Lambda would: the cold-start harness
// (infra/tools/coldstart) measures with it, the integration tests deliver
// through the built binaries with it. The functions write their metrics
// as Embedded Metric Format lines only; Forwarder puts them on the
// emulator's CloudWatch, as CloudWatch Logs does in AWS, for a harness
// that reads them back.
package rie

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Function is one RIE process and the function process it starts on the
// first invoke.
type Function struct {
	cmd  *exec.Cmd
	addr string
	logs lockedBuffer
}

// Env is the environment Lambda gives a function named name, with vars
// (the function's own) set over it and its AWS endpoint at endpoint;
// nothing is inherited from this machine (a CA bundle in AWS_CA_BUNDLE,
// say, would cost the SDK milliseconds Lambda never pays).
func Env(name, endpoint string, timeout time.Duration, vars map[string]string) []string {
	env := map[string]string{
		"PATH":                            "/usr/local/bin:/usr/bin:/bin",
		"TZ":                              ":UTC",
		"LANG":                            "en_US.UTF-8",
		"AWS_REGION":                      "us-east-1",
		"AWS_DEFAULT_REGION":              "us-east-1",
		"AWS_ACCESS_KEY_ID":               "AKIDRIE",
		"AWS_SECRET_ACCESS_KEY":           "rie",
		"AWS_SESSION_TOKEN":               "rie",
		"AWS_ENDPOINT_URL":                endpoint,
		"AWS_LAMBDA_FUNCTION_NAME":        name,
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "256",
		"AWS_LAMBDA_FUNCTION_VERSION":     "$LATEST",
		"AWS_LAMBDA_FUNCTION_TIMEOUT":     strconv.Itoa(int(timeout / time.Second)),
		"AWS_LAMBDA_LOG_GROUP_NAME":       "/aws/lambda/" + name,
		"AWS_LAMBDA_LOG_STREAM_NAME":      "rie",
	}
	maps.Copy(env, vars)
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	slices.Sort(out)
	return out
}

// Start runs the RIE at rie with the bootstrap (the function starts on
// the first invoke) in env, and waits until it listens. Each of tee also
// receives everything the RIE and the function write, as Logs holds it:
// a Forwarder there puts the function's EMF metrics on the emulator, as
// CloudWatch Logs does in AWS.
func Start(ctx context.Context, rie, bootstrap string, env []string, tee ...io.Writer) (*Function, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	apiAddr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	if bootstrap, err = filepath.Abs(bootstrap); err != nil {
		return nil, err
	}
	if rie, err = filepath.Abs(rie); err != nil {
		return nil, err
	}
	f := &Function{addr: addr}
	f.cmd = exec.Command(rie, "--log-level", "info", "--runtime-interface-emulator-address", addr, "--runtime-api-address", apiAddr, bootstrap)
	f.cmd.Dir = filepath.Dir(bootstrap)
	f.cmd.Env = env
	// One writer for both, so that exec gives the process one pipe and the
	// lines arrive whole and in order.
	out := io.Writer(&f.logs)
	if len(tee) > 0 {
		out = io.MultiWriter(append([]io.Writer{&f.logs}, tee...)...)
	}
	f.cmd.Stdout, f.cmd.Stderr = out, out
	if err := f.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the RIE: %w", err)
	}
	// Both the Invoke API and the runtime API the function calls: the RIE
	// may start the function before the latter listens, on a loaded
	// machine, and the function then exits on "connection refused".
	for _, a := range []string{addr, apiAddr} {
		if err := waitListening(ctx, a); err != nil {
			f.Stop()
			return nil, fmt.Errorf("%w; RIE log:\n%s", err, f.Logs())
		}
	}
	return f, nil
}

// Invoke sends one invocation through the RIE's Invoke API and returns
// the function's answer.
func (f *Function) Invoke(ctx context.Context, payload []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+f.addr+"/2015-03-31/functions/function/invocations", bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("invoke: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("invoke: read the answer: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return body, fmt.Errorf("invoke: the RIE answered %d %s", resp.StatusCode, body)
	}
	return body, nil
}

// Endpoint is the RIE's Invoke API, where an SDK's Lambda client can be
// pointed (its one function is named "function").
func (f *Function) Endpoint() string { return "http://" + f.addr }

// Unreached reports whether the function process could not reach the
// RIE's runtime API and exited (aws-lambda-go logs "failed to get the next
// invoke"): seen on a loaded machine, when another process took the port
// between picking it and the RIE binding it. The function ran none of its
// handler; a fresh RIE, on fresh ports, is the retry.
func (f *Function) Unreached() bool {
	return strings.Contains(f.Logs(), "failed to get the next invoke")
}

// Pid is the RIE's process id (the function is its one child).
func (f *Function) Pid() int { return f.cmd.Process.Pid }

// Logs is what the RIE and the function wrote so far.
func (f *Function) Logs() string { return f.logs.String() }

// Stop ends the RIE (which ends the function) and makes sure the function
// process is gone.
func (f *Function) Stop() {
	child, _ := ChildOf(f.cmd.Process.Pid)
	_ = f.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = f.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = f.cmd.Process.Kill()
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

// waitListening waits for the RIE's Invoke API, at most 30 s (a loaded
// machine) or until ctx is done.
func waitListening(ctx context.Context, addr string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var d net.Dialer
	for {
		c, err := d.DialContext(ctx, "tcp", addr)
		if err == nil {
			return c.Close()
		}
		if ctx.Err() != nil {
			return fmt.Errorf("the RIE did not listen on %s: %w", addr, ctx.Err())
		}
		time.Sleep(2 * time.Millisecond)
	}
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

// ChildOf finds the process whose parent is pid (the RIE has one child:
// the function).
func ChildOf(pid int) (int, error) {
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
