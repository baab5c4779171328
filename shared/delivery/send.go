package delivery

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

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
)

// result is what one POST came to.
type result struct {
	status     int           // 0 when no response arrived
	err        error         // transport error, when no response arrived
	latency    time.Duration // from sending to the end of the capped body read
	retryAfter time.Duration // from Retry-After on a 429 or 503
}

type verdict int

const (
	failed verdict = iota
	delivered
	gone
)

// verdict classifies a result: 2xx delivered; 410 gone (stop retrying);
// everything else — 1xx, 3xx, 4xx, 5xx, timeouts, connection errors —
// failed.
func (r result) verdict() verdict {
	switch {
	case r.err != nil:
		return failed
	case r.status >= 200 && r.status < 300:
		return delivered
	case r.status == http.StatusGone:
		return gone
	default:
		return failed
	}
}

// describe is the short, URL-free error recorded and logged for a result.
func (r result) describe() string {
	if r.err == nil {
		if r.status >= 200 && r.status < 300 {
			return ""
		}
		return "HTTP " + strconv.Itoa(r.status)
	}
	var netErr net.Error
	switch {
	case errors.Is(r.err, ErrBlockedAddress):
		if reason := guardRefusal(r.err); reason != "" {
			return reason
		}
		var ue *url.Error
		if errors.As(r.err, &ue) {
			return innermost(ue.Err)
		}
		return r.err.Error()
	case errors.Is(r.err, context.DeadlineExceeded), errors.As(r.err, &netErr) && netErr.Timeout():
		return "timeout"
	}
	var ue *url.Error
	if errors.As(r.err, &ue) {
		// url.Error quotes the URL, which may carry a token in its query.
		return ue.Err.Error()
	}
	return r.err.Error()
}

// innermost drops the dialer's "dial tcp ...:" wrapping of a guard refusal.
func innermost(err error) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		return op.Err.Error()
	}
	return err.Error()
}

// send POSTs one signed delivery to the URL to within timeout, reads up to
// MaxResponseBody of the answer and discards it.
func (h *Handler) send(ctx context.Context, to string, msg Message, signer *signing.Signer, extra []header, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, to, bytes.NewReader(msg.Body))
	if err != nil {
		// Not the error itself: it quotes the URL.
		return result{err: errors.New("build request: the URL is not usable")}
	}
	ts := h.now()
	req.Header = http.Header{
		"Content-Type":                           {msg.ContentType},
		"User-Agent":                             {version.UserAgent},
		http.CanonicalHeaderKey(HeaderID):        {msg.ID},
		http.CanonicalHeaderKey(HeaderTimestamp): {strconv.FormatInt(ts.Unix(), 10)},
		http.CanonicalHeaderKey(HeaderSignature): {signer.Sign(msg.ID, ts, msg.Body)},
		http.CanonicalHeaderKey(HeaderSource):    {msg.Source},
		http.CanonicalHeaderKey(HeaderType):      {msg.Type},
		http.CanonicalHeaderKey(HeaderAttempt):   {strconv.Itoa(msg.Attempt)},
	}
	if !msg.ReceivedAt.IsZero() {
		req.Header[http.CanonicalHeaderKey(HeaderAcceptedAt)] = []string{msg.ReceivedAt.UTC().Format(message.ReceivedAtLayout)}
	}
	// The destination's own headers; config validation keeps them off
	// every name set above.
	for _, hd := range extra {
		req.Header[hd.name] = []string{hd.value}
	}
	if h.tracing {
		if tp, ok := TraceParent(msg.TraceHeader); ok {
			req.Header[HeaderTraceParent] = []string{tp}
		}
	}
	if err := h.signAWS(ctx, req, msg.Body, extra, ts); err != nil {
		return result{err: err}
	}
	start := time.Now()
	resp, err := h.client.Do(req)
	if err != nil {
		return result{err: err, latency: time.Since(start)}
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, MaxResponseBody))
	_ = resp.Body.Close()
	r := result{status: resp.StatusCode, latency: time.Since(start)}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
		if d, ok := ParseRetryAfter(resp.Header.Get("Retry-After"), ts); ok {
			r.retryAfter = d
		}
	}
	return r
}
