package devstack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstate"
)

// Files a persistent emulator keeps in its state directory, besides its
// record (devstate.EmulatorStateFile).
const (
	emulatorLockFile = "emulator.lock"
	emulatorLogFile  = "moto.log"
)

// EnsureMoto returns the persistent moto server recorded in dir when it
// still answers, and otherwise starts one (in its own session, so it
// survives this process and its terminal's signals) and records it. Two
// local stacks starting at once share one emulator: dir is locked while
// this runs.
func EnsureMoto(ctx context.Context, dir string) (s devstate.EmulatorState, reused bool, err error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return s, false, fmt.Errorf("emulator state directory: %w", err)
	}
	unlock, err := lockFile(filepath.Join(dir, emulatorLockFile))
	if err != nil {
		return s, false, err
	}
	defer unlock()
	s, ok, err := devstate.ReadEmulatorState(dir)
	if err != nil {
		return s, false, err
	}
	if ok && processAlive(s.PID) && answers(ctx, s.URL) {
		return s, true, nil
	}
	bin, err := exec.LookPath("moto_server")
	if err != nil {
		return s, false, ErrNoEmulator
	}
	port, err := freePort()
	if err != nil {
		return s, false, err
	}
	logPath := filepath.Join(dir, emulatorLogFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return s, false, fmt.Errorf("moto log: %w", err)
	}
	defer logf.Close()
	cmd := exec.Command(bin, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return s, false, fmt.Errorf("start moto_server: %w", err)
	}
	s = devstate.EmulatorState{URL: fmt.Sprintf("http://127.0.0.1:%d", port), PID: cmd.Process.Pid, Log: logPath, StartedAt: time.Now().UTC()}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	if err := waitReady(ctx, s.URL, exited); err != nil {
		_ = syscall.Kill(-s.PID, syscall.SIGTERM)
		return s, false, err
	}
	data, _ := json.MarshalIndent(s, "", "  ")
	if err := writeFileAtomic(filepath.Join(dir, devstate.EmulatorStateFile), append(data, '\n')); err != nil {
		_ = syscall.Kill(-s.PID, syscall.SIGTERM)
		return s, false, err
	}
	return s, false, nil
}

// StopEmulator stops the persistent emulator recorded in dir (its whole
// session) and removes the record; everything it held is gone. stopped is
// false when none was recorded or it had already exited.
func StopEmulator(ctx context.Context, dir string) (s devstate.EmulatorState, stopped bool, err error) {
	unlock, err := lockFile(filepath.Join(dir, emulatorLockFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	defer unlock()
	s, ok, err := devstate.ReadEmulatorState(dir)
	if err != nil || !ok {
		return s, false, err
	}
	if processAlive(s.PID) {
		stopped = true
		_ = syscall.Kill(-s.PID, syscall.SIGTERM)
		deadline := time.Now().Add(10 * time.Second)
		for processAlive(s.PID) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(-s.PID, syscall.SIGKILL)
				break
			}
			select {
			case <-ctx.Done():
				return s, stopped, ctx.Err()
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	if err := os.Remove(filepath.Join(dir, devstate.EmulatorStateFile)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s, stopped, err
	}
	return s, stopped, nil
}

// processAlive reports whether pid runs (a zombie, exited but not yet
// reaped by its parent, does not).
func processAlive(pid int) bool {
	if syscall.Kill(pid, 0) != nil {
		return false
	}
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true // no /proc: trust kill(2)
	}
	// The state follows the command, which is in parentheses.
	if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// answers reports whether a moto server answers at url.
func answers(ctx context.Context, url string) bool {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url+"/moto-api/", nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// ReadyTimeout is how long a moto server started for the local stack may
// take to answer: seconds on an idle machine, far longer on a loaded one.
const ReadyTimeout = 2 * time.Minute

// waitReady waits until the server at url answers, the process exits, or
// ReadyTimeout passes.
func waitReady(ctx context.Context, url string, exited <-chan struct{}) error {
	deadline := time.Now().Add(ReadyTimeout)
	for !answers(ctx, url) {
		select {
		case <-exited:
			return errors.New("moto_server exited before it was ready")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("moto_server did not answer on %s within %s", url, ReadyTimeout)
		}
	}
	return nil
}

// lockFile takes an exclusive lock on path (creating it when its directory
// exists) and returns its release.
func lockFile(path string) (func(), error) {
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
