package delivery

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/secrets"
)

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pem  string
}

var serial int64 = 1

func newTestCA(t testing.TB, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	return &testCA{cert: cert, key: key, pem: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))}
}

// issue returns a leaf certificate and key as one PEM bundle (certificate
// first), valid from notBefore to notAfter, and the tls.Certificate.
func (ca *testCA) issue(t testing.TB, cn string, server bool, notBefore, notAfter time.Time) (string, tls.Certificate) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	serial++
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: notBefore, NotAfter: notAfter, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		tmpl.DNSNames = []string{"localhost"}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	bundle := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})) +
		string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	crt, err := tls.X509KeyPair([]byte(bundle), []byte(bundle))
	if err != nil {
		t.Fatal(err)
	}
	return bundle, crt
}

func (ca *testCA) leaf(t testing.TB, cn string, server bool) (string, tls.Certificate) {
	return ca.issue(t, cn, server, time.Now().Add(-time.Hour), time.Now().Add(12*time.Hour))
}

// mtlsServer is an HTTPS destination that requires a client certificate
// issued by clientCA; it records the common name of each request's.
type mtlsServer struct {
	*httptest.Server
	mu     sync.Mutex
	cns    []string
	protos []int
}

func newMTLSServer(t testing.TB, serverCA, clientCA *testCA, h2 bool) *mtlsServer {
	return newMTLSServerWith(t, serverCA, clientCA, h2, 0, nil)
}

// newMTLSServerWith caps the TLS version (0: TLS 1.3) and, when handle is
// set, lets it answer instead of the default 204.
func newMTLSServerWith(t testing.TB, serverCA, clientCA *testCA, h2 bool, maxVersion uint16, handle http.HandlerFunc) *mtlsServer {
	t.Helper()
	s := &mtlsServer{}
	s.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.cns = append(s.cns, r.TLS.PeerCertificates[0].Subject.CommonName)
		s.protos = append(s.protos, r.ProtoMajor)
		s.mu.Unlock()
		if handle != nil {
			handle(w, r)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	_, crt := serverCA.leaf(t, "destination", true)
	pool := x509.NewCertPool()
	pool.AddCert(clientCA.cert)
	s.TLS = &tls.Config{Certificates: []tls.Certificate{crt}, ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: pool, MinVersion: tls.VersionTLS12, MaxVersion: maxVersion}
	s.EnableHTTP2 = h2
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are the point
	s.StartTLS()
	t.Cleanup(s.Close)
	return s
}

func (s *mtlsServer) commonNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cns...)
}

// fakeSM is Secrets Manager for the secrets cache: values by name, calls
// counted.
type fakeSM struct {
	mu     sync.Mutex
	values map[string]string
	calls  map[string]int
}

func newFakeSM(values map[string]string) *fakeSM {
	return &fakeSM{values: values, calls: map[string]int{}}
}

func (f *fakeSM) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls[*in.SecretId]++
	v, ok := f.values[*in.SecretId]
	if !ok {
		return nil, &types.ResourceNotFoundException{}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: &v}, nil
}

func (f *fakeSM) put(name, v string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values[name] = v
}

func (f *fakeSM) count(name string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls[name]
}

// withClientAuth sets the destination's tls and auth and builds its client
// on a real secrets cache over sm, on clk.
func withClientAuth(t testing.TB, sm secrets.API, clk *clock, tlsCfg *config.TLS, oauth *config.OAuth2) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.TLS = tlsCfg
		if oauth != nil {
			o.Destination.Auth = &config.Auth{OAuth2: oauth}
		}
		cache := secrets.NewCache(sm, secrets.WithClock(clk.Now))
		o.HeaderSecrets = cache
		client := https.NewClient(o.Destination)
		a, err := https.NewClientAuth(o.Destination, cache, client, clk.Now)
		if err != nil {
			t.Fatal(err)
		}
		o.Client, o.ClientAuth, o.Now = client, a, clk.Now
	}
}
