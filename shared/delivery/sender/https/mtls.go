package https

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Mutual TLS: the destination's client certificate and private CA (either
// or both: a private CA alone trusts a receiver that asks for no
// certificate) come from
// Secrets Manager through the secrets cache (HeaderSecrets, read verbatim),
// so a rotated pair is presented once stored, within the cache's TTL. The
// pair reaches each handshake through tls.Config.GetClientCertificate,
// without rebuilding the transport; a new CA bundle swaps in a clone of the
// guarded transport (same dialer, same address guard) with the new roots.
// A failed handshake reads both secrets again, at most once per
// TLSRereadEvery, and is retried once when they changed: no byte of the
// delivery reached the destination's application.

// TLSRereadEvery bounds how often a failed handshake reads the client
// certificate's and CA's secrets again before their TTL.
const TLSRereadEvery = time.Minute

// Reasons a record's error starts with when the handshake failed.
const (
	// ReasonTLSRefusedByDestination: the destination's server refused the
	// handshake with an alert (our client certificate refused: unknown CA,
	// bad or expired certificate, certificate required).
	ReasonTLSRefusedByDestination = "tls_refused_by_destination"
	// ReasonTLSDestinationUntrusted: we refused the destination's server
	// certificate (unknown authority, wrong host name, expired).
	ReasonTLSDestinationUntrusted = "tls_destination_untrusted"
)

// errClientCertificate means the client certificate's or CA's secret could
// not be read for a reason that may pass on its own (a throttle, a 5xx, a
// timeout). Its text names the secret, never the value. A secret the
// operator must fix is a *refusedError instead (ReasonTLSSecretUnreadable,
// ReasonTLSSecretInvalid).
var errClientCertificate = errors.New("client certificate unusable")

// The fields that name the secrets, as a reason's text shows them.
const (
	certificateField = "tls.clientCertificateSecret"
	caField          = "tls.caSecret"
)

// clientTLS presents the destination's client certificate and trusts its
// private CA. It is the client's RoundTripper.
type clientTLS struct {
	secrets          HeaderSecrets
	certName, caName string
	base             *http.Transport // the guarded transport, cloned
	now              func() time.Time

	cert atomic.Pointer[tls.Certificate] // what GetClientCertificate presents
	tr   atomic.Pointer[http.Transport]  // the transport in use

	mu       sync.Mutex
	certFrom string // the secret values the pair and the roots were read from
	caFrom   string
	applied  uint64 // counts changes applied, so a read older than one is not
	rereadAt time.Time
}

func newClientTLS(t *config.TLS, secrets HeaderSecrets, base *http.Transport, now func() time.Time) *clientTLS {
	c := &clientTLS{secrets: secrets, certName: t.ClientCertificateSecret, caName: t.CASecret, base: base, now: now}
	c.tr.Store(c.transport(nil))
	return c
}

// transport clones the guarded transport with the client certificate
// callback (noClientCertificate without one) and roots (nil: the system's), and without TLS session
// resumption: every new connection makes a full handshake, so a rotated
// certificate or a changed CA takes effect on the next one (a resumed
// session would carry the identity and the verification of the first).
func (c *clientTLS) transport(roots *x509.CertPool) *http.Transport {
	t := c.base.Clone()
	cfg := t.TLSClientConfig.Clone()
	if c.certName != "" {
		cfg.GetClientCertificate = c.clientCertificate
	} else {
		cfg.GetClientCertificate = noClientCertificate
	}
	cfg.RootCAs = roots
	cfg.ClientSessionCache = nil
	t.TLSClientConfig = cfg
	return t
}

// clientCertificate is the handshake's GetClientCertificate: the pair read
// last. Before any was read it presents none (the handshake then fails at
// a destination requiring one, recorded as refused by it).
func (c *clientTLS) clientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if crt := c.cert.Load(); crt != nil {
		return crt, nil
	}
	return &tls.Certificate{}, nil
}

// certificateAskedKey is the context key of the flag a handshake without
// a client certificate sets when the receiver asks for one.
type certificateAskedKey struct{}

// noClientCertificate is the handshake's GetClientCertificate when the
// destination sets none (caSecret alone): it presents none, as no
// callback would, and notes in the handshake's context that the receiver
// asked, so a refusal can say why.
func noClientCertificate(cri *tls.CertificateRequestInfo) (*tls.Certificate, error) {
	if asked, ok := cri.Context().Value(certificateAskedKey{}).(*atomic.Bool); ok {
		asked.Store(true)
	}
	return &tls.Certificate{}, nil
}

// load reads both secrets through the cache and applies what changed. A
// read that began before another load applied a change is not applied
// over it: while the cache refreshes a value, a delivery arriving meanwhile
// is served the one it replaces.
func (c *clientTLS) load(ctx context.Context) error {
	c.mu.Lock()
	began := c.applied
	c.mu.Unlock()
	var v, ca string
	var err error
	if c.certName != "" {
		if v, err = c.secrets.Value(ctx, c.certName); err != nil {
			if r := certificateSecretKind.fault(secretOf(c.certName, certificateField), err); r != nil {
				return r
			}
			return fmt.Errorf("%w: secret %q: %w", errClientCertificate, c.certName, err)
		}
	}
	if c.caName != "" {
		if ca, err = c.secrets.Value(ctx, c.caName); err != nil {
			if r := caSecretKind.fault(secretOf(c.caName, caField), err); r != nil {
				return r
			}
			return fmt.Errorf("%w: CA secret %q: %w", errClientCertificate, c.caName, err)
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if crt := c.cert.Load(); crt != nil && v == c.certFrom && c.now().After(crt.Leaf.NotAfter) {
		// Expired since it was read, and not replaced in the secret.
		return certificateSecretKind.bad(secretOf(c.certName, certificateField),
			"the client certificate expired at "+crt.Leaf.NotAfter.UTC().Format(time.RFC3339)+"; store the renewed certificate and key")
	}
	if c.applied != began {
		return nil // a newer read was applied meanwhile
	}
	if v != c.certFrom {
		crt, err := ParseClientCertificate(v, c.now())
		if err != nil {
			return certificateSecretKind.bad(secretOf(c.certName, certificateField), err.Error())
		}
		if c.cert.Swap(&crt) != nil {
			// Connections made with the old pair stay authenticated as
			// it: the next deliveries handshake with the new one.
			c.tr.Load().CloseIdleConnections()
		}
		c.certFrom = v
		c.applied++
	}
	if ca != c.caFrom {
		roots, err := ParseCABundle(ca)
		if err != nil {
			return caSecretKind.bad(secretOf(c.caName, caField), err.Error())
		}
		old := c.tr.Swap(c.transport(roots))
		old.CloseIdleConnections()
		c.caFrom = ca
		c.applied++
	}
	return nil
}

// reread reads both secrets again after a failed handshake, at most once
// per TLSRereadEvery, and reports whether what is presented or trusted
// changed.
func (c *clientTLS) reread(ctx context.Context) bool {
	c.mu.Lock()
	now := c.now()
	if !c.rereadAt.IsZero() && now.Sub(c.rereadAt) < TLSRereadEvery {
		c.mu.Unlock()
		return false
	}
	c.rereadAt = now
	certFrom, caFrom := c.certFrom, c.caFrom
	c.mu.Unlock()
	if c.certName != "" {
		_, _, _ = c.secrets.RefreshValue(ctx, c.certName) // a failure keeps the pair in use
	}
	if c.caName != "" {
		_, _, _ = c.secrets.RefreshValue(ctx, c.caName)
	}
	if c.load(ctx) != nil {
		return false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.certFrom != certFrom || c.caFrom != caFrom
}

// RoundTrip sends req with the current pair and roots; a failed handshake
// is read again and retried once when the secrets changed, and otherwise
// returned as a handshakeError naming the side that refused.
func (c *clientTLS) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	var asked atomic.Bool // a receiver asked for the certificate we lack
	if c.certName == "" {
		ctx = context.WithValue(ctx, certificateAskedKey{}, &asked)
		req = req.WithContext(ctx)
	}
	if err := c.load(ctx); err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := c.tr.Load().RoundTrip(req)
	if err == nil {
		return resp, nil
	}
	side := handshakeSide(err)
	if side == "" && brokenConnection(ctx, err) {
		if derr := c.diagnose(ctx, req.URL); derr != nil {
			side, err = handshakeSide(derr), derr
		}
	}
	if side == "" {
		return nil, err
	}
	if req.GetBody != nil && c.reread(ctx) {
		again := req.Clone(ctx)
		body, berr := req.GetBody()
		if berr == nil {
			again.Body = body
			if resp, err = c.tr.Load().RoundTrip(again); err == nil {
				return resp, nil
			}
			if side = handshakeSide(err); side == "" {
				return nil, err
			}
		}
	}
	return nil, &handshakeError{reason: side, err: err, noCertificate: c.certName == "", certificateAsked: asked.Load()}
}

// Diagnosis of a broken connection.
const (
	// DiagnoseTimeout bounds the handshake of its own diagnose makes.
	DiagnoseTimeout = 2 * time.Second
	// diagnoseQuiet is how long an HTTP/1.1 server that accepted the
	// handshake is given to send an alert anyway (it sends nothing else
	// before a request); an HTTP/2 server sends its settings at once.
	diagnoseQuiet = 500 * time.Millisecond
)

// brokenConnection reports whether err may be a connection the server
// closed or reset after our side of the handshake: how a TLS 1.3 server's
// refusal of our certificate can show when its alert races the request
// (it verifies the certificate after our side of the handshake ended, and
// a reset discards the alert; HTTP/2 reports only that the connection
// could not be established). Timeouts, the guard's refusals and a
// delivery's own end are not.
func brokenConnection(ctx context.Context, err error) bool {
	var netErr net.Error
	switch {
	case ctx.Err() != nil, errors.Is(err, ErrBlockedAddress), errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return false
	case errors.Is(err, syscall.ECONNREFUSED):
		return false // no server listening: nothing to ask
	}
	return true
}

// diagnose makes one handshake of its own to u's host, through the same
// guarded dialer and TLS settings, and reads the server's first answer:
// it returns the handshake's refusal (an alert, or a certificate we do not
// trust), or nil when the server accepted it or could not be asked.
func (c *clientTLS) diagnose(ctx context.Context, u *url.URL) error {
	t := c.tr.Load()
	ctx, cancel := context.WithTimeout(ctx, DiagnoseTimeout)
	defer cancel()
	port := u.Port()
	if port == "" {
		port = "443"
	}
	raw, err := t.DialContext(ctx, "tcp", net.JoinHostPort(u.Hostname(), port))
	if err != nil {
		return nil
	}
	defer raw.Close()
	cfg := t.TLSClientConfig.Clone()
	cfg.ServerName = u.Hostname()
	cfg.NextProtos = []string{"h2", "http/1.1"}
	conn := tls.Client(raw, cfg)
	if err := conn.HandshakeContext(ctx); err != nil {
		if handshakeSide(err) != "" {
			return err
		}
		return nil
	}
	deadline, _ := ctx.Deadline()
	if conn.ConnectionState().NegotiatedProtocol != "h2" {
		if quiet := time.Now().Add(diagnoseQuiet); quiet.Before(deadline) {
			deadline = quiet
		}
	}
	_ = conn.SetReadDeadline(deadline)
	if _, err := conn.Read(make([]byte, 1)); err != nil && handshakeSide(err) != "" {
		return err
	}
	return nil
}

// CloseIdleConnections closes the current transport's idle connections.
func (c *clientTLS) CloseIdleConnections() { c.tr.Load().CloseIdleConnections() }

func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}

// handshakeError is a failed TLS handshake and the side that refused it.
// It has no Timeout method: the record shows its reason, not "timeout".
type handshakeError struct {
	reason string
	err    error
	// noCertificate: the destination names no tls.clientCertificateSecret
	// (caSecret alone), so none was presented; certificateAsked: the
	// receiver asked for one in the handshake.
	noCertificate, certificateAsked bool
}

// The TLS alerts a receiver sends when it asks for a client certificate
// and gets none: certificate_required (TLS 1.3), bad_certificate (TLS 1.2,
// where the client answers the request with an empty certificate).
const (
	alertBadCertificate      tls.AlertError = 42
	alertCertificateRequired tls.AlertError = 116
)

// certificateAlert reports whether err is the alert of a receiver that
// asked for a client certificate and got none (a TLS 1.2 receiver may
// send handshake_failure instead, known by the request it made).
// crypto/tls reports a received alert as a "remote error" of an
// unexported type whose text is its AlertError's.
func certificateAlert(err error) bool {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "remote error" || op.Err == nil {
		return false
	}
	got := op.Err.Error()
	return got == alertCertificateRequired.Error() || got == alertBadCertificate.Error()
}

func (e *handshakeError) Error() string {
	switch {
	case e.reason == ReasonTLSRefusedByDestination && e.noCertificate && (e.certificateAsked || certificateAlert(e.err)):
		return e.reason + ": the destination refused the TLS handshake (" + tlsDetail(e.err) + "): the receiver asks for a client certificate and this destination presents none; set tls.clientCertificateSecret"
	case e.reason == ReasonTLSRefusedByDestination && e.noCertificate:
		return e.reason + ": the destination refused the TLS handshake (" + tlsDetail(e.err) + "); no client certificate is presented (tls.clientCertificateSecret is not set): check the TLS versions the receiver accepts"
	case e.reason == ReasonTLSRefusedByDestination:
		return e.reason + ": the destination refused the TLS handshake (" + tlsDetail(e.err) + "); check that it trusts the client certificate in tls.clientCertificateSecret and that the certificate has not expired"
	default:
		return e.reason + ": the destination's server certificate is not trusted (" + tlsDetail(e.err) + "); check tls.caSecret (the CA bundle it must chain to) and the url's host name"
	}
}

func (e *handshakeError) Unwrap() error { return e.err }

// handshakeSide says which side refused a handshake that failed with err:
// the destination (it sent a fatal alert), us (its certificate failed our
// verification), or "" when err is no handshake refusal.
func handshakeSide(err error) string {
	var verr *tls.CertificateVerificationError
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var op *net.OpError
	switch {
	case errors.As(err, &verr), errors.As(err, &unknown), errors.As(err, &host), errors.As(err, &invalid):
		return ReasonTLSDestinationUntrusted
	case errors.As(err, &op) && op.Op == "remote error":
		// crypto/tls reports an alert the peer sent as a "remote error".
		return ReasonTLSRefusedByDestination
	}
	return ""
}

// tlsDetail is the innermost, URL-free text of a handshake error.
func tlsDetail(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return "alert: " + op.Err.Error()
	}
	var verr *tls.CertificateVerificationError
	if errors.As(err, &verr) && verr.Err != nil {
		return verr.Err.Error()
	}
	return err.Error()
}

// certificateJSON is the key/value form of a client certificate secret.
type certificateJSON struct {
	Certificate string `json:"certificate"`
	PrivateKey  string `json:"privateKey"`
}

// ParseClientCertificate reads a client certificate secret: a PEM bundle
// of CERTIFICATE blocks (leaf first, then intermediates) and one
// unencrypted PRIVATE KEY block (PKCS #8, RSA or EC), or the JSON object
// {"certificate": "<PEM>", "privateKey": "<PEM>"}. The leaf must be valid
// at now. Errors never quote the value.
func ParseClientCertificate(v string, now time.Time) (tls.Certificate, error) {
	v = strings.TrimSpace(v)
	certPEM, keyPEM := v, v
	if strings.HasPrefix(v, "{") {
		var j certificateJSON
		if err := json.Unmarshal([]byte(v), &j); err != nil {
			return tls.Certificate{}, errors.New(`the value starts with '{' but is not the JSON object {"certificate": "<PEM>", "privateKey": "<PEM>"}`)
		}
		if j.Certificate == "" || j.PrivateKey == "" {
			return tls.Certificate{}, errors.New(`the JSON object lacks "certificate" or "privateKey"; store both, each as PEM`)
		}
		certPEM, keyPEM = j.Certificate, j.PrivateKey
	}
	if err := checkKeyPEM(keyPEM); err != nil {
		return tls.Certificate{}, err
	}
	crt, err := tls.X509KeyPair([]byte(certPEM), []byte(keyPEM))
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("not a usable certificate and private key (%v); store the PEM certificate chain, leaf first, and its unencrypted private key", err)
	}
	leaf := crt.Leaf
	if leaf == nil {
		if leaf, err = x509.ParseCertificate(crt.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("the leaf certificate does not parse: %v", err)
		}
		crt.Leaf = leaf
	}
	switch {
	case now.After(leaf.NotAfter):
		return tls.Certificate{}, fmt.Errorf("the client certificate expired at %s; store the renewed certificate and key", leaf.NotAfter.UTC().Format(time.RFC3339))
	case now.Before(leaf.NotBefore):
		return tls.Certificate{}, fmt.Errorf("the client certificate is valid only from %s", leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	return crt, nil
}

// checkKeyPEM refuses an encrypted private key with a clear error (the
// key's passphrase would be a second secret).
func checkKeyPEM(keyPEM string) error {
	rest := []byte(keyPEM)
	for {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			return nil
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" || b.Headers["Proc-Type"] == "4,ENCRYPTED" {
			return errors.New("the private key is encrypted; store it unencrypted (Secrets Manager encrypts the secret with KMS)")
		}
	}
}

// ParseCABundle reads a CA secret: PEM CERTIFICATE blocks only, at least
// one (a CA, or the destination's own self-signed certificate).
func ParseCABundle(v string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	rest := []byte(strings.TrimSpace(v))
	n := 0
	for len(rest) > 0 {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			if len(strings.TrimSpace(string(rest))) > 0 || n == 0 {
				return nil, errors.New("not a PEM bundle of CA certificates; store the CA certificates as PEM CERTIFICATE blocks")
			}
			break
		}
		if b.Type != "CERTIFICATE" {
			return nil, fmt.Errorf("holds a %s block; a CA bundle holds CERTIFICATE blocks only", b.Type)
		}
		crt, err := x509.ParseCertificate(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("certificate %d does not parse: %v", n+1, err)
		}
		pool.AddCert(crt)
		n++
	}
	if n == 0 {
		return nil, errors.New("holds no certificate; store the CA certificates as PEM CERTIFICATE blocks")
	}
	return pool, nil
}
