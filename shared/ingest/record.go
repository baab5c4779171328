package ingest

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/metrics"
)

// Answers' headers, shared by every response: read-only.
var (
	answerHeaders      = map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store"}
	answerHeadersAllow = map[string]string{"Content-Type": "application/json", "Cache-Control": "no-store", "Allow": http.MethodPost}
)

// response renders an outcome as API Gateway's answer.
func response(o *outcome) events.APIGatewayProxyResponse {
	hdr := answerHeaders
	if o.code == CodeMethodNotAllowed {
		hdr = answerHeadersAllow
	}
	body := o.body
	if o.code != "" {
		body = errorBodies[o.code]
	}
	return events.APIGatewayProxyResponse{StatusCode: o.status, Headers: hdr, Body: body}
}

// LogMessage is the message of ingest's one log line per request; its
// "outcome" attribute says what the request came to.
const LogMessage = "ingest"

// Outcomes of a request, in its log line.
const (
	OutcomeAccepted      = "accepted"
	OutcomeRejected      = "rejected"
	OutcomePublishFailed = "publish_failed"
	OutcomeChallenge     = "challenge"
	// OutcomeReplayBlocked: a copy of a published request, answered 202 with
	// the original's id and not published.
	OutcomeReplayBlocked = "replay_blocked"
)

// record counts the outcome, flushes the metrics and writes the request's
// one log line. Neither ever holds a secret value or a signature.
func (h *Handler) record(ctx context.Context, req *events.APIGatewayProxyRequest, o *outcome, start time.Time) {
	source := metrics.Dimension{Name: metrics.DimSource, Value: UnknownSource}
	if o.known {
		source.Value = o.source
	}
	name, level := OutcomeAccepted, slog.LevelInfo
	switch {
	case o.challenge:
		name = OutcomeChallenge
	case o.replayBlocked:
		name, level = OutcomeReplayBlocked, slog.LevelWarn
		h.metrics.Count(metrics.IngestReplayBlocked, source)
	case o.code == CodePublishFailed:
		name, level = OutcomePublishFailed, slog.LevelError
		h.metrics.Count(metrics.IngestPublishFailed, source)
	case o.code != "":
		name, level = OutcomeRejected, slog.LevelWarn
		if o.status >= 500 {
			level = slog.LevelError
		}
		h.metrics.Count(metrics.IngestRejected, source, metrics.Dimension{Name: metrics.DimReason, Value: o.code})
	default:
		if o.detail != nil { // accepted, with a replay record left unconfirmed
			level = slog.LevelWarn
		}
		h.metrics.Count(metrics.IngestAccepted, source)
	}
	flushErr := h.metrics.Flush(ctx)
	if flushErr != nil {
		// The request's metrics are lost: a warning, so functions.logLevel
		// WARN keeps the line that says so.
		level = max(level, slog.LevelWarn)
	}
	lh := h.log.Handler()
	if !lh.Enabled(ctx, level) {
		return
	}
	end := h.now()
	attrs := append(make([]slog.Attr, 0, 12),
		slog.String("source", o.source),
		slog.String("id", o.id),
		slog.String("type", o.typ),
		slog.String("outcome", name),
		slog.Int("status", o.status),
		slog.Int64("latency_ms", end.Sub(start).Milliseconds()), // as deliver logs it
	)
	optional := func(key, value string) {
		if value != "" {
			attrs = append(attrs, slog.String(key, value))
		}
	}
	optional("code", o.code)
	optional("provider_event_id", o.providerID)
	optional("api_request_id", req.RequestContext.RequestID)
	optional("copy_id", o.copyID)
	optional("copy_type", o.copyType)
	if o.detail != nil {
		optional("error", o.detail.Error())
	}
	if flushErr != nil {
		optional("metrics_error", flushErr.Error())
	}
	// As Logger.LogAttrs does, without looking up the caller's pc: the
	// line always comes from here. The attributes are added at once, so
	// the record grows its storage once.
	r := slog.NewRecord(end, level, LogMessage, 0)
	r.AddAttrs(attrs...)
	_ = lh.Handle(ctx, r)
}
