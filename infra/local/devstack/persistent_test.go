package devstack

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/infra/local/devstate"
)

func TestEmulatorStateFile(t *testing.T) {
	dir := t.TempDir()
	if _, ok, err := devstate.ReadEmulatorState(dir); ok || err != nil {
		t.Errorf("no state file: ok %v, error %v; want neither", ok, err)
	}
	if err := os.WriteFile(filepath.Join(dir, devstate.EmulatorStateFile), []byte(`{"url": "", "pid": 0}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := devstate.ReadEmulatorState(dir); err == nil || !strings.Contains(err.Error(), "is unreadable") || !strings.Contains(err.Error(), "remove it") {
		t.Errorf("a bad state file: %v, want an error saying what to do", err)
	}
	// A recorded emulator that is gone: stopping only removes the record.
	if err := os.WriteFile(filepath.Join(dir, devstate.EmulatorStateFile), []byte(`{"url": "http://127.0.0.1:1", "pid": 999999999}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s, stopped, err := StopEmulator(context.Background(), dir)
	if err != nil || stopped || s.PID != 999999999 {
		t.Errorf("stop a gone emulator: %+v, stopped %v, %v", s, stopped, err)
	}
	if _, ok, _ := devstate.ReadEmulatorState(dir); ok {
		t.Error("the record of a gone emulator was kept")
	}
	// Nothing recorded, or no directory at all: nothing to stop.
	if _, stopped, err := StopEmulator(context.Background(), dir); stopped || err != nil {
		t.Errorf("stop with no record: %v, %v", stopped, err)
	}
	if _, stopped, err := StopEmulator(context.Background(), filepath.Join(dir, "missing")); stopped || err != nil {
		t.Errorf("stop with no directory: %v, %v", stopped, err)
	}
}

func TestProcessAlive(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Error("this process is not alive")
	}
	if processAlive(999999999) {
		t.Error("a pid that cannot exist is alive")
	}
}
