//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscfg "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/awsconfig"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// localStack is one run of the local stack's binary (make dev).
type localStack struct {
	t        *testing.T
	cmd      *exec.Cmd
	out, err *syncBuffer
	exited   chan error
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// buildLocal compiles go run ./infra/local's binary.
func buildLocal(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "hookfan-local")
	cmd := exec.Command("go", "build", "-o", bin, "./infra/local")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build the local stack: %v\n%s", err, out)
	}
	return bin
}

// startLocal runs the binary without AWS_ENDPOINT_URL, so it uses (or
// starts) the persistent emulator recorded in its state directory, and
// waits for its banner.
func startLocal(t *testing.T, bin string, args ...string) *localStack {
	t.Helper()
	s := &localStack{t: t, out: &syncBuffer{}, err: &syncBuffer{}, exited: make(chan error, 1)}
	s.cmd = exec.Command(bin, args...)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "AWS_ENDPOINT_URL=") {
			s.cmd.Env = append(s.cmd.Env, kv)
		}
	}
	s.cmd.Stdout, s.cmd.Stderr = s.out, s.err
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() { _ = s.cmd.Process.Kill() })
	waitFor(t, 60*time.Second, "the local stack's banner", func() bool {
		select {
		case err := <-s.exited:
			t.Fatalf("the local stack exited: %v\n%s\n%s", err, s.out, s.err)
		default:
		}
		return strings.Contains(s.err.String(), "\nStop with Ctrl-C")
	})
	return s
}

// stop sends SIGTERM (Ctrl-C's twin) and waits for a clean exit.
func (s *localStack) stop() {
	s.t.Helper()
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-s.exited:
		if err != nil {
			s.t.Fatalf("the local stack exited with %v\n%s", err, s.out)
		}
	case <-time.After(patience(s.t, 60*time.Second)):
		s.t.Fatalf("the local stack did not stop within %s\n%s", patience(s.t, 60*time.Second).Round(time.Second), s.out)
	}
}

// TestDevRestartDeliversAfterRestart: the local stack accepts an event while
// the subscriber is down and is restarted (make dev stopped and run again);
// the emulator outlives it and is reused, so the event, its delivery record
// and the generated signing secret survive, and the event is delivered
// after the restart, verified with the secret read before it.
func TestDevRestartDeliversAfterRestart(t *testing.T) {
	t.Parallel()
	bin := buildLocal(t)
	state := t.TempDir()
	t.Cleanup(func() { _ = exec.Command(bin, "--stop-emulator", "--state-dir", state).Run() })
	dir := t.TempDir()
	subscriber, listen := freeAddr(t), freeAddr(t)
	cfgFile, secretsFile := filepath.Join(dir, "config.json"), filepath.Join(dir, "secrets.json")
	cfgJSON := fmt.Sprintf(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "restart/sources/stripe"}}],
	  "destinations": [{"name": "sub", "url": "http://%s/hooks", "allowPrivateNetworks": true,
	    "retry": {"schedule": ["2s", "4s", "8s", "15s", "30s"], "jitter": 0}}],
	  "metrics": {"sink": "emf"}}`, subscriber)
	if err := os.WriteFile(cfgFile, []byte(cfgJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretsFile, []byte(`{"restart/sources/stripe": "`+stripeSecret+`"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	args := []string{"--config", cfgFile, "--secrets", secretsFile, "--listen", listen, "--state-dir", state}

	first := startLocal(t, bin, args...)
	if !strings.Contains(first.err.String(), ", started;") {
		t.Errorf("first run did not start an emulator:\n%s", first.err)
	}
	emu, ok, err := devstate.ReadEmulatorState(state)
	if err != nil || !ok {
		t.Fatalf("no emulator recorded: %v", err)
	}
	cfg, err := awsconfig.Load(context.Background(), awscfg.WithBaseEndpoint(emu.URL))
	if err != nil {
		t.Fatal(err)
	}
	table := dedupe.NewDynamoDB(dynamodb.NewFromConfig(cfg), devstate.TableName("hookfan-dev"))
	secretName := devstate.DestinationSecretName("hookfan-dev", config.Destination{Name: "sub"})
	readSecret := func() string {
		out, err := secretsmanager.NewFromConfig(cfg).GetSecretValue(context.Background(), &secretsmanager.GetSecretValueInput{SecretId: aws.String(secretName)})
		if err != nil {
			t.Fatalf("read the generated secret: %v", err)
		}
		return aws.ToString(out.SecretString)
	}
	generated := readSecret()

	// The subscriber is down: the event is accepted and its first attempt fails.
	id := postStripe(t, "http://"+listen, "evt_restart_1")
	waitFor(t, 30*time.Second, "a failed first attempt", func() bool {
		r, ok, _ := table.Get(context.Background(), dedupe.Key("sub", id))
		return ok && r.Status == dedupe.StatusFailed
	})
	first.stop()
	if !strings.Contains(first.out.String(), "the emulator keeps running") {
		t.Errorf("first run's last words:\n%s", first.out)
	}

	// The subscriber comes up with the secret read before the restart.
	rc := &receiver{secrets: []string{generated}}
	l, err := net.Listen("tcp", subscriber)
	if err != nil {
		t.Fatal(err)
	}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Listener = l
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)

	second := startLocal(t, bin, args...)
	if !strings.Contains(second.err.String(), fmt.Sprintf("moto_server pid %d, reused;", emu.PID)) {
		t.Errorf("second run did not reuse the emulator (pid %d):\n%s", emu.PID, second.err)
	}
	waitFor(t, 90*time.Second, "the delivery after the restart", func() bool { return rc.accepted(id) == 1 })
	// Nothing more can come once the lane's queue is empty (the delivered
	// message deleted), so the subscriber's requests are final.
	lanes := sqs.NewFromConfig(cfg)
	q, err := lanes.GetQueueUrl(context.Background(), &sqs.GetQueueUrlInput{QueueName: aws.String(devstate.QueueName("hookfan-dev", "sub"))})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the lane's queue empty", func() bool {
		visible, inFlight, delayed := queueCountsOn(t, lanes, aws.ToString(q.QueueUrl))
		return visible+inFlight+delayed == 0
	})
	got := rc.deliveries()
	if len(got) != 1 || !got[0].verified || got[0].header.Get("webhook-id") != id {
		t.Errorf("after the restart the subscriber got %d requests (verified with the secret from before: %v)", len(got), len(got) == 1 && got[0].verified)
	}
	if after := readSecret(); after != generated {
		t.Error("the restart changed the generated destination secret")
	}
	r, _, _ := table.Get(context.Background(), dedupe.Key("sub", id))
	if r.Status != dedupe.StatusDelivered || r.Attempts < 2 {
		t.Errorf("record %s after %d attempts, want DELIVERED after at least 2", r.Status, r.Attempts)
	}
	second.stop()

	out, err := exec.Command(bin, "--stop-emulator", "--state-dir", state).CombinedOutput()
	if err != nil || !strings.Contains(string(out), fmt.Sprintf("stopped the emulator at %s (pid %d)", emu.URL, emu.PID)) {
		t.Errorf("--stop-emulator: %v\n%s", err, out)
	}
	if _, ok, _ := devstate.ReadEmulatorState(state); ok {
		t.Error("the emulator is still recorded after --stop-emulator")
	}
	if resp, err := http.Get(emu.URL + "/moto-api/"); err == nil {
		resp.Body.Close()
		t.Error("the emulator still answers after --stop-emulator")
	}
}

// postStripe signs the Stripe sample with providerID and POSTs it to the
// local stack at base; it returns the event id ingest answered.
func postStripe(t *testing.T, base, providerID string) string {
	t.Helper()
	src := config.Source{Name: "stripe", Verify: config.Verify{Kind: "stripe"}}
	s, err := events.WithEventID(events.MustLoad("stripe", "payment_intent.succeeded"), providerID, src.Event)
	if err != nil {
		t.Fatal(err)
	}
	h, err := events.Sign(src.Verify, s, time.Now(), stripeSecret)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/webhooks/stripe", bytes.NewReader(s.Body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var got struct{ ID string }
	if resp.StatusCode != http.StatusAccepted || json.Unmarshal(body, &got) != nil || got.ID == "" {
		t.Fatalf("ingest answered %d %s", resp.StatusCode, body)
	}
	return got.ID
}
