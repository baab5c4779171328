package https

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// ClientAuth is how a destination's deliveries authenticate beyond their
// signature: a client certificate (tls) and an OAuth 2.0 bearer token
// (auth.oauth2). It wraps the client's transport, so a delivery and a
// pause probe carry both; Prepare reads their secrets before an attempt is
// claimed, so a secret of ours that cannot be read backs the message off
// unattempted (like a header's secret) instead of failing an attempt.
type ClientAuth struct {
	tls   *clientTLS
	oauth *oauth2Source
}

// NewClientAuth wraps client's transport (a guarded *http.Transport from
// NewClient) with d's client certificate and OAuth 2.0 token, reading their
// secrets through secrets. It returns nil when d has neither.
func NewClientAuth(d config.Destination, secrets HeaderSecrets, client *http.Client, now func() time.Time) (*ClientAuth, error) {
	if d.TLS == nil && d.OAuth2Config() == nil {
		return nil, nil
	}
	if secrets == nil {
		return nil, errors.New("delivery: the destination's tls or auth.oauth2 names secrets but no secret source was given")
	}
	base, ok := client.Transport.(*http.Transport)
	if !ok {
		return nil, fmt.Errorf("delivery: the client's transport is a %T, want the *http.Transport of NewClient", client.Transport)
	}
	if now == nil {
		now = time.Now
	}
	a := &ClientAuth{}
	var rt http.RoundTripper = base
	if d.TLS != nil {
		a.tls = newClientTLS(d.TLS, secrets, base, now)
		rt = a.tls
	}
	if d.OAuth2Config() != nil {
		a.oauth = newOAuth2Source(d, secrets, rt, now)
		rt = a.oauth
	}
	client.Transport = rt
	return a, nil
}

// Prepare reads the client certificate, the CA and the OAuth 2.0 client's
// secret through the cache (no call to the store while fresh) and applies
// a rotated pair or CA. Its error names the secret, never a value.
func (a *ClientAuth) Prepare(ctx context.Context) error {
	if a == nil {
		return nil
	}
	if a.tls != nil {
		if err := a.tls.load(ctx); err != nil {
			return err
		}
	}
	if a.oauth != nil {
		if _, err := a.oauth.credentials(ctx); err != nil {
			return err
		}
	}
	return nil
}
