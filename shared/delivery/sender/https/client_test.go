package https

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// dialProbe sees every connection the guard lets through, just before
// connect(2). It refuses anything but loopback, so even a broken guard
// could never make these tests reach another address.
type dialProbe struct {
	mu   sync.Mutex
	seen []string
}

func (p *dialProbe) after(_, address string) error {
	p.mu.Lock()
	p.seen = append(p.seen, address)
	p.mu.Unlock()
	ap, err := netip.ParseAddrPort(address)
	if err != nil || !ap.Addr().Unmap().IsLoopback() {
		return fmt.Errorf("test probe: refusing to connect to %s", address)
	}
	return nil
}

func (p *dialProbe) addresses() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.seen...)
}

// countingServer is a loopback server that counts accepted connections.
func countingServer(t *testing.T, network, addr string) (port string, accepted *atomic.Int32) {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		t.Fatalf("listen %s %s: %v", network, addr, err)
	}
	accepted = &atomic.Int32{}
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			accepted.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(ln.Addr().String())
	return port, accepted
}

// TestAddressGuard: every non-public range is refused on the resolved IP
// before any connection is attempted — the probe that runs just before
// connect(2) never sees them, and loopback listeners never accept.
func TestAddressGuard(t *testing.T) {
	port4, accepted4 := countingServer(t, "tcp4", "127.0.0.1:0")
	port6, accepted6 := countingServer(t, "tcp6", "[::1]:0")
	tests := []struct {
		name string
		host string // URL host
	}{
		{"loopback", "127.0.0.1:" + port4},
		{"loopback elsewhere in 127/8", "127.1.2.3:" + port4},
		{"hostname resolving to 127.0.0.1", "localhost:" + port4},
		{"IPv6 loopback", "[::1]:" + port6},
		{"IPv4-mapped loopback", "[::ffff:127.0.0.1]:" + port4},
		{"private 10/8", "10.0.0.1:443"},
		{"private 10/8 top", "10.255.255.254:443"},
		{"private 172.16/12", "172.16.0.1:443"},
		{"private 172.16/12 top", "172.31.255.254:443"},
		{"private 192.168/16", "192.168.1.1:443"},
		{"link-local metadata service", "169.254.169.254:80"},
		{"link-local", "169.254.1.1:443"},
		{"CGNAT 100.64/10", "100.64.0.1:443"},
		{"CGNAT 100.64/10 top", "100.127.255.254:443"},
		{"this network 0/8", "0.0.0.0:443"},
		{"this network 0/8 other", "0.1.2.3:443"},
		{"unique-local fc00::/7", "[fc00::1]:443"},
		{"unique-local fd00::/8", "[fd12:3456::1]:443"},
		{"IPv6 link-local", "[fe80::1]:443"},
		{"IPv4-mapped private", "[::ffff:10.0.0.1]:443"},
		{"IPv4-mapped metadata service", "[::ffff:169.254.169.254]:80"},
		{"IPv4-mapped CGNAT", "[::ffff:100.64.0.1]:443"},
		{"IPv4 multicast", "224.0.0.1:443"},
		{"IPv6 multicast", "[ff02::1]:443"},
		{"broadcast", "255.255.255.255:443"},
		{"IPv4-compatible loopback", "[::127.0.0.1]:" + port4},
		{"IPv4-translated loopback", "[::ffff:0:127.0.0.1]:" + port4},
		{"6to4 carrying loopback", "[2002:7f00:1::1]:" + port4},
		{"NAT64 carrying the metadata service", "[64:ff9b::169.254.169.254]:80"},
		{"Teredo", "[2001::1]:443"},
		{"benchmarking 2001:2::/48", "[2001:2::1]:443"},
		{"deprecated ORCHID", "[2001:10::1]:443"},
		{"IPv6 documentation 3fff::/20", "[3fff::1]:443"},
		{"SRv6 SIDs 5f00::/16", "[5f00::1]:443"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := &dialProbe{}
			client := newClient(config.Destination{Name: "orders", URL: "https://example.com/", TimeoutSeconds: 2}, probe.after)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+tt.host+"/hooks", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
				t.Fatalf("POST to %s succeeded (status %d), want refused", tt.host, resp.StatusCode)
			}
			if !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("error = %v, want %v", err, ErrBlockedAddress)
			}
			if seen := probe.addresses(); len(seen) != 0 {
				t.Errorf("connections attempted to %v, want none", seen)
			}
		})
	}
	if n4, n6 := accepted4.Load(), accepted6.Load(); n4 != 0 || n6 != 0 {
		t.Errorf("loopback listeners accepted %d and %d connections, want none", n4, n6)
	}
}

func TestCheckAddress(t *testing.T) {
	tests := []struct {
		address string
		wantErr bool
	}{
		{"127.0.0.1:443", true},
		{"10.1.2.3:443", true},
		{"[::ffff:127.0.0.1]:443", true},
		{"[::ffff:192.168.0.1]:443", true},
		{"[::ffff:169.254.169.254]:80", true},
		{"[::ffff:100.64.0.1]:443", true},
		{"[::ffff:0.0.0.0]:443", true},
		{"[::ffff:255.255.255.255]:443", true},
		{"[::ffff:224.0.0.1]:443", true},
		{"[fe80::1%eth0]:443", true},
		{"[fdff::1]:443", true},
		{"[::127.0.0.1]:443", true},
		{"[2002:a9fe:a9fe::]:80", true},
		{"[2001:0:4136:e378:8000:63bf:3fff:fdd2]:443", true},
		{"not-an-address", true},
		{"[2002:5db8:d822::1]:443", false},
		{"[64:ff9b::5db8:d822]:443", false},
		{"93.184.216.34:443", false},
		{"[2606:4700::1111]:443", false},
		{"[::ffff:93.184.216.34]:443", false},
	}
	for _, tt := range tests {
		err := checkAddress(addressGuard(config.Destination{}), tt.address)
		if gotErr := err != nil; gotErr != tt.wantErr {
			t.Errorf("checkAddress(%q) = %v, want error %v", tt.address, err, tt.wantErr)
		}
		if err != nil && !errors.Is(err, ErrBlockedAddress) {
			t.Errorf("checkAddress(%q) = %v, want it to match ErrBlockedAddress", tt.address, err)
		}
	}
}

// TestRedirectNotFollowed: a 302 to the metadata service comes back as the
// response; nothing dials 169.254.169.254.
func TestRedirectNotFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/iam/security-credentials/", http.StatusFound)
	}))
	defer srv.Close()
	probe := &dialProbe{}
	client := newClient(config.Destination{Name: "orders", URL: srv.URL, TimeoutSeconds: 2, AllowPrivateNetworks: true}, probe.after)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader("{}"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		t.Errorf("status = %d, want 302 returned as is", resp.StatusCode)
	}
	for _, a := range probe.addresses() {
		if strings.HasPrefix(a, "169.254.") {
			t.Errorf("dialed %s", a)
		}
	}
	if n := len(probe.addresses()); n != 1 {
		t.Errorf("%d dials, want 1 (the subscriber only)", n)
	}
}

// TestNoProxy: proxy settings in the environment are ignored, so no proxy
// connects on our behalf out of the guard's sight.
func TestNoProxy(t *testing.T) {
	t.Setenv("HTTP_PROXY", "http://10.9.9.9:3128")
	t.Setenv("HTTPS_PROXY", "http://10.9.9.9:3128")
	for _, allow := range []bool{false, true} {
		c := NewClient(config.Destination{Name: "orders", URL: "https://example.com/", AllowPrivateNetworks: allow})
		tr := c.Transport.(*http.Transport)
		if tr.Proxy != nil {
			t.Errorf("allowPrivate=%v: transport has a proxy function", allow)
		}
		if tr.ResponseHeaderTimeout != 10*time.Second || tr.TLSHandshakeTimeout != 5*time.Second || tr.MaxIdleConnsPerHost != 10 {
			t.Errorf("allowPrivate=%v: timeouts %s/%s, idle per host %d", allow, tr.ResponseHeaderTimeout, tr.TLSHandshakeTimeout, tr.MaxIdleConnsPerHost)
		}
	}
	probe := &dialProbe{}
	client := newClient(config.Destination{Name: "orders", URL: "https://example.com/", TimeoutSeconds: 2}, probe.after)
	req, _ := http.NewRequest(http.MethodPost, "http://10.0.0.1/hooks", strings.NewReader("{}"))
	if _, err := client.Do(req); !errors.Is(err, ErrBlockedAddress) {
		t.Errorf("error = %v, want %v (not a proxy connection)", err, ErrBlockedAddress)
	}
	if seen := probe.addresses(); len(seen) != 0 {
		t.Errorf("dialed %v, want nothing", seen)
	}
}

// TestPrivateAllowed: a destination that allows private networks reaches
// loopback (local development).
func TestPrivateAllowed(t *testing.T) {
	port, accepted := countingServer(t, "tcp4", "127.0.0.1:0")
	client := NewClient(config.Destination{Name: "local", URL: "http://localhost/", AllowPrivateNetworks: true})
	req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/", strings.NewReader("{}"))
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if accepted.Load() != 1 {
		t.Errorf("accepted %d connections, want 1", accepted.Load())
	}
}

// TestConnectionReuse: consecutive deliveries share one connection.
func TestConnectionReuse(t *testing.T) {
	port, accepted := countingServer(t, "tcp4", "127.0.0.1:0")
	client := NewClient(config.Destination{Name: "local", URL: "http://127.0.0.1/", AllowPrivateNetworks: true})
	for range 5 {
		req, _ := http.NewRequest(http.MethodPost, "http://127.0.0.1:"+port+"/", strings.NewReader("{}"))
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	if got := accepted.Load(); got != 1 {
		t.Errorf("%d connections for 5 requests, want 1", got)
	}
}

// TestClientResumesTLSSessions: a new connection to a subscriber resumes
// the TLS session of the one before (no certificate chain verified again),
// and an mTLS lane's transport never does, so that a rotated certificate
// is presented by the next connection.
func TestClientResumesTLSSessions(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	dest := config.Destination{Name: "d", URL: srv.URL, AllowPrivateNetworks: true}
	post := func(c *http.Client) *tls.ConnectionState {
		t.Helper()
		resp, err := c.Post(srv.URL, "application/json", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		c.CloseIdleConnections() // the next POST dials again
		return resp.TLS
	}
	c := NewClient(dest)
	c.Transport.(*http.Transport).TLSClientConfig.RootCAs = pool
	if first := post(c); first.DidResume {
		t.Fatal("the first connection resumed a session it never had")
	}
	if second := post(c); !second.DidResume {
		t.Error("the second connection made a full handshake: the session cache is not used")
	}

	m := newClientTLS(&config.TLS{ClientCertificateSecret: "cert"}, nil, c.Transport.(*http.Transport), time.Now)
	mc := &http.Client{Transport: m.transport(pool)}
	for i := range 2 {
		if st := post(mc); st.DidResume {
			t.Errorf("mTLS connection %d resumed a session", i+1)
		}
	}
}
