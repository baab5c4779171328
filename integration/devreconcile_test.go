//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/ops/operator"
)

// TestDevReconcilesAgainstFakes: the local stack (make dev's binary)
// serves a fake Stripe API at the reconciled source's apiUrl; an event
// made there whose webhook never left is brought in by ops reconcile and
// delivered, marked reconciled, as the banner says.
func TestDevReconcilesAgainstFakes(t *testing.T) {
	t.Parallel()
	bin := buildLocal(t)
	dir := t.TempDir()
	rc := newReceiver(t, nil)
	api, listen := freeAddr(t), freeAddr(t)
	prefix := fmt.Sprintf("devrec%d", os.Getpid())
	cfgFile, secretsFile := filepath.Join(dir, "config.json"), filepath.Join(dir, "secrets.json")
	cfgJSON := fmt.Sprintf(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "devrec/sources/stripe"},
	    "reconcile": {"every": "1h", "secretName": "devrec/reconcile/stripe", "apiUrl": "http://%s"}}],
	  "destinations": [{"name": "sub", "url": "%s/hooks", "allowPrivateNetworks": true, "secretName": "devrec/destinations/sub"}],
	  "metrics": {"sink": "emf"}}`, api, rc.srv.URL)
	secretsJSON := fmt.Sprintf(`{"devrec/sources/stripe": %q, "devrec/reconcile/stripe": "rk_test_devrec", "devrec/destinations/sub": %q}`, stripeSecret, rc.secrets[0])
	for f, body := range map[string]string{cfgFile: cfgJSON, secretsFile: secretsJSON} {
		if err := os.WriteFile(f, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	endpoint := os.Getenv("AWS_ENDPOINT_URL")
	s := startLocal(t, bin, "--config", cfgFile, "--secrets", secretsFile, "--listen", listen,
		"--endpoint", endpoint, "--prefix", prefix, "--state-dir", filepath.Join(dir, "state"))
	defer s.stop()
	control := "http://" + api + "/_fake/events"
	if !strings.Contains(s.err.String(), control) || !strings.Contains(s.err.String(), "reconcile stripe") {
		t.Errorf("banner lacks the fake's control endpoint %s or the reconcile command:\n%s", control, s.err)
	}

	// One event sent as Stripe would, one whose webhook never left.
	for _, send := range []string{"true", "false"} {
		resp, err := http.PostForm(control, url.Values{"type": {"invoice.paid"}, "send": {send}, "ago": {"5m"}})
		if err != nil || resp.StatusCode != http.StatusCreated {
			t.Fatalf("control: %v %v", resp, err)
		}
		resp.Body.Close()
	}
	waitFor(t, 30*time.Second, "the sent event delivered", func() bool { return len(rc.deliveries()) == 1 })

	var out, errOut bytes.Buffer
	code := operator.Main(context.Background(), []string{"--config", cfgFile, "--prefix", prefix, "--endpoint", endpoint, "reconcile", "stripe", "--since", "1h"}, &out, &errOut)
	if code != 0 || !strings.Contains(out.String(), "  listed                 2") || !strings.Contains(out.String(), "  brought in             1") {
		t.Fatalf("ops reconcile: exit %d\n%s%s", code, out.String(), errOut.String())
	}
	waitFor(t, 30*time.Second, "the lost event delivered", func() bool { return len(rc.deliveries()) == 2 })
	if got := rc.deliveries()[1].header.Get("hookfan-reconciled"); got != "true" {
		t.Errorf("hookfan-reconciled %q on the brought-in event", got)
	}
}
