package delivery

import (
	"context"
	"crypto/tls"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

const (
	certSecret = "hookfan/orders/client-cert"
	caSecret   = "hookfan/orders/ca"
)

func lastRecord(t *testing.T, h *harness, id string) dedupe.Record {
	t.Helper()
	r, ok, err := h.store.Get(context.Background(), dedupe.Key("orders", id))
	if err != nil || !ok {
		t.Fatalf("no record for %s: %v", id, err)
	}
	return r
}

// TestMTLSDelivers: the right client certificate is presented and the
// server's, from the private CA in caSecret, trusted; over HTTP/1.1 and
// HTTP/2.
func TestMTLSDelivers(t *testing.T) {
	for _, h2 := range []bool{false, true} {
		serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
		srv := newMTLSServer(t, serverCA, clientCA, h2)
		pair, _ := clientCA.leaf(t, "hookfan-orders", false)
		sm := newFakeSM(map[string]string{certSecret: pair, caSecret: serverCA.pem})
		clk := &clock{t: time.Now()}
		h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, clk, &config.TLS{ClientCertificateSecret: certSecret, CASecret: caSecret}, nil))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1), sqsRecord("evt_2", 1)))
		if f := failures(resp); len(f) != 0 {
			t.Fatalf("h2=%v: failures %v: %s", h2, f, lastRecord(t, h, "evt_1").LastError)
		}
		if got := srv.commonNames(); len(got) != 2 || got[0] != "hookfan-orders" {
			t.Errorf("h2=%v: the server saw client certificates %v", h2, got)
		}
		srv.mu.Lock()
		if want := map[bool]int{false: 1, true: 2}[h2]; srv.protos[0] != want {
			t.Errorf("h2=%v: HTTP/%d, want HTTP/%d", h2, srv.protos[0], want)
		}
		srv.mu.Unlock()
		// One read of each secret for the batch: the cache serves the rest.
		if sm.count(certSecret) != 1 || sm.count(caSecret) != 1 {
			t.Errorf("h2=%v: GetSecretValue calls cert %d, CA %d; want 1 each", h2, sm.count(certSecret), sm.count(caSecret))
		}
	}
}

// TestPrivateCAWithoutClientCertificate: a receiver with a private CA
// that asks for no client certificate is reached with caSecret alone (no
// certificate secret is read, none presented); without it, its
// certificate is refused as from an unknown authority, a failed attempt.
func TestPrivateCAWithoutClientCertificate(t *testing.T) {
	serverCA := newTestCA(t, "private CA")
	var presented []int
	var mu sync.Mutex
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		presented = append(presented, len(r.TLS.PeerCertificates))
		mu.Unlock()
		w.WriteHeader(http.StatusNoContent)
	}))
	_, crt := serverCA.leaf(t, "destination", true)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{crt}, ClientAuth: tls.NoClientCert, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is the point
	srv.StartTLS()
	t.Cleanup(srv.Close)

	t.Run("caSecret alone", func(t *testing.T) {
		sm := newFakeSM(map[string]string{caSecret: serverCA.pem})
		h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, &clock{t: time.Now()}, &config.TLS{CASecret: caSecret}, nil))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
		if f := failures(resp); len(f) != 0 {
			t.Fatalf("failures %v: %s", f, lastRecord(t, h, "evt_1").LastError)
		}
		if r := lastRecord(t, h, "evt_1"); r.Status != dedupe.StatusDelivered {
			t.Errorf("record %s, want DELIVERED", r.Status)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(presented) != 1 || presented[0] != 0 {
			t.Errorf("client certificates presented per request: %v, want one request with none", presented)
		}
		if n := sm.count(certSecret); n != 0 {
			t.Errorf("%d reads of a client certificate secret the destination does not name", n)
		}
	})
	t.Run("without it", func(t *testing.T) {
		h := newHarness(t, srv.URL, newSecret(t))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_2", 1)))
		if f := failures(resp); len(f) != 1 {
			t.Fatalf("failures %v, want the record", f)
		}
		r := lastRecord(t, h, "evt_2")
		if r.Status != dedupe.StatusFailed || r.Attempts != 1 || !strings.Contains(r.LastError, "x509: certificate signed by unknown authority") {
			t.Errorf("record %s after %d attempts: %q, want FAILED after 1 with the unknown authority", r.Status, r.Attempts, r.LastError)
		}
		if got := h.sink.sum(metrics.DeliveryFailed); got != 1 {
			t.Errorf("DeliveryFailed %v, want 1", got)
		}
	})
}

// TestMTLSRefusedRecordsTheSide: a certificate the server does not trust
// is refused and recorded as refused by the destination; a server
// certificate we do not trust is recorded as such; both are failed
// attempts (they count toward pausing).
func TestMTLSRefusedRecordsTheSide(t *testing.T) {
	serverCA, clientCA, otherCA := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "other CA")
	for _, v := range []struct {
		h2  bool
		max uint16
	}{{false, 0}, {true, 0}, {false, tls.VersionTLS12}} {
		h2 := v.h2
		srv := newMTLSServerWith(t, serverCA, clientCA, h2, v.max, nil)
		wrong, _ := otherCA.leaf(t, "hookfan-orders", false)
		right, _ := clientCA.leaf(t, "hookfan-orders", false)
		for _, tt := range []struct {
			name, pair, ca, want string
		}{
			{"our certificate refused", wrong, serverCA.pem, https.ReasonTLSRefusedByDestination + ": the destination refused the TLS handshake (alert: "},
			{"their certificate untrusted", right, otherCA.pem, https.ReasonTLSDestinationUntrusted + ": the destination's server certificate is not trusted (x509: certificate signed by unknown authority"},
		} {
			sm := newFakeSM(map[string]string{certSecret: tt.pair, caSecret: tt.ca})
			clk := &clock{t: time.Now()}
			h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, clk, &config.TLS{ClientCertificateSecret: certSecret, CASecret: caSecret}, nil))
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("h2=%v %s: failures %v", h2, tt.name, f)
			}
			r := lastRecord(t, h, "evt_1")
			if r.Status != dedupe.StatusFailed || !strings.HasPrefix(r.LastError, tt.want) || r.Attempts != 1 {
				t.Errorf("h2=%v %s: record %s after %d attempts: %q, want it to start %q", h2, tt.name, r.Status, r.Attempts, r.LastError, tt.want)
			}
			if h.sink.sum(metrics.DeliveryAttempts) != 1 {
				t.Errorf("h2=%v %s: %v attempts counted, want 1", h2, tt.name, h.sink.sum(metrics.DeliveryAttempts))
			}
			if len(srv.commonNames()) != 0 {
				t.Errorf("h2=%v %s: the server handled a request", h2, tt.name)
			}
		}
	}
}

// TestMTLSBrokenConnectionIsNotARefusal: a server that accepts the
// certificate and then drops the connection is not recorded as refusing
// it (the diagnosing handshake finds it accepted).
func TestMTLSBrokenConnectionIsNotARefusal(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	srv := newMTLSServerWith(t, serverCA, clientCA, false, 0, func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := w.(http.Hijacker).Hijack()
		if err == nil {
			_ = conn.Close()
		}
	})
	pair, _ := clientCA.leaf(t, "hookfan-orders", false)
	sm := newFakeSM(map[string]string{certSecret: pair, caSecret: serverCA.pem})
	h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, &clock{t: time.Now()}, &config.TLS{ClientCertificateSecret: certSecret, CASecret: caSecret}, nil))
	_, _ = h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
	r := lastRecord(t, h, "evt_1")
	if r.Status != dedupe.StatusFailed || strings.HasPrefix(r.LastError, "tls_") {
		t.Errorf("record %s %q, want a failure that blames no certificate", r.Status, r.LastError)
	}
}

// TestMTLSRotation: a pair stored in the secret is presented once the
// cache's TTL has passed; and a handshake refused with the cached pair
// reads the secret again at once, at most once per https.TLSRereadEvery, and is
// retried with the new pair within the same attempt.
func TestMTLSRotation(t *testing.T) {
	serverCA, clientCA, otherCA := newTestCA(t, "server CA"), newTestCA(t, "client CA"), newTestCA(t, "other CA")
	srv := newMTLSServer(t, serverCA, clientCA, false)
	first, _ := clientCA.leaf(t, "first", false)
	second, _ := clientCA.leaf(t, "second", false)
	sm := newFakeSM(map[string]string{certSecret: first, caSecret: serverCA.pem})
	clk := &clock{t: time.Now()}
	h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, clk, &config.TLS{ClientCertificateSecret: certSecret, CASecret: caSecret}, nil))
	deliver := func(id string) {
		t.Helper()
		if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord(id, 1))); len(failures(resp)) != 0 {
			t.Fatalf("%s: %s", id, lastRecord(t, h, id).LastError)
		}
	}
	deliver("evt_1")
	sm.put(certSecret, second)
	deliver("evt_2") // within the TTL: still the first pair
	clk.Advance(secrets.DefaultTTL)
	deliver("evt_3") // the TTL passed: the second pair, same transport
	if got := srv.commonNames(); strings.Join(got, ",") != "first,first,second" {
		t.Errorf("certificates presented %v, want first,first,second", got)
	}

	// The subscriber stops trusting the cached pair's CA: the pair in the
	// store (the rotated one) is read at once and the POST retried.
	wrong, _ := otherCA.leaf(t, "wrong", false)
	third, _ := clientCA.leaf(t, "third", false)
	sm.put(certSecret, wrong)
	clk.Advance(secrets.DefaultTTL)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_4", 1))); len(failures(resp)) != 1 {
		t.Fatal("a refused certificate was delivered")
	}
	calls := sm.count(certSecret)
	sm.put(certSecret, third)
	clk.Advance(https.TLSRereadEvery)
	deliver("evt_5")
	if got := lastRecord(t, h, "evt_5"); got.Attempts != 1 {
		t.Errorf("evt_5 took %d attempts, want 1 (retried within it)", got.Attempts)
	}
	if n := sm.count(certSecret) - calls; n != 1 {
		t.Errorf("%d reads of the secret after the refusal, want 1", n)
	}
	if got := srv.commonNames(); got[len(got)-1] != "third" {
		t.Errorf("certificates presented %v, want third last", got)
	}
	// Refused again within https.TLSRereadEvery: no new read.
	sm.put(certSecret, wrong)
	clk.Advance(secrets.DefaultTTL)
	calls = sm.count(certSecret)
	for _, id := range []string{"evt_6", "evt_7"} {
		if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord(id, 1))); len(failures(resp)) != 1 {
			t.Fatalf("%s delivered with a refused certificate", id)
		}
	}
	if n := sm.count(certSecret) - calls; n > 1 {
		t.Errorf("%d reads of the secret for two refusals within %s, want at most 1", n, https.TLSRereadEvery)
	}
}

// TestMTLSSecretUnusable: a certificate secret that is missing or holds no
// usable pair is the operator's to fix: the attempt is claimed and
// recorded FAILED with tls_secret_unreadable or tls_secret_invalid, naming
// the secret and the problem, never its value, and nothing is sent.
func TestMTLSSecretUnusable(t *testing.T) {
	clientCA := newTestCA(t, "client CA")
	expired, _ := clientCA.issue(t, "old", false, time.Now().Add(-48*time.Hour), time.Now().Add(-24*time.Hour))
	for _, tt := range []struct{ name, value, want string }{
		{"missing", "", `tls_secret_unreadable: secret "` + certSecret + `" (tls.clientCertificateSecret) does not exist, is scheduled for deletion or has no current value; create or restore it`},
		{"garbage", "-----BEGIN PRIVATE KEY-----\nc2VjcmV0\n-----END PRIVATE KEY-----\n", `tls_secret_invalid: secret "` + certSecret + `" (tls.clientCertificateSecret): not a usable certificate and private key (tls: failed to find certificate PEM data in certificate input, but did find a private key; PEM inputs may have been switched); store the PEM certificate chain, leaf first, and its unencrypted private key`},
		{"expired", expired, `tls_secret_invalid: secret "` + certSecret + `" (tls.clientCertificateSecret): the client certificate expired at `},
	} {
		values := map[string]string{}
		if tt.value != "" {
			values[certSecret] = tt.value
		}
		clk := &clock{t: time.Now()}
		h := newHarness(t, "https://127.0.0.1:1/", newSecret(t), withClientAuth(t, newFakeSM(values), clk, &config.TLS{ClientCertificateSecret: certSecret}, nil))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
		r := lastRecord(t, h, "evt_1")
		if len(failures(resp)) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 1 || r.Status != dedupe.StatusFailed || !strings.HasPrefix(r.LastError, dedupe.ShortError(tt.want)) {
			t.Errorf("%s: failures %v, attempts %v, record %s %q; want a failed attempt %q", tt.name, failures(resp), h.sink.sum(metrics.DeliveryAttempts), r.Status, r.LastError, tt.want)
		}
		logs := h.logs.b.String()
		if strings.Contains(logs, "not_attempted") || !strings.Contains(logs, certSecret) {
			t.Errorf("%s: log, want the attempt's line naming the secret:\n%s", tt.name, logs)
		}
		if strings.Contains(logs+r.LastError, "c2VjcmV0") || strings.Contains(logs+r.LastError, "BEGIN") {
			t.Errorf("%s: log or record shows the secret's value:\n%s", tt.name, logs)
		}
	}
}

// TestMTLSCertificateExpiresWhileCached: a pair that expires while cached
// (and is not replaced) stops being presented: the attempt fails unsent,
// recorded tls_secret_invalid with the expiry.
func TestMTLSCertificateExpiresWhileCached(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	srv := newMTLSServer(t, serverCA, clientCA, false)
	pair, crt := clientCA.leaf(t, "hookfan-orders", false)
	clk := &clock{t: time.Now()}
	h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, newFakeSM(map[string]string{certSecret: pair, caSecret: serverCA.pem}), clk, &config.TLS{ClientCertificateSecret: certSecret, CASecret: caSecret}, nil))
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1))); len(failures(resp)) != 0 {
		t.Fatal(lastRecord(t, h, "evt_1").LastError)
	}
	clk.Set(crt.Leaf.NotAfter.Add(time.Second))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_2", 1)))
	want := `tls_secret_invalid: secret "` + certSecret + `" (tls.clientCertificateSecret): the client certificate expired at ` + crt.Leaf.NotAfter.UTC().Format(time.RFC3339) + "; store the renewed certificate and key"
	if r := lastRecord(t, h, "evt_2"); len(failures(resp)) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 2 || r.Status != dedupe.StatusFailed || r.LastError != want {
		t.Errorf("failures %v, attempts %v, record %s %q; want FAILED %q", failures(resp), h.sink.sum(metrics.DeliveryAttempts), r.Status, r.LastError, want)
	}
}

// TestParseClientCertificate: both forms are read; bad values get a clear
// error that never quotes them.
func TestParseClientCertificate(t *testing.T) {
	ca := newTestCA(t, "client CA")
	bundle, _ := ca.leaf(t, "c", false)
	i := strings.Index(bundle, "-----BEGIN PRIVATE KEY")
	certPEM, keyPEM := bundle[:i], bundle[i:]
	other, _ := ca.leaf(t, "d", false)
	otherKey := other[strings.Index(other, "-----BEGIN PRIVATE KEY"):]
	js := func(c, k string) string {
		return `{"certificate": ` + quoteJSON(c) + `, "privateKey": ` + quoteJSON(k) + `}`
	}
	now := time.Now()
	for _, ok := range []string{bundle, keyPEM + certPEM, "\n" + bundle + "\n", js(certPEM, keyPEM)} {
		if _, err := https.ParseClientCertificate(ok, now); err != nil {
			t.Errorf("refused: %v", err)
		}
	}
	for _, tt := range []struct{ v, want string }{
		{certPEM, "not a usable certificate and private key"},
		{keyPEM, "not a usable certificate and private key"},
		{certPEM + otherKey, "not a usable certificate and private key (tls: private key does not match public key)"},
		{`{"certificate": 1}`, `is not the JSON object {"certificate": "<PEM>", "privateKey": "<PEM>"}`},
		{`{"certificate": "x"}`, `lacks "certificate" or "privateKey"`},
		{certPEM + "-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n-----END ENCRYPTED PRIVATE KEY-----\n", "the private key is encrypted"},
		{"hunter2", "not a usable certificate and private key"},
	} {
		_, err := https.ParseClientCertificate(tt.v, now)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("error %v, want %q", err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "MII")) {
			t.Errorf("error quotes the value: %v", err)
		}
	}
	if _, err := https.ParseClientCertificate(bundle, now.Add(48*time.Hour)); err == nil || !strings.Contains(err.Error(), "expired at") {
		t.Errorf("expired: %v", err)
	}
	if _, err := https.ParseCABundle(ca.pem + ca.pem); err != nil {
		t.Errorf("CA bundle: %v", err)
	}
	for _, bad := range []string{"", "hunter2", keyPEM, ca.pem + "trailing"} {
		if _, err := https.ParseCABundle(bad); err == nil || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("CA bundle %.20q: %v", bad, err)
		}
	}
}

func quoteJSON(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
	return `"` + r.Replace(s) + `"`
}

// FuzzParseClientCertificate: any value is read or refused, never a panic,
// and an error never holds the value.
func FuzzParseClientCertificate(f *testing.F) {
	ca := newTestCA(f, "fuzz CA")
	bundle, _ := ca.leaf(f, "c", false)
	for _, s := range []string{bundle, "{}", `{"certificate":"","privateKey":""}`, "-----BEGIN CERTIFICATE-----\n-----END CERTIFICATE-----", ca.pem} {
		f.Add(s)
	}
	now := time.Now()
	f.Fuzz(func(t *testing.T, v string) {
		_, err := https.ParseClientCertificate(v, now)
		_, cerr := https.ParseCABundle(v)
		for _, e := range []error{err, cerr} {
			if e != nil && len(v) >= 12 && strings.Contains(e.Error(), v) {
				t.Errorf("error holds the value: %v", e)
			}
		}
	})
}

// TestCAAloneAtAReceiverAskingForACertificate: with tls.caSecret alone, a
// receiver that asks for a client certificate refuses the handshake, and
// the record says so (none is presented: set clientCertificateSecret)
// rather than pointing at a clientCertificateSecret the destination does
// not set. TLS 1.3 (certificate_required) and 1.2 (handshake_failure,
// known by the certificate request that came before it).
func TestCAAloneAtAReceiverAskingForACertificate(t *testing.T) {
	serverCA, clientCA := newTestCA(t, "server CA"), newTestCA(t, "client CA")
	for _, v := range []struct {
		name  string
		h2    bool
		max   uint16
		alert string
	}{{"TLS 1.3", false, 0, "certificate required"}, {"TLS 1.3 h2", true, 0, "certificate required"}, {"TLS 1.2", false, tls.VersionTLS12, "handshake failure"}} {
		t.Run(v.name, func(t *testing.T) {
			srv := newMTLSServerWith(t, serverCA, clientCA, v.h2, v.max, nil)
			sm := newFakeSM(map[string]string{caSecret: serverCA.pem})
			h := newHarness(t, srv.URL, newSecret(t), withClientAuth(t, sm, &clock{t: time.Now()}, &config.TLS{CASecret: caSecret}, nil))
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the record released", f)
			}
			r := lastRecord(t, h, "evt_1")
			want := https.ReasonTLSRefusedByDestination + ": the destination refused the TLS handshake (alert: tls: " + v.alert + "): the receiver asks for a client certificate and this destination presents none; set tls.clientCertificateSecret"
			if r.Status != dedupe.StatusFailed || r.Attempts != 1 || r.LastError != want {
				t.Errorf("record %s after %d attempts: %q; want FAILED after 1: %q", r.Status, r.Attempts, r.LastError, want)
			}
			if len(srv.commonNames()) != 0 {
				t.Errorf("the server handled a request")
			}
		})
	}
}
