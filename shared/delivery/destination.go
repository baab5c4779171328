package delivery

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"time"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/secrets"
)

// What a destination adds to a plain signed POST: its own headers (static
// or from secrets), a body filter, and bodies stored in S3.

// Payloads reads bodies stored in S3 (*payload.S3), checking each against
// its reference.
type Payloads interface {
	Get(ctx context.Context, ref payload.Reference) ([]byte, error)
}

// HeaderSecrets reads the secrets a destination's headers and its URL
// (urlSecretName) carry, verbatim (*secrets.Cache).
type HeaderSecrets interface {
	Value(ctx context.Context, name string) (string, error)
	RefreshValue(ctx context.Context, name string) (value string, changed bool, err error)
}

// PayloadTimeout bounds reading one stored body (up to 4.5 MB).
const PayloadTimeout = 5 * time.Second

// header is one of the destination's headers with its value.
type header struct {
	name, value string
	secret      bool // the value is a secret's
}

// errHeaderSecret means a header's secret could not be read or holds no
// usable header value. Its text names the header and the secret, never
// the value.
var errHeaderSecret = errors.New("header secret unusable")

// loadBody reads the body of a message stored in S3. When it returns
// !ok, stop says what happens to the message: a body that cannot be read
// (an S3 outage, an object gone or not matching its reference) is backed
// off like any failure of ours, so it reaches the DLQ after the schedule.
func (h *Handler) loadBody(ctx context.Context, p *prepared) (stop decision, ok bool) {
	if p.msg.Ref == nil {
		return ack, true
	}
	if h.payloads == nil {
		h.count(metrics.DeliveryFailed)
		return h.notAttempted(ctx, *p, "payload unavailable", errors.New("the message refers to a stored body but this function has no payload bucket")), false
	}
	pctx, cancel := context.WithTimeout(ctx, PayloadTimeout)
	defer cancel()
	body, err := h.payloads.Get(pctx, *p.msg.Ref)
	if err != nil {
		h.count(metrics.DeliveryFailed)
		return h.notAttempted(ctx, *p, "payload unavailable", err), false
	}
	p.msg.Body = body
	return ack, true
}

// filtered reports whether the destination's body filter refuses the
// message's body; such a message is acknowledged without a POST or a
// record, counted (DeliveryFiltered) and logged.
func (h *Handler) filtered(ctx context.Context, p prepared) bool {
	if h.bodyFilter == nil {
		return false
	}
	ok, err := h.bodyFilter.Match(p.msg.Body)
	if ok {
		return false
	}
	h.count(metrics.DeliveryFiltered)
	attrs := []any{"outcome", "filtered", "reason", "the body does not match the destination's body filter"}
	if err != nil {
		attrs = append(attrs, "error", err.Error())
	}
	p.log.InfoContext(ctx, LogMessage, attrs...)
	return true
}

// destinationHeaders returns the destination's headers with their current
// values: static ones as configured, the others read from their secrets
// (cached; re-read within the cache's TTL after a rotation).
func (h *Handler) destinationHeaders(ctx context.Context) ([]header, error) {
	if len(h.dest.Headers) == 0 {
		return nil, nil
	}
	out := make([]header, 0, len(h.dest.Headers))
	for _, hd := range h.dest.Headers {
		v := hd.Value
		if hd.SecretName != "" {
			s, err := h.headerSecrets.Value(ctx, hd.SecretName)
			if err != nil {
				return nil, fmt.Errorf("%w: header %s: %w", errHeaderSecret, hd.Name, err)
			}
			if err := config.CheckHeaderValue(s); err != nil {
				return nil, fmt.Errorf("%w: header %s: secret %q %v", errHeaderSecret, hd.Name, hd.SecretName, err)
			}
			v = s
		}
		out = append(out, header{name: http.CanonicalHeaderKey(hd.Name), value: v, secret: hd.SecretName != ""})
	}
	return out, nil
}

// errURLSecret means the destination's URL secret could not be read for
// a reason that may pass on its own (a throttle, a 5xx, a timeout): the
// message backs off unsent. Its text names the secret, never the URL.
var errURLSecret = errors.New("url secret unusable")

// Reasons a record's error starts with when the URL secret (urlSecretName)
// gives no URL to attempt for a reason the operator must fix: failed
// attempts like a refused address (egress.go), never a silent back-off.
// The text names the secret, never its value, not even a prefix: its path
// or query carries a token.
const (
	// ReasonURLSecretInvalid: the secret holds no URL a delivery may go to
	// (empty or binary, not absolute, not https, credentials, a fragment).
	ReasonURLSecretInvalid = "url_secret_invalid"
	// ReasonURLSecretUnreadable: the secret cannot be read, and retrying
	// soon will not change that: no such secret (or deleted, or without a
	// current value), access denied, or its KMS key cannot decrypt it.
	ReasonURLSecretUnreadable = "url_secret_unreadable"
)

// endpoint returns the URL deliveries are POSTed to: the configured url,
// or the value of the urlSecretName secret (cached like the headers'),
// checked as validation checks a configured one, so the address guard's
// rules hold for it too before the transport's own check at connect time.
// A secret the operator must fix is a *refusedError, the attempt's reason;
// any other error is a store that may answer later.
func (h *Handler) endpoint(ctx context.Context) (string, error) {
	name := h.dest.URLSecretName
	if name == "" {
		return h.dest.URL, nil
	}
	v, err := h.headerSecrets.Value(ctx, name)
	if err != nil {
		if r := urlSecretFault(name, err); r != nil {
			return "", r
		}
		return "", fmt.Errorf("%w: secret %q: %w", errURLSecret, name, err)
	}
	if err := h.dest.CheckURL(v); err != nil {
		if r, ok := refusedEndpoint(name, err); ok {
			return "", r
		}
		return "", &refusedError{reason: ReasonURLSecretInvalid, detail: "secret " + strconv.Quote(name) + ": " + err.Error()}
	}
	return v, nil
}

// urlSecretFault is the attempt's reason when reading the URL secret failed
// for good (matched by type, never by text), or nil for a failure that may
// pass (throttled, a 5xx, a timeout, the store unreachable).
func urlSecretFault(name string, err error) *refusedError {
	q := "secret " + strconv.Quote(name)
	var api smithy.APIError
	var decrypt *smtypes.DecryptionFailure
	switch {
	case errors.Is(err, secrets.ErrInvalid):
		return &refusedError{reason: ReasonURLSecretInvalid, detail: q + " holds no text (empty or binary); store https://host/path, verbatim"}
	case errors.Is(err, secrets.ErrNotSet):
		return &refusedError{reason: ReasonURLSecretUnreadable, detail: q + " does not exist, is scheduled for deletion or has no current value; create or restore it"}
	case errors.As(err, &decrypt):
		return &refusedError{reason: ReasonURLSecretUnreadable, detail: q + " cannot be decrypted with its KMS key (DecryptionFailure); check that the key is enabled and the lane's role may use it"}
	case errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException":
		return &refusedError{reason: ReasonURLSecretUnreadable, detail: q + ": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)"}
	}
	return nil
}

// refreshHeaderSecrets reads the headers' secrets (and the URL's) again
// after the destination refused a delivery as unauthorized (401, 403): a credential
// rotated at the subscriber's side is used from the next attempt on, not
// after the cache's TTL. The cache bounds how often the store is asked.
func (h *Handler) refreshHeaderSecrets(ctx context.Context, status int) {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	for _, name := range h.dest.Secrets() {
		_, _, _ = h.headerSecrets.RefreshValue(ctx, name) // a failure leaves the cached value in use
	}
}

// compileBodyFilter compiles the destination's body filter; nil when it
// has none.
func compileBodyFilter(d config.Destination) (*bodyfilter.Filter, error) {
	if len(d.Filter.Body) == 0 {
		return nil, nil
	}
	f, err := bodyfilter.Compile(d.Filter.Body)
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: %w", d.Name, err)
	}
	return f, nil
}
