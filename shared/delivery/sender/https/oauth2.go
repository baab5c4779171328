package https

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/version"
)

// OAuth 2.0 client credentials (RFC 6749 4.4): a bearer token from the
// destination's token endpoint, fetched through a client with the same
// address guard as the destination's, cached until shortly before it
// expires, fetched by one call at a time for all of a function's
// concurrent deliveries (singleflight), and fetched again once when the
// destination answers 401. The token and the client's secret never appear
// in an error, a record or a log line.

// Token timing and limits.
const (
	// TokenTimeout bounds one call to the token endpoint (cut to the
	// destination's timeout).
	TokenTimeout = 5 * time.Second
	// TokenEarly is how long before its expiry a token is replaced (at most
	// half its lifetime).
	TokenEarly = time.Minute
	// DefaultTokenLifetime is a token's lifetime when the endpoint gives no
	// expires_in.
	DefaultTokenLifetime = 5 * time.Minute
	// MaxTokenLifetime caps the lifetime a token is cached for.
	MaxTokenLifetime = 24 * time.Hour
	// TokenBackoff is how long after a failed call the endpoint is left
	// alone: deliveries meanwhile fail with that call's reason.
	TokenBackoff = 5 * time.Second
	// TokenMinAge is the least age of a token a 401 replaces: a younger one
	// was just issued, so the 401 is about something else, and a
	// destination answering 401 to everything cannot drive one token call
	// per delivery.
	TokenMinAge = 10 * time.Second
	// MaxTokenResponse is how much of the token endpoint's answer is read.
	MaxTokenResponse = 64 << 10
)

// Reasons a record's error starts with when no token could be had.
const (
	// ReasonTokenEndpointUnavailable: the token endpoint did not answer,
	// timed out, or answered 5xx, 429 or 408.
	ReasonTokenEndpointUnavailable = "token_endpoint_unavailable"
	// ReasonTokenRefused: the token endpoint refused the client (4xx, such
	// as invalid_client or invalid_scope).
	ReasonTokenRefused = "token_refused"
	// ReasonTokenInvalid: the token endpoint's 2xx answer holds no usable
	// bearer token.
	ReasonTokenInvalid = "token_response_invalid"
	// ReasonOAuth2Secret: the client's secret (auth.oauth2.clientSecret)
	// cannot be read for good (no such secret, or deleted, access denied,
	// its KMS key) or holds no {"clientId", "clientSecret"} object: a
	// failed attempt like a URL secret's (secretfault.go). A store that
	// may answer later backs the message off unattempted instead.
	ReasonOAuth2Secret = "oauth2_client_secret_unusable"
)

// errClientSecret means the OAuth 2.0 client's secret could not be read
// for a reason that may pass on its own (a throttle, a 5xx, a timeout).
// Its text names the secret, never the value.
var errClientSecret = errors.New("oauth2 client secret unavailable")

// oauth2Field names the client's secret in a reason's text.
const oauth2Field = "auth.oauth2.clientSecret"

// tokenError is why no token could be had; its text never holds the
// token, the client's secret or the endpoint's body beyond its OAuth
// error code. It has no Timeout method: the record shows its reason.
type tokenError struct{ reason, detail string }

func (e *tokenError) Error() string { return e.reason + ": " + e.detail }

// oauth2Token is a cached bearer token.
type oauth2Token struct {
	value     string
	fetchedAt time.Time
	refreshAt time.Time // replaced from then on
	expiresAt time.Time // usable until then, while the endpoint fails
}

// clientCredentials is the client secret's value.
type clientCredentials struct {
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret"`
}

// oauth2Source adds the bearer token to each delivery. It is the client's
// RoundTripper, in front of next.
type oauth2Source struct {
	cfg     config.OAuth2
	secrets HeaderSecrets
	client  *http.Client // the token endpoint's, guarded like the destination's
	next    http.RoundTripper
	timeout time.Duration
	now     func() time.Time
	group   singleflight.Group

	mu       sync.Mutex
	tok      *oauth2Token
	failedAt time.Time
	failure  error
	fetches  int // calls to the token endpoint, for tests
}

func newOAuth2Source(d config.Destination, secrets HeaderSecrets, next http.RoundTripper, now func() time.Time) *oauth2Source {
	return &oauth2Source{cfg: *d.OAuth2Config(), secrets: secrets, client: NewClient(d), next: next,
		timeout: min(TokenTimeout, d.Timeout()), now: now}
}

// credentials reads the client's id and secret through the cache. A
// secret the operator must fix is a *refusedError, the attempt's reason
// (ReasonOAuth2Secret).
func (o *oauth2Source) credentials(ctx context.Context) (clientCredentials, error) {
	v, err := o.secrets.Value(ctx, o.cfg.ClientSecret)
	if err != nil {
		if r := oauth2SecretKind.fault(secretOf(o.cfg.ClientSecret, oauth2Field), err); r != nil {
			return clientCredentials{}, r
		}
		// The cause as text: a store's timeout is not the token call's
		// (the record shows this reason, not "timeout").
		return clientCredentials{}, fmt.Errorf("%w: secret %q: %v", errClientSecret, o.cfg.ClientSecret, err)
	}
	c, err := ParseClientCredentials(v)
	if err != nil {
		return clientCredentials{}, oauth2SecretKind.bad(secretOf(o.cfg.ClientSecret, oauth2Field), err.Error())
	}
	return c, nil
}

// ParseClientCredentials reads an OAuth 2.0 client secret's value, the
// JSON object {"clientId": "…", "clientSecret": "…"}. Errors never quote it.
func ParseClientCredentials(v string) (clientCredentials, error) {
	var c clientCredentials
	if err := json.Unmarshal([]byte(strings.TrimSpace(v)), &c); err != nil {
		return c, errors.New(`the value is not the JSON object {"clientId": "…", "clientSecret": "…"}`)
	}
	switch {
	case c.ClientID == "" || c.ClientSecret == "":
		return c, errors.New(`the JSON object lacks "clientId" or "clientSecret"; store both`)
	case strings.ContainsFunc(c.ClientID+c.ClientSecret, func(r rune) bool { return r < 0x20 || r == 0x7f }):
		return c, errors.New("the client id or secret holds a control character; store them without newlines")
	}
	return c, nil
}

// token returns the cached token while fresh, else one call's (shared by
// every delivery waiting meanwhile); a token past its refresh time but not
// expired is still used when the call fails.
func (o *oauth2Source) token(ctx context.Context) (*oauth2Token, error) {
	o.mu.Lock()
	now := o.now()
	tok := o.tok
	switch {
	case tok != nil && now.Before(tok.refreshAt):
		o.mu.Unlock()
		return tok, nil
	case !o.failedAt.IsZero() && now.Sub(o.failedAt) < TokenBackoff:
		err := o.failure
		o.mu.Unlock()
		if tok != nil && now.Before(tok.expiresAt) {
			return tok, nil
		}
		return nil, err
	}
	o.mu.Unlock()
	// The call runs on its own deadline: one delivery's end does not fail
	// it for the others.
	ch := o.group.DoChan("token", func() (any, error) {
		fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), o.timeout)
		defer cancel()
		return o.fetch(fctx)
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			if tok != nil && o.now().Before(tok.expiresAt) {
				return tok, nil
			}
			return nil, r.Err
		}
		return r.Val.(*oauth2Token), nil
	case <-ctx.Done():
		return nil, &tokenError{ReasonTokenEndpointUnavailable, "no token before the delivery's deadline"}
	}
}

// invalidate drops tok after the destination refused it (401), unless a
// newer token replaced it already or it is younger than TokenMinAge. It
// reports whether tok was dropped.
func (o *oauth2Source) invalidate(tok *oauth2Token) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.tok != tok {
		return true // another delivery replaced or dropped it: use the next one
	}
	if o.now().Sub(tok.fetchedAt) < TokenMinAge {
		return false
	}
	o.tok = nil
	return true
}

// fetch makes one call to the token endpoint and caches its token.
func (o *oauth2Source) fetch(ctx context.Context) (tok *oauth2Token, err error) {
	defer func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		o.fetches++
		if err != nil {
			o.failedAt, o.failure = o.now(), err
			return
		}
		o.tok, o.failedAt, o.failure = tok, time.Time{}, nil
	}()
	creds, err := o.credentials(ctx)
	if err != nil {
		return nil, err
	}
	form := url.Values{"grant_type": {"client_credentials"}}
	if len(o.cfg.Scopes) > 0 {
		form.Set("scope", strings.Join(o.cfg.Scopes, " "))
	}
	if o.cfg.Audience != "" {
		form.Set("audience", o.cfg.Audience)
	}
	basic := o.cfg.ClientAuthStyle() == config.OAuth2ClientAuthBasic
	if !basic {
		form.Set("client_id", creds.ClientID)
		form.Set("client_secret", creds.ClientSecret)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, o.cfg.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, &tokenError{ReasonTokenRefused, "the token URL is not usable"}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", version.UserAgent)
	if basic {
		// RFC 6749 2.3.1: both form-encoded before Basic encoding.
		req.SetBasicAuth(url.QueryEscape(creds.ClientID), url.QueryEscape(creds.ClientSecret))
	}
	start := o.now()
	resp, err := o.client.Do(req)
	if err != nil {
		return nil, &tokenError{ReasonTokenEndpointUnavailable, "no answer from the token endpoint: " + sender.Result{Err: transportError(err)}.Describe()}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxTokenResponse))
	if err != nil {
		return nil, &tokenError{ReasonTokenEndpointUnavailable, "the token endpoint's answer broke off: " + sender.Result{Err: transportError(err)}.Describe()}
	}
	switch s := resp.StatusCode; {
	case s >= 200 && s < 300:
		return parseTokenResponse(body, start)
	case s >= 500, s == http.StatusTooManyRequests, s == http.StatusRequestTimeout:
		return nil, &tokenError{ReasonTokenEndpointUnavailable, "the token endpoint answered HTTP " + strconv.Itoa(s)}
	default:
		detail := "the token endpoint answered HTTP " + strconv.Itoa(s)
		if code := oauthErrorCode(body); code != "" {
			detail += " (" + code + ")"
		}
		return nil, &tokenError{ReasonTokenRefused, detail + "; check the client id and secret in auth.oauth2.clientSecret, the scopes and the audience"}
	}
}

// codeLike reports whether s looks like an OAuth error code (RFC 6749 5.2
// names a handful; providers add their own): 1 to 64 letters, digits and
// "_.:-". Records show it, so nothing else. A loop, not a regexp: the
// regexp's 64 repetitions cost every cold start 860 allocations at package
// initialisation.
func codeLike(s string) bool {
	if len(s) < 1 || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("_.:-", c) >= 0) {
			return false
		}
	}
	return true
}

func oauthErrorCode(body []byte) string {
	var e struct {
		Error string `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || !codeLike(e.Error) {
		return ""
	}
	return e.Error
}

// parseTokenResponse reads a successful token response (RFC 6749 5.1),
// fetched from start on.
func parseTokenResponse(body []byte, start time.Time) (*oauth2Token, error) {
	var r struct {
		AccessToken string          `json:"access_token"`
		TokenType   string          `json:"token_type"`
		ExpiresIn   json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, &tokenError{ReasonTokenInvalid, "the token endpoint's answer is not a JSON token response"}
	}
	if r.AccessToken == "" {
		return nil, &tokenError{ReasonTokenInvalid, "the token endpoint's answer has no access_token"}
	}
	if !strings.EqualFold(r.TokenType, "bearer") && r.TokenType != "" {
		t := r.TokenType
		if !codeLike(t) {
			t = "(unprintable)"
		}
		return nil, &tokenError{ReasonTokenInvalid, fmt.Sprintf("the token endpoint issued a %s token; only Bearer tokens are sent", t)}
	}
	if err := config.CheckHeaderValue("Bearer " + r.AccessToken); err != nil {
		return nil, &tokenError{ReasonTokenInvalid, "the access token cannot be sent in a header: it " + err.Error()}
	}
	life := DefaultTokenLifetime
	if len(r.ExpiresIn) > 0 && string(r.ExpiresIn) != "null" {
		// A number, or (some providers) a number in a string.
		n, err := strconv.ParseFloat(strings.Trim(string(r.ExpiresIn), `"`), 64)
		if err != nil || !(n > 0) { // NaN too
			return nil, &tokenError{ReasonTokenInvalid, "the token endpoint's expires_in is not a positive number of seconds"}
		}
		life = MaxTokenLifetime
		if n < MaxTokenLifetime.Seconds() {
			life = time.Duration(n * float64(time.Second))
		}
	}
	early := min(TokenEarly, life/2)
	return &oauth2Token{value: r.AccessToken, fetchedAt: start, refreshAt: start.Add(life - early), expiresAt: start.Add(life)}, nil
}

// RoundTrip sends req with the bearer token; on a 401 it replaces the
// token once and sends req again with the new one.
func (o *oauth2Source) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	tok, err := o.token(ctx)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := o.next.RoundTrip(withBearer(req, tok, req.Body))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || req.GetBody == nil || !o.invalidate(tok) {
		return resp, err
	}
	fresh, terr := o.token(ctx)
	if terr != nil || fresh.value == tok.value {
		return resp, nil // the destination's 401 stands
	}
	body, berr := req.GetBody()
	if berr != nil {
		return resp, nil
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	_ = resp.Body.Close()
	return o.next.RoundTrip(withBearer(req, fresh, body))
}

// withBearer is a copy of req with body and the token's Authorization.
func withBearer(req *http.Request, tok *oauth2Token, body io.ReadCloser) *http.Request {
	r := req.Clone(req.Context())
	r.Body = body
	r.Header.Set("Authorization", "Bearer "+tok.value)
	return r
}

// CloseIdleConnections closes the idle connections to the destination and
// to the token endpoint.
func (o *oauth2Source) CloseIdleConnections() {
	o.client.CloseIdleConnections()
	if c, ok := o.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}
