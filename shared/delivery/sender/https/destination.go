package https

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/secrets"
)

// header is one of the destination's headers with its value.
type header struct {
	name, value string
	secret      bool // the value is a secret's
}

// errHeaderSecret means a header's secret could not be read or holds no
// usable header value. Its text names the header and the secret, never
// the value.
var errHeaderSecret = errors.New("header secret unusable")

// destinationHeaders returns the destination's headers with their current
// values: static ones as configured, the others read from their secrets
// (cached; re-read within the cache's TTL after a rotation).
func (s *Sender) destinationHeaders(ctx context.Context) ([]header, error) {
	if len(s.dest.Headers) == 0 {
		return nil, nil
	}
	out := make([]header, 0, len(s.dest.Headers))
	for _, hd := range s.dest.Headers {
		v := hd.Value
		if hd.SecretName != "" {
			sv, err := s.headerSecrets.Value(ctx, hd.SecretName)
			if err != nil {
				return nil, fmt.Errorf("%w: header %s: %w", errHeaderSecret, hd.Name, err)
			}
			if err := config.CheckHeaderValue(sv); err != nil {
				return nil, fmt.Errorf("%w: header %s: secret %q %v", errHeaderSecret, hd.Name, hd.SecretName, err)
			}
			v = sv
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
// A URL an attempt may not go to, or a secret the operator must fix, is a
// *refusedError, the attempt's reason (Send records it as a failed
// attempt); any other error is a store that may answer later (Prepare
// backs the message off unattempted).
func (s *Sender) endpoint(ctx context.Context) (string, error) {
	name := s.dest.URLSecretName
	if name == "" {
		return s.dest.URL, nil
	}
	v, err := s.headerSecrets.Value(ctx, name)
	if err != nil {
		if r := urlSecretFault(name, err); r != nil {
			return "", r
		}
		return "", fmt.Errorf("%w: secret %q: %w", errURLSecret, name, err)
	}
	if err := s.dest.CheckURL(v); err != nil {
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
// after the destination refused a delivery as unauthorized (401, 403): a
// credential rotated at the subscriber's side is used from the next
// attempt on, not after the cache's TTL. The cache bounds how often the
// store is asked.
func (s *Sender) refreshHeaderSecrets(ctx context.Context, status int) {
	if status != http.StatusUnauthorized && status != http.StatusForbidden {
		return
	}
	for _, name := range s.dest.Secrets() {
		_, _, _ = s.headerSecrets.RefreshValue(ctx, name) // a failure leaves the cached value in use
	}
}
