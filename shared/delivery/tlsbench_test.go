package delivery

import (
	"bufio"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// tlsServerEnv, when set, makes the test binary a TLS subscriber instead of
// running tests (TestMain): BenchmarkDeliveryTLS starts it as a child
// process so that the server's half of each handshake is not counted in
// the benchmark's own CPU time.
const tlsServerEnv = "HOOKFAN_BENCH_TLS_SERVER"

func TestMain(m *testing.M) {
	if os.Getenv(tlsServerEnv) != "" {
		serveTLS()
		return
	}
	os.Exit(m.Run())
}

// serveTLS answers every request 200 over TLS (httptest's certificate),
// writes its URL and certificate to stdout, and runs until stdin closes.
func serveTLS() {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write([]byte(`{"ok":true}`))
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	fmt.Println(srv.URL)
	_ = pem.Encode(os.Stdout, &pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	fmt.Println("END")
	_, _ = bufio.NewReader(os.Stdin).ReadString(0)
	srv.Close()
}

// startTLSSubscriber starts serveTLS in a child process and returns its URL
// and a pool trusting its certificate.
func startTLSSubscriber(b *testing.B) (string, *x509.CertPool) {
	b.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), tlsServerEnv+"=1")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = stdin.Close(); _ = cmd.Wait() })
	r := bufio.NewReader(stdout)
	url, err := r.ReadString('\n')
	if err != nil {
		b.Fatal(err)
	}
	var cert strings.Builder
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			b.Fatal(err)
		}
		if line == "END\n" {
			break
		}
		cert.WriteString(line)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM([]byte(cert.String())) {
		b.Fatal("the subscriber's certificate does not parse")
	}
	return strings.TrimSpace(url), pool
}

// BenchmarkDeliveryTLS measures the CPU of one delivery (parse, sign, claim,
// POST over HTTPS, record, log, metrics) with the memory store, to a
// subscriber in another process: on a connection the function keeps
// (reused), on a new TCP connection for every POST that resumes the TLS
// session of the one before (resumed: a warm function whose subscriber
// closed the connection), and on a new TCP connection with a full TLS
// handshake for every POST (fresh: a cold function, or a subscriber that
// issues no session tickets). cpu-ns/op is
// this process's user+system CPU per delivery; ms-at-128MB and
// ms-at-256MB stretch it by the CPU share Lambda gives those memories
// (1,769 MB is one vCPU).
func BenchmarkDeliveryTLS(b *testing.B) {
	url, pool := startTLSSubscriber(b)
	secret := newSecret(b)
	for _, tc := range []struct {
		name           string
		fresh, noCache bool
	}{{"reused", false, false}, {"resumed", true, false}, {"fresh", true, true}} {
		b.Run(tc.name, func(b *testing.B) {
			hs := newHarness(b, url, secret, func(o *laneOptions) {
				c := https.NewClient(o.Destination)
				tr := c.Transport.(*http.Transport)
				tr.TLSClientConfig.RootCAs = pool
				tr.DisableKeepAlives = tc.fresh
				if tc.noCache {
					tr.TLSClientConfig.ClientSessionCache = nil
				}
				o.Client = c
			})
			cpu := deliveryCPU(b, hs.h, "tls-"+tc.name)
			b.ReportMetric(cpu, "cpu-ns/op")
			b.ReportMetric(cpu/1e6*1769/128, "ms-at-128MB/op")
			b.ReportMetric(cpu/1e6*1769/256, "ms-at-256MB/op")
		})
	}
}
