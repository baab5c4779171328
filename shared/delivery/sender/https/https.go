// Package https is the sender of an https destination: each attempt is a
// POST, signed per Standard Webhooks, through a guarded HTTP client. Its
// options are what a destination adds to a plain signed POST: its own
// headers (static or from secrets), a URL read from a secret, a client
// certificate (mutual TLS) and an OAuth 2.0 token (ClientAuth, which wraps
// the client's transport), an AWS Signature Version 4 on top of the
// Standard Webhooks one, and a W3C traceparent header.
package https

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/signing"
	"github.com/hookfan/hookfan/shared/version"
)

// Delivery request headers (the Standard Webhooks ones and ours).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
	HeaderSource    = "hookfan-source"
	HeaderType      = "hookfan-type"
	HeaderAttempt   = "hookfan-attempt"
	// HeaderAcceptedAt is when ingest accepted the event (RFC 3339, UTC,
	// milliseconds): the same on every attempt, redrive and replay.
	HeaderAcceptedAt = "hookfan-accepted-at"
	// HeaderBatchSize is the number of events in a batch's POST (a
	// batched lane's); its webhook-id is the batch's (sender.BatchID).
	HeaderBatchSize = "hookfan-batch-size"
	// HeaderReconciled is "true" on an event a reconciliation run brought
	// in (the provider sent it; it never reached ingest), absent otherwise.
	HeaderReconciled = "hookfan-reconciled"
)

// MaxResponseBody is how much of a response body is read (then discarded).
const MaxResponseBody = 64 << 10

// SecretSource returns the active values of a secret (*secrets.Cache).
type SecretSource interface {
	Get(ctx context.Context, name string) ([]string, error)
}

// HeaderSecrets reads the secrets a destination's headers, its URL
// (urlSecretName), its client certificate and its OAuth 2.0 client carry,
// verbatim (*secrets.Cache).
type HeaderSecrets interface {
	Value(ctx context.Context, name string) (string, error)
	RefreshValue(ctx context.Context, name string) (value string, changed bool, err error)
}

// Doer sends HTTP requests (the *http.Client from NewClient).
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Options configure a Sender. Destination, SecretID, Secrets and Client
// are required; HeaderSecrets when the destination names secrets beyond
// its signing secret, ClientAuth when it sets tls or auth.oauth2,
// Credentials when it sets auth.sigv4.
type Options struct {
	Destination config.Destination
	// SecretID names the destination's signing secret in Secrets Manager,
	// read through Secrets.
	SecretID string
	Secrets  SecretSource
	// HeaderSecrets reads the secrets of the destination's headers, URL,
	// client certificate and OAuth 2.0 client.
	HeaderSecrets HeaderSecrets
	// Client sends the requests: NewClient's, its transport wrapped by
	// ClientAuth (NewClientAuth) when the destination sets tls or
	// auth.oauth2.
	Client     Doer
	ClientAuth *ClientAuth
	// Credentials sign the requests of a destination with auth.sigv4 (the
	// lane role's); cached once here for the process.
	Credentials aws.CredentialsProvider
	// Tracing adds a W3C traceparent header, derived from the event's
	// X-Ray trace header, to each delivery (config tracing on).
	Tracing bool
	// Now replaces the clock (the webhook-timestamp), for tests.
	Now func() time.Time
}

// Sender POSTs a lane's deliveries. It is safe for concurrent use.
type Sender struct {
	dest          config.Destination
	secretID      string
	secrets       SecretSource
	headerSecrets HeaderSecrets
	client        Doer
	clientAuth    *ClientAuth // nil without tls or auth.oauth2
	awsSigner     *awsSigner  // nil without auth.sigv4
	tracing       bool
	now           func() time.Time

	mu         sync.Mutex
	signerFrom []string // the secret values signer was built from
	signer     *signing.Signer
}

// New checks the options and returns the destination's sender.
func New(o Options) (*Sender, error) {
	d := o.Destination
	required := []struct {
		name string
		ok   bool
	}{
		{"Destination.URL or URLSecretName", d.URL != "" || d.URLSecretName != ""},
		{"SecretID", o.SecretID != ""}, {"Secrets", o.Secrets != nil}, {"Client", o.Client != nil},
		{"HeaderSecrets (the destination's headers or URL name secrets)", o.HeaderSecrets != nil || len(d.Secrets()) == 0},
		{"ClientAuth (the destination sets tls or auth.oauth2)", o.ClientAuth != nil || (d.TLS == nil && d.OAuth2Config() == nil)},
	}
	var missing []error
	for _, r := range required {
		if !r.ok {
			missing = append(missing, fmt.Errorf("delivery: option %s is required", r.name))
		}
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	as, err := newAWSSigner(d, o.Credentials)
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: %w", d.Name, err)
	}
	s := &Sender{dest: d, secretID: o.SecretID, secrets: o.Secrets, headerSecrets: o.HeaderSecrets, client: o.Client,
		clientAuth: o.ClientAuth, awsSigner: as, tracing: o.Tracing, now: o.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Prepare reads the signing secret, the headers' secrets, the URL's, the
// client certificate and the OAuth 2.0 client's secret through the cache.
// A store that may answer later is a *sender.NotReadyError: the message
// backs off unattempted. A secret the operator must fix (unreadable for
// good, a value of no use), or a URL whose address may not be reached, is
// not: Prepare stops there and lets the event be claimed, and Send fails
// the attempt unsent with that reason (secretfault.go, egress.go).
func (s *Sender) Prepare(ctx context.Context) error {
	if _, err := s.currentSigner(ctx); err != nil {
		return notReady("signing secret unavailable", err)
	}
	if _, err := s.destinationHeaders(ctx); err != nil {
		return notReady("header secret unavailable", err)
	}
	if _, err := s.endpoint(ctx); err != nil {
		return notReady("url secret unavailable", err)
	}
	if err := s.clientAuth.Prepare(ctx); err != nil {
		return notReady("client credentials unavailable", err)
	}
	return nil
}

// notReady is Prepare's answer when readying an attempt failed with err:
// nil for the attempt's own reason (a *refusedError, which Send records),
// else a NotReadyError.
func notReady(reason string, err error) error {
	var refused *refusedError
	if errors.As(err, &refused) {
		return nil
	}
	return &sender.NotReadyError{Reason: reason, Err: err}
}

// Send POSTs one signed delivery to the destination's URL within
// d.Timeout, reads up to MaxResponseBody of the answer and discards it,
// but for the first sender.MaxAnswer bytes of a non-2xx answer, which the
// result keeps (Answer).
// A secret the operator must fix (Prepare), or one it cannot read now (it
// turned unreadable since Prepare, or a probe's), fails the attempt
// unsent. After a 401 or 403 it reads the headers' and the URL's secrets
// again, so a credential rotated at the subscriber's side is used from the
// next attempt on.
func (s *Sender) Send(ctx context.Context, d sender.Delivery) sender.Result {
	signer, err := s.currentSigner(ctx)
	if err != nil {
		return unsent("signing secret unavailable: ", err)
	}
	// The destination's own headers too: a gateway in front of it that
	// wants a token would refuse the delivery without them.
	headers, err := s.destinationHeaders(ctx)
	if err != nil {
		return unsent("", err)
	}
	to, err := s.endpoint(ctx)
	if err != nil {
		return unsent("", err)
	}
	// The client certificate and the OAuth 2.0 client's secret, which the
	// client's transport reads again for the request: a secret of theirs
	// the operator must fix fails the attempt here, unsent, like the others.
	if err := s.clientAuth.Prepare(ctx); err != nil {
		return unsent("client credentials unavailable: ", err)
	}
	res := s.post(ctx, to, d, signer, headers)
	s.refreshHeaderSecrets(ctx, res.Status)
	return res
}

// unsent is the result of an attempt that readying failed with err:
// failed unsent with its reason (a *refusedError: egress.go, destination.go,
// secretfault.go), or "not sent: " and what err says.
func unsent(what string, err error) sender.Result {
	var refused *refusedError
	if errors.As(err, &refused) {
		return sender.Result{Err: refused, Unsent: true}
	}
	return sender.Result{Err: errors.New("not sent: " + what + err.Error())}
}

// SendBatch POSTs ds as one signed batch (sender.BatchBody) within the
// first delivery's timeout: one attempt, whose result is every entry's.
// The batch's webhook-id is sender.BatchID of its events, its
// hookfan-attempt the highest of theirs, and hookfan-batch-size their
// number; the envelope's items carry each event's id, type, source and
// acceptance time, so the per-event headers are left out.
func (s *Sender) SendBatch(ctx context.Context, ds []sender.Delivery) []sender.Result {
	res := s.sendBatch(ctx, ds)
	out := make([]sender.Result, len(ds))
	for i := range out {
		out[i] = res
	}
	return out
}

func (s *Sender) sendBatch(ctx context.Context, ds []sender.Delivery) sender.Result {
	body, err := sender.BatchBody(ds)
	if err != nil {
		return sender.Result{Err: errors.New("not sent: " + err.Error()), Unsent: true}
	}
	b := sender.Delivery{ID: sender.BatchID(ds), ContentType: "application/json", Body: body, Timeout: ds[0].Timeout,
		TraceHeader: ds[0].TraceHeader, Events: len(ds)}
	for _, d := range ds {
		b.Attempt = max(b.Attempt, d.Attempt)
	}
	return s.Send(ctx, b)
}

func (s *Sender) post(ctx context.Context, to string, d sender.Delivery, signer *signing.Signer, extra []header) sender.Result {
	ctx, cancel := context.WithTimeout(ctx, d.Timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(d.Body))
	if err != nil {
		// Not the error itself: it quotes the URL.
		return sender.Result{Err: errors.New("build request: the URL is not usable")}
	}
	ts := s.now()
	req.Header = http.Header{
		"Content-Type":                           {d.ContentType},
		"User-Agent":                             {version.UserAgent},
		http.CanonicalHeaderKey(HeaderID):        {d.ID},
		http.CanonicalHeaderKey(HeaderTimestamp): {strconv.FormatInt(ts.Unix(), 10)},
		http.CanonicalHeaderKey(HeaderSignature): {signer.Sign(d.ID, ts, d.Body)},
		http.CanonicalHeaderKey(HeaderAttempt):   {strconv.Itoa(d.Attempt)},
	}
	if d.Events > 0 {
		// A batch: each item names its own source and type.
		req.Header[http.CanonicalHeaderKey(HeaderBatchSize)] = []string{strconv.Itoa(d.Events)}
	} else {
		req.Header[http.CanonicalHeaderKey(HeaderSource)] = []string{d.Source}
		req.Header[http.CanonicalHeaderKey(HeaderType)] = []string{d.Type}
	}
	if !d.ReceivedAt.IsZero() {
		req.Header[http.CanonicalHeaderKey(HeaderAcceptedAt)] = []string{d.ReceivedAt.UTC().Format(message.ReceivedAtLayout)}
	}
	if d.Reconciled {
		req.Header[http.CanonicalHeaderKey(HeaderReconciled)] = []string{message.ReconciledTrue}
	}
	// The destination's own headers; config validation keeps them off
	// every name set above.
	for _, hd := range extra {
		req.Header[hd.name] = []string{hd.value}
	}
	if s.tracing {
		if tp, ok := TraceParent(d.TraceHeader); ok {
			req.Header[HeaderTraceParent] = []string{tp}
		}
	}
	if err := s.signAWS(ctx, req, d.Body, extra, ts); err != nil {
		return sender.Result{Err: err}
	}
	start := time.Now()
	resp, err := s.client.Do(req)
	if err != nil {
		return sender.Result{Err: transportError(err), Latency: time.Since(start)}
	}
	r := sender.Result{Status: resp.StatusCode, Answer: readAnswer(resp)}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody-int64(len(r.Answer))))
	_ = resp.Body.Close()
	r.Latency = time.Since(start)
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d, ok := sender.ParseRetryAfter(resp.Header.Get("Retry-After"), ts); ok {
			r.RetryAfter = d
		}
	}
	return r
}

// readAnswer reads the first sender.MaxAnswer bytes of a non-2xx answer,
// within the attempt's deadline (the request's context bounds the body's
// reads too); nil for a 2xx or an empty body. A read cut short keeps what
// arrived.
func readAnswer(resp *http.Response) []byte {
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, sender.MaxAnswer))
	if len(b) == 0 {
		return nil
	}
	return b
}

// transportError is the client's error without the URL, which url.Error
// quotes and which may carry a token in its query; a guard's refusal at
// connect time as its record shows it (ReasonAddressRefused), without the
// dialer's "dial tcp ...:" wrapping.
func transportError(err error) error {
	if errors.Is(err, ErrBlockedAddress) {
		if reason := guardRefusal(err); reason != "" {
			return &guardError{text: reason, err: err}
		}
	}
	var ue *url.Error
	if !errors.As(err, &ue) {
		return err
	}
	if errors.Is(err, ErrBlockedAddress) {
		return &guardError{text: innermost(ue.Err), err: ue.Err}
	}
	return ue.Err
}

// guardError is a guard's refusal at connect time, as the record keeps it.
type guardError struct {
	text string
	err  error
}

func (e *guardError) Error() string { return e.text }

func (e *guardError) Unwrap() error { return e.err }

// innermost drops the dialer's "dial tcp ...:" wrapping of a guard refusal.
func innermost(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// currentSigner returns a signer for the secret's active values, rebuilt
// only when they change. A signing secret the operator must fix is a
// *refusedError, the attempt's reason (ReasonSigningSecretUnreadable,
// ReasonSigningSecretInvalid); any other error is a store that may answer
// later.
func (s *Sender) currentSigner(ctx context.Context) (*signing.Signer, error) {
	values, err := s.secrets.Get(ctx, s.secretID)
	if err != nil {
		if r := signingSecretKind.fault(secretOf(s.secretID, ""), err); r != nil {
			return nil, r
		}
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.signer != nil && slices.Equal(values, s.signerFrom) {
		return s.signer, nil
	}
	sg, err := signing.New(values)
	if err != nil {
		// signing.New names the value by its position, never its content.
		return nil, signingSecretKind.bad(secretOf(s.secretID, ""), err.Error()+"; "+storeSigningKey)
	}
	s.signer, s.signerFrom = sg, slices.Clone(values)
	return sg, nil
}
