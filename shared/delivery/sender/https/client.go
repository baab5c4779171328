package https

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// ErrBlockedAddress means the destination resolved to an address deliveries
// must not reach (loopback, private, link-local, …) and the destination does
// not allow private networks. No connection was attempted.
var ErrBlockedAddress = errors.New("destination address not allowed")

// Transport tuning. Timeouts longer than the destination's own deadline are
// cut to it.
const (
	dialTimeout         = 5 * time.Second
	tlsHandshakeTimeout = 5 * time.Second
	keepAlive           = 30 * time.Second
	idleConnTimeout     = 90 * time.Second
	maxIdleConns        = 64
	// maxIdleConnsPerHost matches the largest batch: every record of a
	// batch can keep its connection for the next invocation.
	maxIdleConnsPerHost = config.MaxBatchSize
	// tlsSessions is how many subscribers' TLS sessions a function keeps
	// to resume (a lane has one URL; a few more for its token endpoint).
	tlsSessions = 8
)

// NewClient returns the one HTTP client a deliver function uses for all its
// deliveries: connections are reused across invocations, redirects are not
// followed, proxies are never used, and unless the destination allows
// private networks every connection is checked, on its resolved IP just
// before connecting, against netguard (so DNS rebinding cannot slip past).
// The per-request deadline comes from the request's context.
func NewClient(d config.Destination) *http.Client {
	return newClient(d, nil)
}

// newClient lets tests observe every connection the guard lets through:
// after, when set, runs once the guard has passed and before connect(2).
func newClient(d config.Destination, after func(network, address string) error) *http.Client {
	return &http.Client{
		Transport: newTransport(addressGuard(d), d.Timeout(), after),
		// A 3xx is a failed delivery: never follow it (a redirect could
		// point anywhere, including at the metadata service).
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

func newTransport(guard func(netip.Addr) error, timeout time.Duration, after func(network, address string) error) *http.Transport {
	dialer := &net.Dialer{
		Timeout:        min(dialTimeout, timeout),
		KeepAlive:      keepAlive,
		ControlContext: dialControl(guard, after),
	}
	return &http.Transport{
		// No proxy, ever: a proxy would connect on our behalf, out of the
		// guard's sight.
		Proxy:             nil,
		DialContext:       dialer.DialContext,
		ForceAttemptHTTP2: true,
		// The session cache lets a new connection to a subscriber resume
		// the TLS session of an earlier one: no certificate chain to
		// verify again (BenchmarkDeliveryTLS: resumed against
		// fresh).
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12, ClientSessionCache: tls.NewLRUClientSessionCache(tlsSessions)},
		TLSHandshakeTimeout:   min(tlsHandshakeTimeout, timeout),
		ResponseHeaderTimeout: timeout,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          maxIdleConns,
		MaxIdleConnsPerHost:   maxIdleConnsPerHost,
		IdleConnTimeout:       idleConnTimeout,
		// Response bodies are discarded: do not ask for compression.
		DisableCompression: true,
	}
}

// dialControl checks the socket's destination, already resolved to an IP,
// before the connect call; a nil guard lets every address through
// (allowPrivateNetworks).
func dialControl(guard func(netip.Addr) error, after func(network, address string) error) func(context.Context, string, string, syscall.RawConn) error {
	return func(_ context.Context, network, address string, _ syscall.RawConn) error {
		if guard != nil {
			if err := checkAddress(guard, address); err != nil {
				return err
			}
		}
		if after != nil {
			return after(network, address)
		}
		return nil
	}
}

// checkAddress refuses an "ip:port" the guard refuses.
func checkAddress(guard func(netip.Addr) error, address string) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot read dial address %q: %v", ErrBlockedAddress, address, err)
	}
	if err := guard(ap.Addr()); err != nil {
		return fmt.Errorf("%w: %w", ErrBlockedAddress, err)
	}
	return nil
}
