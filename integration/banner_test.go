//go:build integration

package integration

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestBannerAWSCommandsWork runs the aws CLI commands the local stack's
// banner prints, as printed, in a shell whose only AWS settings are the
// banner's export: they must work with the CLI installed here (v1 on this
// machine, which reads neither AWS_ENDPOINT_URL nor AWS_REGION) and find
// the stack's queues, table and bucket.
func TestBannerAWSCommandsWork(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("aws"); err != nil {
		t.Fatalf("this test runs the banner's aws commands and needs the AWS CLI (README: prerequisites): %v", err)
	}
	bin := buildLocal(t)
	dir := t.TempDir()
	cfgFile, secretsFile := filepath.Join(dir, "config.json"), filepath.Join(dir, "secrets.json")
	prefix := fmt.Sprintf("banner%d", os.Getpid())
	cfgJSON := `{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "banner/sources/stripe"}}],
	  "destinations": [{"name": "sub", "url": "http://127.0.0.1:9/hooks", "allowPrivateNetworks": true}],
	  "archive": {"days": 1}, "metrics": {"sink": "emf"}}`
	if err := os.WriteFile(cfgFile, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretsFile, []byte(`{"banner/sources/stripe": "`+stripeSecret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startLocal(t, bin, "--config", cfgFile, "--secrets", secretsFile, "--listen", freeAddr(t),
		"--endpoint", os.Getenv("AWS_ENDPOINT_URL"), "--prefix", prefix, "--state-dir", filepath.Join(dir, "state"))
	defer s.stop()

	var export, secret string
	var commands []string
	for _, line := range strings.Split(s.err.String(), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(line, "go run ./events/receive ") && strings.Contains(line, `--secret "$(`):
			secret = line[strings.Index(line, `"$(`):]
		case strings.HasPrefix(line, "export AWS_"):
			export = line
		case strings.HasPrefix(line, "aws "):
			commands = append(commands, line)
		}
	}
	if export == "" || len(commands) != 3 || secret == "" {
		t.Fatalf("banner: export %q and %d aws commands, want an export and 3 (queues, table, archive), and a receive command reading the generated secret (%q):\n%s", export, len(commands), secret, s.err)
	}
	// A shell with no AWS settings of its own, nor a profile to fall back on.
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_") && !strings.HasPrefix(kv, "HOME=") {
			env = append(env, kv)
		}
	}
	env = append(env, "HOME="+dir)
	wants := []string{prefix + "-sub", `"ScannedCount"`, ""} // an empty archive lists nothing, and succeeds
	for i, c := range commands {
		cmd := exec.Command("bash", "-c", export+"\n"+c)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), wants[i]) {
			t.Errorf("$ %s\n%s(%v); want it to succeed and show %q", c, out, err, wants[i])
		}
	}
	// The receive command's secret, read by the aws CLI as printed, with no export before it.
	cmd := exec.Command("bash", "-c", "printf %s "+secret)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	// Generated as the deployed stack generates one: 32 letters and digits.
	if err != nil || !regexp.MustCompile(`^[A-Za-z0-9]{32}$`).Match(out) {
		t.Errorf("$ printf %%s %s\n%s(%v); want the generated secret, 32 letters and digits as deployed", secret, out, err)
	}
}

// TestLocalConfigErrorsArePlainLines: a configuration that does not
// validate stops the local stack with each problem on its own plain line
// (the file and the field's path in it), not one JSON log line with the
// newlines escaped.
func TestLocalConfigErrorsArePlainLines(t *testing.T) {
	t.Parallel()
	bin := buildLocal(t)
	file := filepath.Join(t.TempDir(), "bad.json")
	bad := `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "x"}}],
	  "destinations": [{"name": "d", "url": "http://10.0.0.1/hooks", "maxConcurrency": 1}]}`
	if err := os.WriteFile(file, []byte(bad), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", file, "--endpoint", os.Getenv("AWS_ENDPOINT_URL"), "--state-dir", t.TempDir())
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err == nil {
		t.Fatal("the local stack started with an invalid configuration")
	}
	lines := strings.Split(strings.TrimSpace(stderr.String()), "\n")
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "local: config "+file) ||
		!strings.HasPrefix(lines[1], "  destinations[0].") || !strings.HasPrefix(lines[2], "  destinations[0].") {
		t.Errorf("stderr, want the file on the first line and one problem a line after it:\n%s", stderr.String())
	}
	if strings.Contains(stdout.String(), `"level"`) || strings.Contains(stderr.String(), `\n`) {
		t.Errorf("a JSON log line or escaped newlines:\nstdout %s\nstderr %s", stdout.String(), stderr.String())
	}
}

// TestLocalRefusesAListenAddressBeyondLoopback: the local stack, whose
// sources verify with secrets published in the repository, refuses to
// listen where other machines may reach it unless told to, before it
// starts anything.
func TestLocalRefusesAListenAddressBeyondLoopback(t *testing.T) {
	t.Parallel()
	bin := buildLocal(t)
	state := filepath.Join(t.TempDir(), "state")
	cmd := exec.Command(bin, "--config", "../infra/local/dev.json", "--secrets", "../infra/local/dev-secrets.json",
		"--listen", "0.0.0.0:0", "--state-dir", state)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want 1\n%s", err, out)
	}
	if !strings.Contains(string(out), `local: --listen "0.0.0.0:0" serves 0.0.0.0`) || !strings.Contains(string(out), "--allow-non-loopback") {
		t.Errorf("output, want the refusal naming the flag, the value and --allow-non-loopback:\n%s", out)
	}
	if _, err := os.Stat(state); !os.IsNotExist(err) {
		t.Errorf("state dir %s: %v, want nothing started", state, err)
	}
}
