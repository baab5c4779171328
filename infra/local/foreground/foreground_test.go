package foreground

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/creack/pty"
)

// helperEnv makes the test binary act as the recipe's command: "take" calls
// Take, "plain" does not; both wait for Ctrl-C and exit 0.
const helperEnv = "FOREGROUND_TEST_HELPER"

func TestMain(m *testing.M) {
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(helper(mode))
	}
	os.Exit(m.Run())
}

func helper(mode string) int {
	interrupted := make(chan os.Signal, 1)
	signal.Notify(interrupted, os.Interrupt)
	restore, took := func() {}, false
	if mode == "take" {
		restore, took = Take(os.Stdin)
	}
	fmt.Printf("ready took=%v\n", took)
	<-interrupted
	restore()
	fmt.Println("stopped cleanly")
	return 0
}

// runMakeUnderTerminal runs make with a one-line recipe that starts the
// helper, in a new session whose controlling terminal is a pty, types
// Ctrl-C once the helper is ready, and returns make's exit and the output.
func runMakeUnderTerminal(t *testing.T, mode string) (*os.ProcessState, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	makefile := filepath.Join(t.TempDir(), "Makefile")
	recipe := fmt.Sprintf("dev:\n\t@%s=%s %s -test.run=^$\n", helperEnv, mode, self)
	if err := os.WriteFile(makefile, []byte(recipe), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("make", "-f", makefile, "dev")
	// pty.Start gives make a new session with the pty as its controlling
	// terminal and make's group as the terminal's foreground group: an
	// interactive shell's job.
	master, err := pty.Start(cmd)
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	lines := make(chan string)
	var out strings.Builder
	go func() {
		s := bufio.NewScanner(master)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	// No deadline: the test binary's -timeout bounds a make that never
	// gets ready on a loaded machine.
	for line := range lines {
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "ready") {
			break
		}
	}
	if _, err := master.Write([]byte{3}); err != nil { // the terminal's VINTR, Ctrl-C
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var waitErr error
	for finished := false; !finished; {
		select {
		case line, ok := <-lines:
			if ok {
				out.WriteString(line + "\n")
			} else {
				lines = nil
			}
		case waitErr = <-done:
			finished = true
		}
	}
	var exit *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exit) {
		t.Fatalf("make: %v", waitErr)
	}
	// What make and the helper printed last: the reader ends when the
	// terminal's last user is gone.
	if lines != nil {
		for line := range lines {
			out.WriteString(line + "\n")
		}
	}
	return cmd.ProcessState, out.String()
}

// TestCtrlCUnderMakeExitsWithTheCommandsStatus: with Take, Ctrl-C reaches
// the recipe's command alone, which stops cleanly, and make exits 0.
func TestCtrlCUnderMakeExitsWithTheCommandsStatus(t *testing.T) {
	state, out := runMakeUnderTerminal(t, "take")
	if !strings.Contains(out, "ready took=true") {
		t.Fatalf("the helper did not take the terminal:\n%s", out)
	}
	if !strings.Contains(out, "stopped cleanly") {
		t.Errorf("the helper did not get Ctrl-C:\n%s", out)
	}
	if code := state.ExitCode(); code != 0 {
		t.Errorf("make exited %d (%v), want 0\n%s", code, state, out)
	}
}

// TestCtrlCUnderMakeWithoutTake is the control: without Take, make gets
// Ctrl-C too and dies of it, though the command itself stops cleanly —
// what make dev did before.
func TestCtrlCUnderMakeWithoutTake(t *testing.T) {
	state, out := runMakeUnderTerminal(t, "plain")
	ws, ok := state.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() || ws.Signal() != syscall.SIGINT {
		t.Errorf("make ended with %v, want killed by SIGINT\n%s", state, out)
	}
}

// TestTakeWithoutATerminal: not a terminal (a pipe, a file, CI) changes
// nothing.
func TestTakeWithoutATerminal(t *testing.T) {
	f, err := os.Open(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	before := syscall.Getpgrp()
	restore, took := Take(f)
	restore()
	if took {
		t.Error("took /dev/null as a terminal")
	}
	if after := syscall.Getpgrp(); after != before {
		t.Errorf("process group changed from %d to %d", before, after)
	}
}
