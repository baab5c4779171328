package main

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// captured is what the test server received.
type captured struct {
	mu       sync.Mutex
	path     string
	header   http.Header
	body     []byte
	requests int
}

func capture(t *testing.T) (*httptest.Server, *captured) {
	t.Helper()
	c := &captured{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		c.mu.Lock()
		c.path, c.header, c.body = r.URL.Path, r.Header.Clone(), b
		c.requests++
		c.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
		io.WriteString(w, `{"id":"evt_x"}`)
	}))
	t.Cleanup(srv.Close)
	return srv, c
}

func hmacHex(secret, msg string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(msg))
	return hex.EncodeToString(m.Sum(nil))
}

// The dev config and secrets, as make send passes them.
var devArgs = []string{"--config", "../../infra/local/dev.json", "--secrets", "../../infra/local/dev-secrets.json"}

func TestSendSignsACapturedStripeBody(t *testing.T) {
	srv, c := capture(t)
	// A body as Stripe sent it: key order, spacing and a large number kept.
	body := "{\n  \"type\": \"charge.refunded\", \"id\": \"evt_1Captured\",\n  \"object\": \"event\", \"data\": {\"object\": {\"amount\": 12345678901234567890}}\n}\n"
	file := filepath.Join(t.TempDir(), "captured.json")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(append(devArgs, "--url", srv.URL, "--source", "stripe", "--body", file), &out); err != nil {
		t.Fatal(err)
	}
	if string(c.body) != body {
		t.Errorf("sent body %q, want the file's bytes %q", c.body, body)
	}
	if c.path != "/webhooks/stripe" {
		t.Errorf("posted to %s", c.path)
	}
	sig := c.header.Get("Stripe-Signature")
	ts, v1, _ := strings.Cut(strings.TrimPrefix(sig, "t="), ",v1=")
	if want := hmacHex("whsec_dev_stripe_not_a_real_secret", ts+"."+body); v1 != want {
		t.Errorf("Stripe-Signature %q: v1 is not the HMAC of the timestamp and the body under the source's secret", sig)
	}
	if !strings.Contains(out.String(), "(the body's id) → 202") {
		t.Errorf("output %q does not say the body's own id was sent", out.String())
	}
}

func TestSendSignsACapturedGitHubBodyWithItsType(t *testing.T) {
	srv, c := capture(t)
	body := `{"action":"closed","number":7}`
	file := filepath.Join(t.TempDir(), "pr.json")
	if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(append(devArgs, "--url", srv.URL, "--source", "github", "--body", file, "--type", "pull_request.closed", "--id", "d-1"), &out); err != nil {
		t.Fatal(err)
	}
	if string(c.body) != body {
		t.Errorf("sent body %q, want %q (no field added)", c.body, body)
	}
	for header, want := range map[string]string{
		"X-GitHub-Event":      "pull_request",
		"X-GitHub-Delivery":   "d-1",
		"X-Hub-Signature-256": "sha256=" + hmacHex("dev github secret, not real", body),
	} {
		if got := c.header.Get(header); got != want {
			t.Errorf("%s: %q, want %q", header, got, want)
		}
	}
}

func TestSendRefusesATypeItCannotSend(t *testing.T) {
	srv, c := capture(t)
	file := filepath.Join(t.TempDir(), "b.json")
	if err := os.WriteFile(file, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"--source", "stripe", "--body", file, "--type", "charge.refunded"}, // Stripe's type is in the body
		{"--source", "github", "--body", file},                              // GitHub's is in a header: say which
		{"--source", "stripe", "--type", "charge.refunded"},                 // --type without --body
	} {
		if err := run(append(append(devArgs, "--url", srv.URL), args...), io.Discard); err == nil {
			t.Errorf("%v: sent", args)
		}
	}
	if c.requests != 0 {
		t.Errorf("%d requests sent by refused command lines", c.requests)
	}
}

func TestNewIDsAreShapedAsTheProvidersMakeThem(t *testing.T) {
	for kind, shape := range map[string]*regexp.Regexp{
		"stripe":            regexp.MustCompile(`^evt_[0-9A-Za-z]{24}$`),
		"slack":             regexp.MustCompile(`^Ev[0-9A-Z]{10}$`),
		"standard-webhooks": regexp.MustCompile(`^msg_[0-9A-Za-z]{27}$`),
		"github":            regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`),
	} {
		a, b := newID(kind), newID(kind)
		if !shape.MatchString(a) || a == b {
			t.Errorf("%s: ids %q and %q, want two distinct ones matching %s", kind, a, b, shape)
		}
	}
}

// TestSendStripeSampleAsStripeSends: the sample goes out with a fresh evt_
// id in place of its own and every other byte of the body as it was.
func TestSendStripeSampleAsStripeSends(t *testing.T) {
	srv, c := capture(t)
	if err := run(append(devArgs, "--url", srv.URL, "--source", "stripe"), io.Discard); err != nil {
		t.Fatal(err)
	}
	id := regexp.MustCompile(`"id": "(evt_[0-9A-Za-z]{24})"`).FindSubmatch(c.body)
	if id == nil {
		t.Fatalf("body carries no fresh evt_ id:\n%s", c.body)
	}
	sample, err := os.ReadFile("../testdata/stripe/payment_intent.succeeded.json")
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Replace(c.body, id[1], []byte("evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R"), 1); !bytes.Equal(got, sample) {
		t.Errorf("the body differs from the sample by more than its id:\n%s", c.body)
	}
}
