//go:build integration

package integration

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// TestMakeDevCtrlCExitsZero runs the real make dev recipe (the local stack
// built once, on this run's emulator) in a terminal, types Ctrl-C once the
// banner is up, and wants the clean stop's status from make: 0, not make's
// 130 for an interrupted recipe (#25).
func TestMakeDevCtrlCExitsZero(t *testing.T) {
	t.Parallel()
	binDir := t.TempDir()
	build := exec.Command("go", "build", "-o", filepath.Join(binDir, "local"), "./infra/local")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the local stack: %v\n%s", err, out)
	}
	prefix := uniquePrefix(t)
	dir := t.TempDir()
	cfgFile, secretsFile := filepath.Join(dir, "config.json"), filepath.Join(dir, "secrets.json")
	cfgJSON := fmt.Sprintf(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "%s/sources/stripe"}}],
	  "destinations": [{"name": "sub", "url": "http://%s/hooks", "allowPrivateNetworks": true}],
	  "metrics": {"sink": "emf"}}`, prefix, freeAddr(t))
	if err := os.WriteFile(cfgFile, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretsFile, []byte(`{"`+prefix+`/sources/stripe": "`+stripeSecret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	// -o: the binary just built is not remade from the sources.
	cmd := exec.Command("make", "--no-print-directory", "-o", filepath.Join(binDir, "local"), "dev",
		"BIN="+binDir, "DEV_CONFIG="+cfgFile, "DEV_SECRETS="+secretsFile,
		"DEV_FLAGS=--listen "+freeAddr(t)+" --prefix "+prefix)
	cmd.Dir = ".."
	master, err := pty.Start(cmd) // a session of its own, the pty its terminal, make its foreground job
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	lines := make(chan string)
	go func() {
		s := bufio.NewScanner(master)
		for s.Scan() {
			lines <- s.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	ready := false
	// No deadline of its own: provisioning on a loaded emulator takes what
	// it takes, within the test binary's -timeout.
	for line := range lines {
		out.WriteString(line + "\n")
		if strings.HasPrefix(line, "Stop with Ctrl-C") {
			ready = true
			break
		}
	}
	if !ready {
		_ = cmd.Wait()
		t.Fatalf("make dev ended before its banner (%v):\n%s", cmd.ProcessState, out.String())
	}
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	for line := range lines {
		out.WriteString(line + "\n")
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatal(err)
	}
	if code := cmd.ProcessState.ExitCode(); code != 0 {
		t.Errorf("make dev exited %d (%v) after Ctrl-C, want 0\n%s", code, cmd.ProcessState, out.String())
	}
	if !strings.Contains(out.String(), "stopped cleanly") {
		t.Errorf("no clean stop logged:\n%s", out.String())
	}
	if strings.Contains(out.String(), "Interrupt") {
		t.Errorf("make reported an interrupted recipe:\n%s", out.String())
	}
}
