// Package ingest is the webhook front door: it takes API Gateway's REST proxy
// event for POST /webhooks/{source}, verifies the request for its source
// (failing closed), derives the event's id and type, and publishes the exact
// body to SNS. It answers 202 {"id": …} only after SNS accepted the message,
// and a stable JSON error otherwise (see answers.go).
package ingest

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/hookfan/hookfan/shared/message"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
	"github.com/hookfan/hookfan/shared/verify"
)

// Publisher is the SNS call ingest makes. Publish must not keep in, or
// anything it points to, once it returns: the handler reuses that memory
// for its next request. The SDK's client serializes the input inside
// Publish.
type Publisher interface {
	Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error)
}

// Secrets reads source secrets: *secrets.Cache.
type Secrets interface {
	Get(ctx context.Context, name string) ([]string, error)
	Refresh(ctx context.Context, name string) (values []string, changed bool, err error)
}

// Recorder records metrics: *metrics.Recorder.
type Recorder interface {
	CountAt(t time.Time, name string, dims ...metrics.Dimension)
	Flush(ctx context.Context) error
}

// DefaultContentType is used when a request has no usable Content-Type.
const DefaultContentType = "application/octet-stream"

// UnknownSource is the Source dimension of requests for unknown sources, so
// attacker-chosen names never become metric dimensions.
const UnknownSource = "unknown"

// maxLoggedSourceBytes bounds an unknown source name in the log.
const maxLoggedSourceBytes = 64

// Options configures a Handler.
type Options struct {
	Sources   []config.Source
	TopicARN  string
	Publisher Publisher
	Secrets   Secrets
	Metrics   Recorder
	Logger    *slog.Logger
	// Now replaces time.Now, for tests.
	Now func() time.Time
}

// Handler serves POST /webhooks/{source}. It is safe for concurrent use.
type Handler struct {
	sources     map[string]*source
	topicARN    *string
	publisher   Publisher
	secrets     Secrets
	metrics     Recorder
	log         *slog.Logger
	now         func() time.Time
	unknownDims []metrics.Dimension
	scratch     sync.Pool // of *scratch
}

// scratch is the memory a request uses only until Handle returns, pooled
// so that a warm function does not allocate it again: the decoded body of
// a base64 request, the verification request and the SNS input with its
// attributes. No answer, log line or metric ever points into it.
type scratch struct {
	body       []byte
	receivedAt []byte
	hdr        proxyHeader
	vr         verify.Request
	v          attrValues
	attrs      map[string]snstypes.MessageAttributeValue
	in         sns.PublishInput
}

// newScratch builds a scratch whose input points at its own attribute
// values: a request fills in the values, never the map or the input.
func newScratch(topicARN *string) *scratch {
	sc := &scratch{attrs: make(map[string]snstypes.MessageAttributeValue, 6)}
	for _, a := range sc.v.list() {
		if a.name != message.AttrEncoding { // only set for base64 messages
			sc.attrs[a.name] = snstypes.MessageAttributeValue{DataType: stringType, StringValue: a.value}
		}
	}
	sc.in = sns.PublishInput{TopicArn: topicARN, Message: &sc.v.message, MessageAttributes: sc.attrs}
	return sc
}

// release forgets the request's data, so the pool keeps no body alive,
// and returns sc to the pool.
func (h *Handler) release(sc *scratch) {
	sc.hdr.reset(nil, nil)
	sc.vr, sc.v = verify.Request{}, attrValues{}
	h.scratch.Put(sc)
}

// source is one configured source with everything precomputed.
type source struct {
	cfg      config.Source
	limit    int
	verifier verify.Verifier
	identify identifier
	dims     []metrics.Dimension // Source=name, for metrics.Recorder.Count
	keys     atomic.Pointer[keySet]
}

// keySet is the key material of one version of a source's secret values.
type keySet struct {
	values []string
	keys   []verify.Key
}

// New builds a Handler; sources are expected to be validated already
// (config.DecodeSources).
func New(o Options) (*Handler, error) {
	if o.TopicARN == "" || o.Publisher == nil || o.Secrets == nil || o.Metrics == nil {
		return nil, errors.New("ingest: TopicARN, Publisher, Secrets and Metrics are required")
	}
	h := &Handler{
		sources:     make(map[string]*source, len(o.Sources)),
		topicARN:    &o.TopicARN,
		publisher:   o.Publisher,
		secrets:     o.Secrets,
		metrics:     o.Metrics,
		log:         o.Logger,
		now:         o.Now,
		unknownDims: []metrics.Dimension{{Name: metrics.DimSource, Value: UnknownSource}},
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.now == nil {
		h.now = time.Now
	}
	h.scratch.New = func() any { return newScratch(h.topicARN) }
	for _, s := range o.Sources {
		if _, dup := h.sources[s.Name]; dup {
			return nil, fmt.Errorf("ingest: source %q is configured twice", s.Name)
		}
		v, err := verify.New(s.Verify)
		if err != nil {
			return nil, fmt.Errorf("ingest: source %q: %w", s.Name, err)
		}
		h.sources[s.Name] = &source{
			cfg:      s,
			limit:    min(s.BodyLimit(), config.MaxBodyBytesCeiling),
			verifier: v,
			identify: newIdentifier(s),
			dims:     []metrics.Dimension{{Name: metrics.DimSource, Value: s.Name}},
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
}

// Handle answers one API Gateway proxy request. The error is always nil:
// every failure is an HTTP answer.
func (h *Handler) Handle(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
	start := h.now()
	sc := h.scratch.Get().(*scratch)
	out := h.handle(ctx, sc, &req, start)
	// The outcome's id and type may view the scratch's decoded body: the
	// line is written before the scratch is returned.
	h.record(ctx, &req, &out, start)
	h.release(sc)
	return response(&out), nil
}

func (h *Handler) handle(ctx context.Context, sc *scratch, req *events.APIGatewayProxyRequest, received time.Time) outcome {
	name := sourceName(req)
	src, ok := h.sources[name]
	if !ok {
		return reject(truncate(name, maxLoggedSourceBytes), false, CodeUnknownSource, nil)
	}
	if req.HTTPMethod != http.MethodPost {
		return reject(name, true, CodeMethodNotAllowed, fmt.Errorf("method %q", truncate(req.HTTPMethod, 16)))
	}
	body, ascii, code := decodeBody(req, src.limit, &sc.body)
	if code != "" {
		return reject(name, true, code, fmt.Errorf("body of %d bytes as received (base64: %v), limit %d", len(req.Body), req.IsBase64Encoded, src.limit))
	}
	sc.hdr.reset(req.Headers, req.MultiValueHeaders)
	hdr := &sc.hdr // a pointer into the scratch: no allocation as a verify.Header
	sc.vr = verify.Request{Header: hdr, Body: body, Now: received}
	if code, err := h.verify(ctx, src, &sc.vr); code != "" {
		return reject(name, true, code, err)
	}
	ident, code := src.identify(hdr, body)
	if code != "" {
		return reject(name, true, code, fmt.Errorf("%s event: %s", src.cfg.Verify.Kind, answers[code].message))
	}
	if ident.isChallenge {
		return h.challenge(name, ident)
	}
	if !validAttribute(ident.providerID) {
		return reject(name, true, CodeEventIDInvalid, fmt.Errorf("event id %s", quoteStart(ident.providerID)))
	}
	if !validAttribute(ident.typ) {
		return reject(name, true, CodeEventTypeInvalid, fmt.Errorf("event type %s", quoteStart(ident.typ)))
	}
	id, accepted := acceptedAnswer(name, ident.providerID)
	in, fits := fillMessage(sc, req, body, ascii, name, id, ident.typ, contentType(hdr), received)
	if !fits {
		return reject(name, true, CodeBodyTooLarge, errors.New("body and attributes exceed one SNS message"))
	}
	res := outcome{source: name, known: true, id: id, typ: ident.typ, providerID: ident.providerID}
	if _, err := h.publisher.Publish(ctx, in); err != nil {
		res.status, res.code, res.detail = answers[CodePublishFailed].status, CodePublishFailed, err
		return res
	}
	res.status, res.body = http.StatusAccepted, accepted
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
// source's limit before any decoding work. A base64 body is decoded into
// *buf, grown as needed (to at most the limit) and reused by later
// requests; a text body is read where it is, without a copy. ascii reports
// that a decoded body is known to be ASCII (so valid UTF-8).
func decodeBody(req *events.APIGatewayProxyRequest, limit int, buf *[]byte) (body []byte, ascii bool, code string) {
	if !req.IsBase64Encoded {
		switch {
		case len(req.Body) == 0:
			return nil, false, CodeBodyEmpty
		case len(req.Body) > limit:
			return nil, false, CodeBodyTooLarge
		}
		return readOnlyBytes(req.Body), false, ""
	}
	if len(req.Body) == 0 {
		return nil, false, CodeBodyEmpty
	}
	if base64.StdEncoding.DecodedLen(len(req.Body)) > limit+2 { // padding makes DecodedLen overestimate by up to 2
		return nil, false, CodeBodyTooLarge
	}
	need := base64.StdEncoding.DecodedLen(len(req.Body))
	if cap(*buf) < need {
		*buf = make([]byte, need)
	}
	n, ascii, err := decodeBase64((*buf)[:need], readOnlyBytes(req.Body))
	body = (*buf)[:n]
	switch {
	case err != nil:
		return nil, false, CodeBodyNotBase64
	case len(body) == 0:
		return nil, false, CodeBodyEmpty
	case len(body) > limit:
		return nil, false, CodeBodyTooLarge
	}
	return body, ascii, ""
}

// verify authenticates the request with the source's secret. When the
// cached values fail, the secret is read again (at most once per
// secrets.DefaultMinRefresh per secret, bounded by the cache) and the
// request verified once more if the values changed: a secret rotated moments
// ago is picked up within seconds.
func (h *Handler) verify(ctx context.Context, src *source, vr *verify.Request) (string, error) {
	name := src.cfg.Verify.SecretName
	values, err := h.secrets.Get(ctx, name)
	if err != nil {
		return secretCode(err), err
	}
	err = src.verifier.Verify(vr, src.keysFor(values))
	if errors.Is(err, verify.ErrMismatch) || errors.Is(err, verify.ErrNoKey) {
		fresh, changed, rerr := h.secrets.Refresh(ctx, name)
		switch {
		case rerr != nil:
			return secretCode(rerr), errors.Join(err, rerr)
		case changed:
			err = src.verifier.Verify(vr, src.keysFor(fresh))
		}
	}
	if err == nil {
		return "", nil
	}
	return verifyCode(err), err
}

// keysFor returns the key material of values, converting them only when
// the secret changed since the last request.
func (s *source) keysFor(values []string) []verify.Key {
	if ks := s.keys.Load(); ks != nil && slices.Equal(ks.values, values) {
		return ks.keys
	}
	ks := &keySet{values: values, keys: make([]verify.Key, 0, len(values))}
	for _, v := range values {
		if k, err := s.verifier.Key(v); err == nil {
			ks.keys = append(ks.keys, k)
		}
	}
	s.keys.Store(ks)
	return ks.keys
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

// challenge answers Slack's url_verification, after the signature passed.
func (h *Handler) challenge(source string, ident identity) outcome {
	if !ident.challengeSet || !utf8.ValidString(ident.challenge) {
		return reject(source, true, CodeChallengeMissing, nil)
	}
	b, err := json.Marshal(struct {
		Challenge string `json:"challenge"`
	}{ident.challenge})
	if err != nil {
		return reject(source, true, CodeChallengeMissing, err)
	}
	return outcome{status: http.StatusOK, source: source, known: true, typ: slackURLVerification, body: string(b), challenge: true}
}

// contentType is the request's Content-Type when it is a plain printable
// value, else DefaultContentType (it is replayed as a header on delivery).
func contentType(h verify.Header) string {
	ct := first(h, "Content-Type")
	if ct == "" || len(ct) > maxAttributeBytes {
		return DefaultContentType
	}
	for i := 0; i < len(ct); i++ {
		if ct[i] < 0x20 || ct[i] > 0x7e {
			return DefaultContentType
		}
	}
	return ct
}

var stringType = aws.String("String")

// attrValues holds the attribute values of one message; the SDK's input
// points at them.
type attrValues struct {
	message, source, typ, id, receivedAt, contentType, encoding string
}

// attr is a message attribute's name and where its value is held.
type attr struct {
	name  string
	value *string
}

// list names the attributes and their values.
func (v *attrValues) list() [6]attr {
	return [...]attr{
		{message.AttrSource, &v.source}, {message.AttrType, &v.typ}, {message.AttrID, &v.id},
		{message.AttrReceivedAt, &v.receivedAt}, {message.AttrContentType, &v.contentType}, {message.AttrEncoding, &v.encoding},
	}
}

// fillMessage fills in sc's SNS publish input and reports whether the message
// and its attributes fit in one SNS message. ascii tells that a decoded body
// is known to be ASCII.
func fillMessage(sc *scratch, req *events.APIGatewayProxyRequest, body []byte, ascii bool, source, id, typ, ct string, received time.Time) (*sns.PublishInput, bool) {
	v := &sc.v
	*v = attrValues{source: source, typ: typ, id: id, contentType: ct}
	switch {
	case !req.IsBase64Encoded && utf8.ValidString(req.Body):
		v.message = req.Body // the exact bytes, without another copy
	case ascii || utf8.Valid(body):
		// body is the scratch buffer decodeBody decoded into, not written
		// again before this request's Publish returned: share it rather
		// than copy it.
		v.message = unsafe.String(unsafe.SliceData(body), len(body))
	default:
		v.message = base64.StdEncoding.EncodeToString(body)
		v.encoding = message.EncodingBase64
	}
	sc.receivedAt = appendReceivedAt(sc.receivedAt[:0], received)
	v.receivedAt = unsafe.String(unsafe.SliceData(sc.receivedAt), len(sc.receivedAt)) // scratch memory, as the body
	if v.encoding != "" {
		sc.attrs[message.AttrEncoding] = snstypes.MessageAttributeValue{DataType: stringType, StringValue: &v.encoding}
	} else {
		delete(sc.attrs, message.AttrEncoding)
	}
	size := len(v.message)
	for _, a := range v.list() {
		if *a.value != "" { // only encoding is ever empty
			size += len(a.name) + len(*stringType) + len(*a.value)
		}
	}
	return &sc.in, size <= config.MaxSNSMessageBytes
}

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

// record counts the outcome and writes the request's one log line. Neither
// ever holds a secret value or a signature. It reads the clock once, for
// the latency, the metric's time and the line's.
func (h *Handler) record(ctx context.Context, req *events.APIGatewayProxyRequest, o *outcome, start time.Time) {
	end := h.now()
	dims := h.unknownDims // a slice kept per source: Count need not allocate one
	if o.known {
		dims = h.sources[o.source].dims
	}
	dim := dims[0]
	outcomeName := "accepted"
	level := slog.LevelInfo
	switch {
	case o.challenge:
		outcomeName = "challenge"
	case o.code == CodePublishFailed:
		outcomeName = "publish_failed"
		level = slog.LevelError
		h.metrics.CountAt(end, metrics.IngestPublishFailed, dims...)
	case o.code != "":
		outcomeName = "rejected"
		level = slog.LevelWarn
		if o.status >= 500 {
			level = slog.LevelError
		}
		h.metrics.CountAt(end, metrics.IngestRejected, dim, metrics.Dimension{Name: metrics.DimReason, Value: o.code})
	default:
		h.metrics.CountAt(end, metrics.IngestAccepted, dims...)
	}
	if err := h.metrics.Flush(ctx); err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "metrics flush failed", slog.String("error", err.Error()))
	}
	lh := h.log.Handler()
	if !lh.Enabled(ctx, level) {
		return
	}
	l := requestLog{
		source: o.source, id: o.id, typ: o.typ, outcome: outcomeName, status: o.status,
		latency: end.Sub(start), code: o.code, providerID: o.providerID,
		apiRequestID: req.RequestContext.RequestID,
	}
	if lc, ok := lambdacontext.FromContext(ctx); ok {
		l.awsRequestID = lc.AwsRequestID
	}
	if o.detail != nil {
		l.err = o.detail.Error()
	}
	logRequest(ctx, lh, end, level, &l)
}

// formatReceivedAt renders t as RFC 3339 in UTC with milliseconds
// (message.ReceivedAtLayout).
func formatReceivedAt(t time.Time) string {
	var b [len(message.ReceivedAtLayout)]byte
	return string(appendReceivedAt(b[:0], t))
}

// appendReceivedAt appends formatReceivedAt(t) to dst without the general
// layout interpreter.
func appendReceivedAt(dst []byte, t time.Time) []byte {
	dt, ok := dateTime(t.Unix())
	if !ok {
		return t.UTC().AppendFormat(dst, message.ReceivedAtLayout)
	}
	dst = append(append(dst, dt[:]...), '.')
	dst = appendMillis3(dst, t.Nanosecond()/int(time.Millisecond))
	return append(dst, 'Z')
}

// readOnlyBytes views a string's bytes without copying them. The body is
// only ever read (hashed, scanned, compared); nothing may write to the
// view, since it aliases an immutable string.
func readOnlyBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
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
