//go:build integration

package integration

import (
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// tlsReceiver is a receiver served over TLS on addr (httptest's
// certificate, valid for 127.0.0.1), counting the connections it accepts.
func tlsReceiver(t *testing.T, addr string) (*receiver, *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen("tcp4", addr)
	if err != nil {
		t.Fatalf("listen %s: %v", addr, err)
	}
	rc := &receiver{secrets: []string{devstack.NewDestinationSecret()}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Listener.Close()
	rc.srv.Listener = ln
	accepted := &atomic.Int32{}
	rc.srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	rc.srv.StartTLS()
	t.Cleanup(rc.srv.Close)
	return rc, accepted
}

// TestAllowCidrsOnTheLocalStack: through the local stack (delivery.Assemble's
// client, as deployed), a destination whose allowCidrs lists 127.0.0.1/32
// receives a verified delivery over https from a receiver on 127.0.0.1,
// while a destination with the same list whose URL (read from its secret at
// run time, where validation cannot see it) points at a receiver really
// listening on 127.0.0.2 is refused before any connection: a failed attempt
// whose record and log line say address_refused and why. Loopback stands in for a peered VPC's range: one machine
// has no 10.x receiver; the dial-time refusal of a resolved address is
// TestAllowCidrs's in shared/delivery, with the real dialer.
//
// The deliver client trusts the system roots: the test points SSL_CERT_FILE
// at httptest's certificate before anything in this process loads them (no
// test before it uses TLS). Not parallel, for t.Setenv.
func TestAllowCidrsOnTheLocalStack(t *testing.T) {
	inside, insideConns := tlsReceiver(t, "127.0.0.1:0")
	outside, outsideConns := tlsReceiver(t, "127.0.0.2:0")
	certFile := filepath.Join(t.TempDir(), "receiver.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: inside.srv.Certificate().Raw})
	if err := os.WriteFile(certFile, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("SSL_CERT_FILE", certFile)
	t.Setenv("SSL_CERT_DIR", t.TempDir())
	roots, err := x509.SystemCertPool()
	trusted := err == nil
	if trusted {
		_, err = inside.srv.Certificate().Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"})
		trusted = err == nil
	}
	if !trusted {
		t.Logf("the system roots were loaded before this test (%v): the inside receiver is only checked to be reached, not to receive", err)
	}

	secretName := uniquePrefix(t) + "/outside-url"
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "inside", "url": %q, "allowCidrs": ["127.0.0.1/32"], "retry": {"schedule": ["1s"], "jitter": 0}}`, inside.srv.URL+"/inside"),
		fmt.Sprintf(`{"name": "outside", "urlSecretName": %q, "allowCidrs": ["127.0.0.1/32"], "retry": {"schedule": ["1s"], "jitter": 0}}`, secretName),
	}, map[string]*receiver{"inside": inside, "outside": outside},
		withSecrets(map[string]string{secretName: outside.srv.URL + "/outside"}))
	if !strings.HasPrefix(outside.srv.URL, "https://127.0.0.2:") {
		t.Fatalf("outside receiver at %s, want 127.0.0.2", outside.srv.URL)
	}
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_allow_cidrs_1", nil)

	if trusted {
		waitFor(t, 20*time.Second, "the inside delivery", func() bool { return inside.accepted(ev.id) >= 1 })
		if d := inside.deliveries(); !d[0].verified {
			t.Error("the inside delivery does not verify")
		}
	} else {
		waitFor(t, 20*time.Second, "a connection to the inside receiver", func() bool { return insideConns.Load() >= 1 })
	}
	// The URL read from the secret is judged before any connection: the
	// attempt fails with its reason in the record (ops status and ops dlq
	// show it) and in the attempt's log line, never the URL's path.
	var rec dedupe.Record
	waitFor(t, 20*time.Second, "the outside lane's record", func() bool {
		var ok bool
		rec, ok = e.record("outside", ev.id)
		return ok && rec.Attempts >= 1 && rec.Status != dedupe.StatusInProgress
	})
	want := `address_refused: the URL in secret "` + secretName + `": host 127.0.0.2 is a loopback address, in none of the destination's allowCidrs`
	if (rec.Status != dedupe.StatusFailed && rec.Status != dedupe.StatusDead) || rec.LastError != want {
		t.Errorf("outside record %s after %d attempts: %q; want FAILED or DEAD: %q", rec.Status, rec.Attempts, rec.LastError, want)
	}
	var refusal string
	for _, line := range strings.Split(e.logs.String(), "\n") {
		if strings.Contains(line, "address_refused") {
			refusal = line
			break
		}
	}
	if strings.Contains(refusal, `"not_attempted"`) || !strings.Contains(refusal, `"outcome":"failed"`) && !strings.Contains(refusal, `"outcome":"dead"`) {
		t.Errorf("refusal line %q, want the failed attempt's", refusal)
	}
	if strings.Contains(refusal+rec.LastError, outside.srv.URL+"/outside") {
		t.Errorf("the log or the record quotes the secret URL's path: %s %s", refusal, rec.LastError)
	}
	if n := outsideConns.Load(); n != 0 || len(outside.deliveries()) != 0 {
		t.Errorf("the outside receiver accepted %d connections and %d requests, want none", n, len(outside.deliveries()))
	}
	if !trusted {
		return
	}
	if rec, ok := e.record("inside", ev.id); !ok || rec.Status != "DELIVERED" {
		t.Errorf("inside record %+v, want DELIVERED", rec)
	}
}
