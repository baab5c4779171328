package reconcile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Bounds on what a provider's API may make a run do.
const (
	// MaxPages is how many pages one run reads: 200 of 100 events (20,000
	// events a window); past it the API is taken to page forever.
	MaxPages = 200
	// MaxBodyBytes bounds one answer: a page of 100 Stripe events is a few
	// hundred KB, an event at most Stripe's.
	MaxBodyBytes = 16 << 20
	// CallTimeout bounds one call, whatever the HTTP client's own.
	CallTimeout = 30 * time.Second
)

// answer is one API answer read in full (up to MaxBodyBytes).
type answer struct {
	status int
	header http.Header
	body   []byte
}

// call sends req with the run's bounds and sorts a failure into a stop:
// timeout, transport, unauthorized, rate_limited, http_status (for the
// statuses not in ok) or body_too_large.
func (rn *run) call(ctx context.Context, req *http.Request, ok ...int) (answer, error) {
	ctx, cancel := context.WithTimeout(ctx, CallTimeout)
	defer cancel()
	req = req.WithContext(ctx)
	what := req.Method + " " + redact(req.URL)
	resp, err := rn.r.c.HTTP.Do(req)
	if err != nil {
		var ne net.Error
		if errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()) {
			return answer{}, stopf(ReasonTimeout, "%s: no answer within %s", what, CallTimeout)
		}
		return answer{}, stopf(ReasonTransport, "%s: %v", what, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxBodyBytes+1))
	switch {
	case err != nil && (errors.Is(err, context.DeadlineExceeded) || isTimeout(err)):
		return answer{}, stopf(ReasonTimeout, "%s: the answer did not end within %s", what, CallTimeout)
	case err != nil:
		return answer{}, stopf(ReasonTransport, "%s: reading the answer: %v", what, err)
	case len(body) > MaxBodyBytes:
		return answer{}, stopf(ReasonTooLarge, "%s: answer over %d bytes", what, MaxBodyBytes)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, body: body}
	for _, s := range ok {
		if a.status == s {
			return a, nil
		}
	}
	if len(ok) == 0 && a.status/100 == 2 {
		return a, nil
	}
	return a, statusStop(what, a)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// statusStop sorts an answer that is not the one expected.
func statusStop(what string, a answer) *stop {
	retry := ""
	if v := a.header.Get("Retry-After"); v != "" {
		retry = "; Retry-After " + truncate(v, 32)
	}
	switch {
	case a.status == http.StatusTooManyRequests,
		a.status == http.StatusForbidden && a.header.Get("X-RateLimit-Remaining") == "0":
		return stopf(ReasonRateLimited, "%s: %d%s", what, a.status, retry)
	case a.status == http.StatusUnauthorized || a.status == http.StatusForbidden:
		return stopf(ReasonUnauthorized, "%s: %d; check the credential in reconcile.secretName and its permissions", what, a.status)
	}
	return stopf(ReasonHTTPStatus, "%s: %d%s", what, a.status, retry)
}

// redact renders u for a reason: without a query's values past the first
// 200 characters, never with user information.
func redact(u *url.URL) string {
	c := *u
	c.User = nil
	return truncate(c.String(), 200)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// sameOrigin reports whether next is on the API's scheme and host: a link
// elsewhere would carry the credential to another server.
func sameOrigin(api, next *url.URL) bool {
	return strings.EqualFold(api.Scheme, next.Scheme) && strings.EqualFold(api.Host, next.Host)
}

func newRequest(method, raw string, body io.Reader) (*http.Request, error) {
	req, err := http.NewRequest(method, raw, body)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	return req, nil
}
