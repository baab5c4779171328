package https

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/hookfan/hookfan/shared/config"
)

// header is one of the destination's headers with its value.
type header struct {
	name, value string
	secret      bool // the value is a secret's
}

// errHeaderSecret means a header's secret could not be read for a reason
// that may pass on its own (a throttle, a 5xx, a timeout): the message
// backs off unsent. Its text names the header and the secret, never the
// value.
var errHeaderSecret = errors.New("header secret unusable")

// destinationHeaders returns the destination's headers with their current
// values: static ones as configured, the others read from their secrets
// (cached; re-read within the cache's TTL after a rotation). A secret the
// operator must fix is a *refusedError, the attempt's reason
// (ReasonHeaderSecretUnreadable, ReasonHeaderSecretInvalid).
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
				if r := headerSecretKind.fault(secretOf(hd.SecretName, "header "+hd.Name), err); r != nil {
					return nil, r
				}
				return nil, fmt.Errorf("%w: header %s: %w", errHeaderSecret, hd.Name, err)
			}
			if err := config.CheckHeaderValue(sv); err != nil {
				return nil, headerSecretKind.bad(secretOf(hd.SecretName, "header "+hd.Name), "its value "+err.Error())
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
		if r := urlSecretKind.fault(secretOf(name, ""), err); r != nil {
			return "", r
		}
		return "", fmt.Errorf("%w: secret %q: %w", errURLSecret, name, err)
	}
	if err := s.dest.CheckURL(v); err != nil {
		if r, ok := refusedEndpoint(name, err); ok {
			return "", r
		}
		return "", urlSecretKind.bad(secretOf(name, ""), err.Error())
	}
	return v, nil
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
