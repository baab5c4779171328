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

// errURLSecret means the destination's URL secret could not be read or
// holds no URL the destination may be sent to. Its text names the secret
// and the URL's host at most, never the URL: its path or query carries a
// token.
var errURLSecret = errors.New("url secret unusable")

// endpoint returns the URL deliveries are POSTed to: the configured url,
// or the value of the urlSecretName secret (cached like the headers'),
// checked as validation checks a configured one, so the address guard's
// rules hold for it too before the transport's own check at connect time.
func (s *Sender) endpoint(ctx context.Context) (string, error) {
	name := s.dest.URLSecretName
	if name == "" {
		return s.dest.URL, nil
	}
	v, err := s.headerSecrets.Value(ctx, name)
	if err != nil {
		return "", fmt.Errorf("%w: secret %q: %w", errURLSecret, name, err)
	}
	if err := s.dest.CheckURL(v); err != nil {
		return "", fmt.Errorf("%w: secret %q: %w", errURLSecret, name, err)
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
