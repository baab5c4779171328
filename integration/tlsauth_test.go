//go:build integration

package integration

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
)

// pki is a certificate authority made for one test.
type pki struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

func newPKI(t *testing.T, name string) *pki {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &pki{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// leaf issues a certificate and returns it with its key as one PEM bundle.
func (p *pki) leaf(t *testing.T, cn string, server bool) (string, tls.Certificate) {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(12 * time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.cert, &key.PublicKey, p.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, _ := x509.MarshalPKCS8PrivateKey(key)
	bundle := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) + string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	crt, err := tls.X509KeyPair([]byte(bundle), []byte(bundle))
	if err != nil {
		t.Fatal(err)
	}
	return bundle, crt
}

// TestMutualTLSAndOAuth2OnTheWire: through the local stack, with the
// client certificate, the CA and the OAuth 2.0 client in Secrets Manager
// on the emulator, a destination that requires a client certificate and a
// bearer token gets the delivery with both (one token call), a rotated
// pair put to the emulator is presented once the cache's TTL passes, and a
// destination that does not trust the certificate refuses it, recorded as
// refused by the destination. No token or client secret reaches the logs.
func TestMutualTLSAndOAuth2OnTheWire(t *testing.T) {
	t.Parallel()
	serverCA, clientCA, otherCA := newPKI(t, "server CA"), newPKI(t, "client CA"), newPKI(t, "other CA")
	prefix := uniquePrefix(t)
	certName, caName, oauthName, wrongName := prefix+"/bank/cert", prefix+"/bank/ca", prefix+"/bank/oauth", prefix+"/refusing/cert"
	const clientSecret = "cs_integration_do-not-log"

	var mu sync.Mutex
	var tokenCalls int
	idp := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		want := "Basic " + base64.StdEncoding.EncodeToString([]byte("hookfan-bank:"+clientSecret))
		if r.Header.Get("Authorization") != want || r.PostForm.Get("grant_type") != "client_credentials" || r.PostForm.Get("scope") != "webhooks" {
			w.WriteHeader(http.StatusUnauthorized)
			_, _ = io.WriteString(w, `{"error": "invalid_client"}`)
			return
		}
		mu.Lock()
		tokenCalls++
		n := tokenCalls
		mu.Unlock()
		_, _ = fmt.Fprintf(w, `{"access_token": "tok_integration_%d", "token_type": "Bearer", "expires_in": 3600}`, n)
	}))
	t.Cleanup(idp.Close)

	// The destination: a client certificate from clientCA and a token.
	var cns []string
	mtls := func(rc *receiver) *receiver {
		_, serverCert := serverCA.leaf(t, "destination", true)
		pool := x509.NewCertPool()
		pool.AddCert(clientCA.cert)
		rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			mu.Lock()
			cns = append(cns, r.TLS.PeerCertificates[0].Subject.CommonName)
			mu.Unlock()
			rc.serve(w, r)
		}))
		rc.srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool}
		rc.srv.Config.ErrorLog = log.New(io.Discard, "", 0)
		rc.srv.StartTLS()
		t.Cleanup(rc.srv.Close)
		return rc
	}
	bank := mtls(&receiver{secrets: []string{devstack.NewDestinationSecret()}, respond: func(_ int, r *http.Request) int {
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bearer tok_integration_") {
			return http.StatusUnauthorized
		}
		return http.StatusNoContent
	}})
	refusing := mtls(&receiver{secrets: []string{devstack.NewDestinationSecret()}})

	first, _ := clientCA.leaf(t, "first", false)
	wrong, _ := otherCA.leaf(t, "wrong", false)
	dest := func(name string, rc *receiver, cert, extra string) string {
		return fmt.Sprintf(`{"name": %q, "url": %q, "allowPrivateNetworks": true, "retry": {"schedule": ["1m"]}, "tls": {"clientCertificateSecret": %q, "caSecret": %q}%s}`,
			name, rc.srv.URL+"/"+name, cert, caName, extra)
	}
	e := startEnv(t, []string{
		dest("bank", bank, certName, fmt.Sprintf(`, "auth": {"oauth2": {"tokenUrl": %q, "clientSecret": %q, "scopes": ["webhooks"]}}`, idp.URL+"/token", oauthName)),
		dest("refusing", refusing, wrongName, ""),
	}, map[string]*receiver{"bank": bank, "refusing": refusing},
		withSecrets(map[string]string{certName: first, caName: serverCA.pem, wrongName: wrong,
			oauthName: `{"clientId": "hookfan-bank", "clientSecret": "` + clientSecret + `"}`}),
		func(o *devstack.Options) { o.SecretTTL = time.Second })

	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_mtls_1", nil)
	waitFor(t, 20*time.Second, "the delivery with a client certificate and a token", func() bool { return bank.accepted(ev.id) >= 1 })
	if d := bank.deliveries()[0]; !d.verified || d.header.Get("Authorization") != "Bearer tok_integration_1" {
		t.Errorf("delivery verified %v, Authorization %q", d.verified, d.header.Get("Authorization"))
	}
	waitFor(t, 20*time.Second, "the refused attempt's record", func() bool {
		r, ok := e.record("refusing", ev.id)
		return ok && r.Status == dedupe.StatusFailed
	})
	if r, _ := e.record("refusing", ev.id); !strings.HasPrefix(r.LastError, https.ReasonTLSRefusedByDestination+": ") {
		t.Errorf("refused record's error %q, want it to start %s", r.LastError, https.ReasonTLSRefusedByDestination)
	}
	if len(refusing.deliveries()) != 0 {
		t.Errorf("the refusing destination handled %d requests", len(refusing.deliveries()))
	}

	// Rotation: the new pair, put to the emulator, is presented once the
	// cache's TTL (1 s here) has passed.
	second, _ := clientCA.leaf(t, "second", false)
	if _, err := clients.Secrets.PutSecretValue(context.Background(), &secretsmanager.PutSecretValueInput{SecretId: &certName, SecretString: &second}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	ev2 := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_mtls_2", nil)
	waitFor(t, 20*time.Second, "the delivery after the rotation", func() bool { return bank.accepted(ev2.id) >= 1 })
	mu.Lock()
	last, calls := cns[len(cns)-1], tokenCalls
	mu.Unlock()
	if last != "second" {
		t.Errorf("certificates presented %v, want the rotated one last", cns)
	}
	if calls != 1 {
		t.Errorf("%d token calls, want 1 (the token is cached)", calls)
	}
	if logs := e.logs.String(); strings.Contains(logs, "tok_integration") || strings.Contains(logs, clientSecret) || strings.Contains(logs, "PRIVATE KEY") {
		t.Error("a token, the client secret or a private key reached the logs")
	}
}
