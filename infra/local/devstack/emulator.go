// Package devstack realizes Hookfan's topology on an AWS emulator (moto
// server or LocalStack) through the SDK, and runs the functions the way AWS
// would: ingest behind an API Gateway–shaped HTTP adapter, and each deliver
// function behind a poller with the SQS event source mapping's semantics.
// The local stack (go run ./infra/local) and the integration tests share it.
package devstack

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// Emulator is a moto server started by this process.
type Emulator struct {
	URL string
	cmd *exec.Cmd
}

// ErrNoEmulator means no moto_server executable was found.
var ErrNoEmulator = errors.New("moto_server not found on PATH; install it with pip install \"moto[server]\" or set AWS_ENDPOINT_URL to a running emulator")

// StartMoto starts moto_server on a free loopback port and waits until it
// answers. logPath receives its output ("" discards it).
func StartMoto(ctx context.Context, logPath string) (*Emulator, error) {
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return nil, ErrNoEmulator
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if logPath != "" {
		f, err := os.Create(logPath)
		if err != nil {
			return nil, fmt.Errorf("moto log: %w", err)
		}
		cmd.Stdout, cmd.Stderr = f, f
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start moto_server: %w", err)
	}
	e := &Emulator{URL: fmt.Sprintf("http://127.0.0.1:%d", port), cmd: cmd}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Ready within ctx's deadline, or 30 s without one: moto imports every
	// service it emulates, which takes seconds, and longer on a busy
	// machine.
	deadline := time.Now().Add(30 * time.Second)
	if d, ok := ctx.Deadline(); ok {
		deadline = d
	}
	for {
		resp, err := http.Get(e.URL + "/moto-api/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				go func() { <-exited }()
				return e, nil
			}
		}
		select {
		case err := <-exited:
			return nil, fmt.Errorf("moto_server exited before it was ready: %v", err)
		case <-ctx.Done():
			e.Stop()
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			e.Stop()
			return nil, fmt.Errorf("moto_server did not answer on %s in time", e.URL)
		}
	}
}

// Stop ends the emulator and everything it started.
func (e *Emulator) Stop() {
	if e == nil || e.cmd == nil || e.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGTERM)
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
