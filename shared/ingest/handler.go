// Package ingest is the webhook front door: it takes API Gateway's REST proxy
// event for POST /webhooks/{source}, verifies the request for its source
// (failing closed), reads the event's id and type the way its kind says
// (shared/provider), and publishes the provider's body to SNS. It answers
// 202 {"id": …} only after SNS accepted the message, and a stable JSON error
// otherwise (see answers.go).
package ingest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/secrets"
	"github.com/hookfan/hookfan/shared/verify"
)

// Publisher is the SNS call ingest makes: *sns.Client.
type Publisher interface {
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// Payloads stores bodies larger than one SNS message: *payload.S3.
type Payloads interface {
	Put(ctx context.Context, source, eventID string, body []byte) (payload.Reference, error)
}

// Secrets reads source secrets: *secrets.Cache.
type Secrets interface {
	Get(ctx context.Context, name string) ([]string, error)
	Refresh(ctx context.Context, name string) (values []string, changed bool, err error)
}

// Recorder records metrics: *metrics.Recorder.
type Recorder interface {
	Count(name string, dims ...metrics.Dimension)
	Flush(ctx context.Context) error
}

// DefaultContentType is used when a request has no usable Content-Type.
const DefaultContentType = "application/octet-stream"

// UnknownSource is the Source dimension of requests for unknown sources, so
// attacker-chosen names never become metric dimensions.
const UnknownSource = "unknown"

// maxLoggedSourceBytes bounds an unknown source name in the log.
const maxLoggedSourceBytes = 64

// GCPercent is the ingest function's GOGC, which the stack sets in its
// environment; BenchmarkIngest runs with it. A request allocates about
// twice its body (the decoded bytes, the SNS message): with Go's default
// of 100 and a live heap of a few MB, a collection runs every few dozen
// 16 KiB requests and costs about a tenth of their CPU. At 400 the heap may
// reach five times the live heap (16 MB at least), a few percent of the
// function's memory, for a quarter of the collections; Lambda runs one
// request at a time per process, so the live heap does not grow with
// traffic (docs/decisions.md#ingest-runs-with-gogc400).
const GCPercent = 400

// Options configures a Handler.
type Options struct {
	Sources   []config.Source
	TopicARN  string
	Publisher Publisher
	Secrets   Secrets
	Metrics   Recorder
	// Replay remembers the verified requests of the sources with replay
	// protection (replayguard.DynamoDB); required when one has it.
	Replay ReplayGuard
	// Payloads, when set, stores a body that does not fit one SNS message
	// (with its attributes) before the event is published as a reference
	// to it; without it such a body gets 413.
	Payloads Payloads
	// Logger receives one line per request (default: discard). The
	// function's main passes the Lambda runtime's logger, which adds the
	// request id.
	Logger *slog.Logger
	// Now replaces time.Now, for tests.
	Now func() time.Time
	// OrderedTopicARN and OrderingRoutes, when set, publish every event
	// to the ordered lanes' FIFO topic too (ordered.go).
	OrderedTopicARN string
	OrderingRoutes  []config.OrderingRoute
}

// Handler serves POST /webhooks/{source}. It is safe for concurrent use.
type Handler struct {
	sources   map[string]*source
	topicARN  string
	publisher Publisher
	secrets   Secrets
	metrics   Recorder
	replay    ReplayGuard
	payloads  Payloads
	log       *slog.Logger
	now       func() time.Time
	// orderedTopicARN is "" without ordered destinations.
	orderedTopicARN string
	orderedRoutes   []orderedRoute
}

// source is one configured source, ready to serve.
type source struct {
	name     string
	kind     provider.Kind
	params   provider.Params
	secret   string // the Secrets Manager name
	limit    int
	verifier verify.Verifier
	// replayWindow is how long a verified request is remembered; 0 when
	// the source has no replay protection.
	replayWindow time.Duration
	// copyBytes is what the largest of its events' ordered copies adds to
	// the standard message (orderedCopyBytes); 0 when no ordering route
	// takes the source.
	copyBytes int
}

// New builds a Handler; sources are expected to be validated already
// (config.DecodeSources).
func New(o Options) (*Handler, error) {
	if o.TopicARN == "" || o.Publisher == nil || o.Secrets == nil || o.Metrics == nil {
		return nil, errors.New("ingest: TopicARN, Publisher, Secrets and Metrics are required")
	}
	h := &Handler{
		sources:   make(map[string]*source, len(o.Sources)),
		topicARN:  o.TopicARN,
		publisher: o.Publisher,
		secrets:   o.Secrets,
		metrics:   o.Metrics,
		replay:    o.Replay,
		payloads:  o.Payloads,
		log:       o.Logger,
		now:       o.Now,
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	if o.OrderedTopicARN != "" {
		routes, err := newOrderedRoutes(o.OrderingRoutes)
		if err != nil {
			return nil, err
		}
		h.orderedTopicARN, h.orderedRoutes = o.OrderedTopicARN, routes
	}
	for _, s := range o.Sources {
		if _, dup := h.sources[s.Name]; dup {
			return nil, fmt.Errorf("ingest: source %q is configured twice", s.Name)
		}
		kind, ok := provider.Lookup(s.Verify.Kind)
		if !ok {
			return nil, fmt.Errorf("ingest: source %q: unknown verification kind %q", s.Name, s.Verify.Kind)
		}
		v, err := kind.Verifier(s.Params())
		if err != nil {
			return nil, fmt.Errorf("ingest: source %q: %w", s.Name, err)
		}
		window := s.ReplayWindow()
		if window > 0 && o.Replay == nil {
			return nil, fmt.Errorf("ingest: source %q has replay protection but no replay store is set (Options.Replay); set one, or turn it off for the source (replayProtection.enabled: false)", s.Name)
		}
		h.sources[s.Name] = &source{
			name: s.Name, kind: kind, params: s.Params(), secret: s.Verify.SecretName,
			limit: min(s.BodyLimit(), config.MaxBodyBytesREST), verifier: v, replayWindow: window,
			copyBytes: orderedCopyBytes(h.orderedRoutes, s.Name),
		}
	}
	return h, nil
}

// outcome is what one request came to, for the answer, the metric and the
// log line.
type outcome struct {
	status     int
	code       string // "" when accepted
	source     string // the configured name, or the requested one (truncated) when unknown
	known      bool
	id         string
	typ        string
	providerID string
	detail     error // internal detail for the log only
	body       string
	challenge  bool
	// replayBlocked marks a copy of a published request, answered with the
	// original's id and type (id, typ); copyID and copyType are what the
	// copy itself carried.
	replayBlocked    bool
	copyID, copyType string
}

// Handle answers one API Gateway proxy request. The error is always nil:
// every failure is an HTTP answer.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	start := h.now()
	out := h.handle(ctx, &req, start)
	h.record(ctx, &req, &out, start)
	return response(&out), nil
}

func (h *Handler) handle(ctx context.Context, req *events.APIGatewayProxyRequest, received time.Time) outcome {
	name := sourceName(req)
	src, ok := h.sources[name]
	if !ok {
		return reject(truncate(name, maxLoggedSourceBytes), false, CodeUnknownSource, nil)
	}
	if req.HTTPMethod != http.MethodPost {
		return reject(name, true, CodeMethodNotAllowed, fmt.Errorf("method %q", truncate(req.HTTPMethod, 16)))
	}
	body, code := decodeBody(req, src.limit)
	if code != "" {
		return reject(name, true, code, fmt.Errorf("body of %d bytes as received (base64: %v), limit %d", len(req.Body), req.IsBase64Encoded, src.limit))
	}
	hdr := proxyHeader{single: req.Headers, multi: req.MultiValueHeaders}
	if code, err := h.verify(ctx, src, &verify.Request{Header: hdr, Body: body, Now: received}); code != "" {
		return reject(name, true, code, err)
	}
	ident, err := src.kind.Identify(src.params, hdr, body)
	if err != nil {
		return h.unidentified(ctx, src, hdr, body, received, reject(name, true, identifyCode(err), fmt.Errorf("%s event: %w", src.kind.Name, err)))
	}
	if ident.Handshake {
		return challenge(name, ident.Challenge)
	}
	if !message.ValidAttribute(ident.ID) {
		return h.unidentified(ctx, src, hdr, body, received, reject(name, true, CodeEventIDInvalid, fmt.Errorf("event id %s", quoteStart(ident.ID))))
	}
	if !message.ValidAttribute(ident.Type) {
		return h.unidentified(ctx, src, hdr, body, received, reject(name, true, CodeEventTypeInvalid, fmt.Errorf("event type %s", quoteStart(ident.Type))))
	}
	id := EventID(name, ident.ID)
	text := message.Text
	if ident.JSONText {
		text = message.JSONText
	}
	msg := draft{body: body, text: text(body), copyBytes: src.copyBytes, event: message.Event{
		Source: name, Type: ident.Type, ID: id, ContentType: contentType(hdr), ReceivedAt: received,
	}}
	res := outcome{source: name, known: true, id: id, typ: ident.Type, providerID: ident.ID}
	if src.replayWindow > 0 {
		// The replay check first: a copy is answered as its original
		// whatever message its unsigned headers would make.
		return h.publishOnce(ctx, src, req, hdr, msg, res, received)
	}
	in, ev, code, err := h.message(ctx, req, msg)
	if code != "" {
		res.status, res.code, res.detail = answers[code].status, code, err
		return res
	}
	return h.publish(ctx, in, res, keyed{hdr: hdr, body: body, event: ev})
}

// message builds the SNS input of an accepted request: the body inline
// when it fits one SNS message with its attributes, its ordered copies'
// included, else, when a payload store is configured, stored in S3 first
// and published as a reference (nothing is ever published that refers to
// a body S3 does not hold). code is the refusal's answer code when there
// is none.
func (h *Handler) message(ctx context.Context, req *events.APIGatewayProxyRequest, msg draft) (in *sns.PublishInput, ev message.Event, code string, err error) {
	in, ev, err = newMessage(h.topicARN, req, msg.body, msg.text, msg.event, msg.copyBytes)
	if errors.Is(err, errMessageTooLarge) && h.payloads != nil {
		ref, perr := h.payloads.Put(ctx, msg.event.Source, msg.event.ID, msg.body)
		if perr != nil {
			return nil, ev, CodePayloadStoreFailed, perr
		}
		in, ev, err = newReference(h.topicARN, ref, msg.event, msg.copyBytes)
	}
	if err != nil {
		return nil, ev, CodeBodyTooLarge, err
	}
	return in, ev, "", nil
}

// draft is what an accepted request's message is built from, with the
// request. (The request stays apart: in one struct with the attributes,
// which the message keeps, escape analysis would move every request to the
// heap.)
type draft struct {
	body []byte
	text bool
	// copyBytes is the room the message keeps for its ordered copies'
	// ordering_key attribute (source.copyBytes).
	copyBytes int
	// event is the message's event without its body.
	event message.Event
}

// publish hands the message to SNS: 202 with the event's id once SNS
// accepted it, 503 otherwise.
func (h *Handler) publish(ctx context.Context, in *sns.PublishInput, res outcome, ev keyed) outcome {
	if err := h.publishAll(ctx, in, res.source, res.id, ev); err != nil {
		res.status, res.code, res.detail = answers[CodePublishFailed].status, CodePublishFailed, err
		return res
	}
	res.status, res.body = http.StatusAccepted, acceptedBody(res.id)
	return res
}

func reject(source string, known bool, code string, detail error) outcome {
	return outcome{status: answers[code].status, code: code, source: source, known: known, detail: detail}
}

// sourceName is the {source} path parameter, or the last segment of
// /webhooks/{source} when the event carries no path parameters.
func sourceName(req *events.APIGatewayProxyRequest) string {
	if s, ok := req.PathParameters["source"]; ok {
		return s
	}
	if _, s, ok := strings.Cut(req.Path, "/webhooks/"); ok && !strings.Contains(s, "/") {
		return s
	}
	return ""
}

// decodeBody returns the request body's bytes, checking emptiness and the
// source's limit before any decoding work.
func decodeBody(req *events.APIGatewayProxyRequest, limit int) (body []byte, code string) {
	switch {
	case len(req.Body) == 0:
		return nil, CodeBodyEmpty
	case !req.IsBase64Encoded && len(req.Body) > limit:
		return nil, CodeBodyTooLarge
	case !req.IsBase64Encoded:
		return []byte(req.Body), ""
	case base64.StdEncoding.DecodedLen(len(req.Body)) > limit+2: // padding makes DecodedLen overestimate by up to 2
		return nil, CodeBodyTooLarge
	}
	body, err := base64.StdEncoding.DecodeString(req.Body)
	switch {
	case err != nil:
		return nil, CodeBodyNotBase64
	case len(body) == 0:
		return nil, CodeBodyEmpty
	case len(body) > limit:
		return nil, CodeBodyTooLarge
	}
	return body, ""
}

// verify authenticates the request with the source's secret. When the
// cached values fail, the secret is read again (at most once per
// secrets.DefaultMinRefresh per secret, bounded by the cache) and the
// request verified once more if the values changed: a secret rotated moments
// ago is picked up within seconds.
func (h *Handler) verify(ctx context.Context, src *source, vr *verify.Request) (string, error) {
	values, err := h.secrets.Get(ctx, src.secret)
	if err != nil {
		return secretCode(err), err
	}
	err = src.verifier.Verify(vr, values)
	if errors.Is(err, verify.ErrMismatch) || errors.Is(err, verify.ErrNoKey) {
		fresh, changed, rerr := h.secrets.Refresh(ctx, src.secret)
		switch {
		case rerr != nil:
			return secretCode(rerr), errors.Join(err, rerr)
		case changed:
			err = src.verifier.Verify(vr, fresh)
		}
	}
	if err == nil {
		return "", nil
	}
	return verifyCode(err), err
}

func secretCode(err error) string {
	if errors.Is(err, secrets.ErrNotSet) || errors.Is(err, secrets.ErrInvalid) {
		return CodeSecretNotSet
	}
	return CodeSecretStoreUnavailable
}

func verifyCode(err error) string {
	switch {
	case errors.Is(err, verify.ErrMissing):
		return CodeSignatureMissing
	case errors.Is(err, verify.ErrMalformed):
		return CodeSignatureMalformed
	case errors.Is(err, verify.ErrTimestamp):
		return CodeTimestampOutOfRange
	case errors.Is(err, verify.ErrNoKey):
		return CodeSecretNotSet
	default:
		return CodeSignatureInvalid
	}
}

func identifyCode(err error) string {
	switch {
	case errors.Is(err, provider.ErrNotJSON):
		return CodeBodyNotJSON
	case errors.Is(err, provider.ErrDuplicateKey):
		return CodeBodyDuplicateKey
	case errors.Is(err, provider.ErrIDMissing):
		return CodeEventIDMissing
	case errors.Is(err, provider.ErrIDInvalid):
		return CodeEventIDInvalid
	case errors.Is(err, provider.ErrTypeMissing):
		return CodeEventTypeMissing
	default:
		return CodeEventTypeInvalid
	}
}

// challenge answers a handshake (Slack's url_verification) after the
// signature passed.
func challenge(source, value string) outcome {
	if value == "" {
		return reject(source, true, CodeChallengeMissing, nil)
	}
	b, err := json.Marshal(struct {
		Challenge string `json:"challenge"`
	}{value})
	if err != nil {
		return reject(source, true, CodeChallengeMissing, err)
	}
	return outcome{status: http.StatusOK, source: source, known: true, body: string(b), challenge: true}
}

// contentType is the request's Content-Type when it is a plain printable
// value, else DefaultContentType (it is replayed as a header on delivery).
func contentType(h verify.Header) string {
	vs := h.Values("Content-Type")
	if len(vs) == 0 {
		return DefaultContentType
	}
	ct := strings.TrimSpace(vs[0])
	if ct == "" || len(ct) > message.MaxAttributeBytes {
		return DefaultContentType
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return DefaultContentType
		}
	}
	return ct
}

// quoteStart quotes the first bytes of a value refused for the log, with
// its length, so an operator sees what came without a megabyte of it.
func quoteStart(s string) string {
	return fmt.Sprintf("%q (%d bytes)", truncate(s, 64), len(s))
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}
