package ingest_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

// wantID computes the Hookfan event id independently of the package.
func wantID(source, providerID string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + providerID))
	return "evt_" + hex.EncodeToString(sum[:])[:32]
}

func bodySHA(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func TestAcceptsEverySample(t *testing.T) {
	tests := []struct {
		source, kind, name string
		providerID, typ    string
	}{
		{"stripe", "stripe", "payment_intent.succeeded", "evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R", "payment_intent.succeeded"},
		{"github", "github", "pull_request.opened", "72d3162e-cc78-11e3-81ab-4c9367dc0958", "pull_request.opened"},
		{"github", "github", "push", "9a1d4f60-cdaf-11f0-8e2b-1f3c5d7e9a0b", "push"},
		{"shopify", "shopify", "orders.create", "b54557e4-bdd9-4b37-8a5f-bf7d70bcd043", "orders/create"},
		{"slack", "slack", "event_callback.message", "Ev08MFMKH6", "message"},
		{"standard-webhooks", "standard-webhooks", "invoice.paid", "msg_2p8QnDcrW6hFJ3vS0zY4xK9aTqE", "invoice.paid"},
		{"hmac", "hmac", "order.created", "ord_01JDW3M6T5", "order.created"},
		{"token", "token", "build.finished", "9d1c6a2e-3b7f-4f0a-8e21-55c1d0b7a9f3", "build.finished"},
		{"hmac-plain", "hmac", "order.created", bodySHA(events.MustLoad("hmac", "order.created").Body), provider.DefaultType},
	}
	for _, tt := range tests {
		t.Run(tt.source+"/"+tt.name, func(t *testing.T) {
			r := newRig(t, testSources())
			sample := events.MustLoad(tt.kind, tt.name)
			req := signSample(t, tt.source, sample, r.now.Add(-2*time.Second))
			resp := r.do(t, req)
			id := acceptedID(t, resp)
			if want := wantID(tt.source, tt.providerID); id != want {
				t.Errorf("id = %s, want %s", id, want)
			}
			if strings.Contains(id, ".") {
				t.Errorf("id %s contains '.'", id)
			}
			if got := resp.Headers["Content-Type"]; got != "application/json" {
				t.Errorf("Content-Type = %q", got)
			}
			pub := r.pub.published()
			if len(pub) != 1 {
				t.Fatalf("published %d messages, want 1", len(pub))
			}
			in := pub[0]
			if *in.TopicArn != topicARN {
				t.Errorf("TopicArn = %s", *in.TopicArn)
			}
			if *in.Message != string(sample.Body) {
				t.Errorf("Message differs from the exact body")
			}
			gotAttrs := map[string]string{}
			for k := range in.MessageAttributes {
				gotAttrs[k] = attr(in, k)
			}
			wantAttrs := map[string]string{
				"source":       tt.source,
				"type":         tt.typ,
				"id":           id,
				"received_at":  r.now.UTC().Format("2006-01-02T15:04:05.000Z"),
				"content_type": sample.ContentType(),
			}
			if diff := cmp.Diff(wantAttrs, gotAttrs); diff != "" {
				t.Errorf("attributes (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]metric{{Name: metrics.IngestAccepted, Source: tt.source}}, r.met.got()); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			lines := r.log.lines(t)
			if len(lines) != 1 {
				t.Fatalf("%d log lines, want 1: %s", len(lines), r.log.String())
			}
			l := lines[0]
			for k, want := range map[string]any{"source": tt.source, "id": id, "type": tt.typ, "outcome": "accepted", "status": float64(202)} {
				if l[k] != want {
					t.Errorf("log %s = %v, want %v", k, l[k], want)
				}
			}
			if _, ok := l["latency_ms"].(float64); !ok {
				t.Errorf("log has no numeric latency_ms: %v", l)
			}
		})
	}
}

func TestReceivedAtFormat(t *testing.T) {
	r := newRig(t, testSources())
	r.now = time.Date(2026, 11, 30, 5, 0, 0, 123_456_789, time.FixedZone("CET", 3600))
	acceptedID(t, r.do(t, signed(t, "github", "github", "push", r.now)))
	if got, want := attr(r.pub.published()[0], "received_at"), "2026-11-30T04:00:00.123Z"; got != want {
		t.Errorf("received_at = %s, want %s", got, want)
	}
}

func TestRejections(t *testing.T) {
	tamper := func(_ *rig, req *mutableRequest) { req.body = append(req.body, ' ') }
	tests := []rejection{
		{name: "stripe tampered body", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "github tampered body", source: "github", kind: "github", sample: "push", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "shopify tampered body", source: "shopify", kind: "shopify", sample: "orders.create", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "slack tampered body", source: "slack", kind: "slack", sample: "event_callback.message", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "standard tampered body", source: "standard-webhooks", kind: "standard-webhooks", sample: "invoice.paid", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "hmac tampered body", source: "hmac", kind: "hmac", sample: "order.created", edit: tamper, wantStatus: 401, wantCode: "signature_invalid"},
		{name: "wrong secret", source: "github", kind: "github", sample: "pull_request.opened",
			setup:      func(r *rig) { r.sec.values["hookfan/sources/github"] = []string{"not-the-secret"} },
			wantStatus: 401, wantCode: "signature_invalid"},
		{name: "token wrong", source: "token", kind: "token", sample: "build.finished",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Set("X-Hook-Token", "guess") },
			wantStatus: 401, wantCode: "signature_invalid"},
		{name: "stripe missing header", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("Stripe-Signature") },
			wantStatus: 401, wantCode: "signature_missing"},
		{name: "shopify missing header", source: "shopify", kind: "shopify", sample: "orders.create",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("X-Shopify-Hmac-Sha256") },
			wantStatus: 401, wantCode: "signature_missing"},
		{name: "slack missing timestamp", source: "slack", kind: "slack", sample: "event_callback.message",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("X-Slack-Request-Timestamp") },
			wantStatus: 401, wantCode: "signature_missing"},
		{name: "standard missing webhook-id", source: "standard-webhooks", kind: "standard-webhooks", sample: "invoice.paid",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("webhook-id") },
			wantStatus: 401, wantCode: "signature_missing"},
		{name: "token missing", source: "token", kind: "token", sample: "build.finished",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("X-Hook-Token") },
			wantStatus: 401, wantCode: "signature_missing"},
		{name: "github malformed header", source: "github", kind: "github", sample: "push",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Set("X-Hub-Signature-256", "sha256=xyz") },
			wantStatus: 401, wantCode: "signature_malformed"},
		{name: "slack malformed timestamp", source: "slack", kind: "slack", sample: "event_callback.message",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Set("X-Slack-Request-Timestamp", "yesterday") },
			wantStatus: 401, wantCode: "signature_malformed"},
		{name: "stripe malformed header", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Set("Stripe-Signature", "garbage") },
			wantStatus: 401, wantCode: "signature_malformed"},
		{name: "stripe only v0", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(_ *rig, m *mutableRequest) {
				m.header.Set("Stripe-Signature", strings.Replace(m.header.Get("Stripe-Signature"), "v1=", "v0=", 1))
			},
			wantStatus: 401, wantCode: "signature_malformed"},
		{name: "stripe timestamp too old", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) { m.resign(r, "stripe", r.now.Add(-301*time.Second)) }, wantStatus: 401, wantCode: "timestamp_out_of_tolerance"},
		{name: "stripe timestamp too new", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) { m.resign(r, "stripe", r.now.Add(301*time.Second)) }, wantStatus: 401, wantCode: "timestamp_out_of_tolerance"},
		{name: "slack timestamp too old", source: "slack", kind: "slack", sample: "event_callback.message",
			edit: func(r *rig, m *mutableRequest) { m.resign(r, "slack", r.now.Add(-10*time.Minute)) }, wantStatus: 401, wantCode: "timestamp_out_of_tolerance"},
		{name: "standard timestamp too new", source: "standard-webhooks", kind: "standard-webhooks", sample: "invoice.paid",
			edit: func(r *rig, m *mutableRequest) { m.resign(r, "standard-webhooks", r.now.Add(10*time.Minute)) }, wantStatus: 401, wantCode: "timestamp_out_of_tolerance"},
		{name: "empty body", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(_ *rig, m *mutableRequest) { m.body = nil }, wantStatus: 400, wantCode: "body_empty"},
		{name: "empty base64 body", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(_ *rig, m *mutableRequest) { m.body, m.base64 = nil, true }, wantStatus: 400, wantCode: "body_empty"},
		{name: "oversize body for the source", source: "small", kind: "github", sample: "pull_request.opened",
			wantStatus: 413, wantCode: "body_too_large"},
		{name: "oversize body for SNS", source: "github", kind: "github", sample: "push",
			edit:       func(_ *rig, m *mutableRequest) { m.body = make([]byte, config.MaxBodyBytesCeiling+1) },
			wantStatus: 413, wantCode: "body_too_large"},
		{name: "oversize base64 body", source: "github", kind: "github", sample: "push",
			edit:       func(_ *rig, m *mutableRequest) { m.body, m.base64 = make([]byte, config.MaxBodyBytesCeiling+1), true },
			wantStatus: 413, wantCode: "body_too_large"},
		{name: "base64 body not base64", source: "github", kind: "github", sample: "push",
			edit:       func(_ *rig, m *mutableRequest) { m.raw = "not base64!" },
			wantStatus: 400, wantCode: "body_not_base64"},
		{name: "unknown source", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit:       func(_ *rig, m *mutableRequest) { m.source = "attacker-chosen-name" },
			wantStatus: 404, wantCode: "unknown_source", wantSource: "unknown"},
		{name: "method not allowed", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit:       func(_ *rig, m *mutableRequest) { m.method = http.MethodGet },
			wantStatus: 405, wantCode: "method_not_allowed"},
		{name: "secret store unavailable", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			setup: func(r *rig) {
				r.sec.err["hookfan/sources/stripe"] = fmt.Errorf("secret %q: %w: %w", "hookfan/sources/stripe", secrets.ErrUnavailable, errBoom)
			},
			wantStatus: 503, wantCode: "secret_store_unavailable"},
		{name: "secret not yet set", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			setup:      func(r *rig) { delete(r.sec.values, "hookfan/sources/stripe") },
			wantStatus: 401, wantCode: "secret_not_set"},
		{name: "secret invalid", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			setup:      func(r *rig) { r.sec.err["hookfan/sources/stripe"] = fmt.Errorf("x: %w", secrets.ErrInvalid) },
			wantStatus: 401, wantCode: "secret_not_set"},
		{name: "standard secret not whsec base64", source: "standard-webhooks", kind: "standard-webhooks", sample: "invoice.paid",
			setup:      func(r *rig) { r.sec.values["hookfan/sources/standard-webhooks"] = []string{"whsec_***"} },
			wantStatus: 401, wantCode: "secret_not_set"},
		{name: "stripe body not JSON", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) {
				m.body = []byte(`{"id":"evt_1","type":"x"`)
				m.resign(r, "stripe", r.now)
			},
			wantStatus: 400, wantCode: "body_not_json"},
		{name: "stripe event id missing", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) {
				m.body = []byte(`{"type":"charge.succeeded","data":{"id":"evt_nested"}}`)
				m.resign(r, "stripe", r.now)
			},
			wantStatus: 400, wantCode: "event_id_missing"},
		{name: "stripe event type missing", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) {
				m.body = []byte(`{"id":"evt_1","type":null}`)
				m.resign(r, "stripe", r.now)
			},
			wantStatus: 400, wantCode: "event_type_missing"},
		{name: "type with control characters", source: "stripe", kind: "stripe", sample: "payment_intent.succeeded",
			edit: func(r *rig, m *mutableRequest) {
				m.body = []byte(`{"id":"evt_1","type":"charge.\u0000succeeded"}`)
				m.resign(r, "stripe", r.now)
			},
			wantStatus: 400, wantCode: "event_type_invalid"},
		{name: "id longer than 256 bytes", source: "github", kind: "github", sample: "push",
			edit: func(r *rig, m *mutableRequest) {
				m.header.Set("X-GitHub-Delivery", strings.Repeat("a", 257))
			},
			wantStatus: 400, wantCode: "event_id_invalid"},
		{name: "github delivery header missing", source: "github", kind: "github", sample: "push",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("X-GitHub-Delivery") },
			wantStatus: 400, wantCode: "event_id_missing"},
		{name: "shopify topic missing", source: "shopify", kind: "shopify", sample: "orders.create",
			edit:       func(_ *rig, m *mutableRequest) { m.header.Del("X-Shopify-Topic") },
			wantStatus: 400, wantCode: "event_type_missing"},
		{name: "generic id field missing", source: "hmac", kind: "hmac", sample: "order.created",
			edit: func(r *rig, m *mutableRequest) {
				m.body = []byte(`{"event":"order.created"}`)
				m.resign(r, "hmac", r.now)
			},
			wantStatus: 400, wantCode: "event_id_missing"},
		{name: "generic type field missing", source: "token", kind: "token", sample: "build.finished",
			edit:       func(_ *rig, m *mutableRequest) { m.body = []byte(`{"build":{}}`) },
			wantStatus: 400, wantCode: "event_type_missing"},
		{name: "generic body not JSON where a field is configured", source: "token", kind: "token", sample: "build.finished",
			edit:       func(_ *rig, m *mutableRequest) { m.body = []byte(`event_type=build.finished`) },
			wantStatus: 400, wantCode: "body_not_json"},

		// The JSON read as subscribers read it: one document, no repeated
		// wanted key, exact keys, ids and types SQS and headers can carry.
		body("stripe garbage after the document", "stripe", `{"id":"evt_1","type":"a"} x`, "body_not_json"),
		body("stripe a second document", "stripe", `{"id":"evt_1","type":"a"}{}`, "body_not_json"),
		body("stripe NUL after the document", "stripe", "{\"id\":\"evt_1\",\"type\":\"a\"}\x00", "body_not_json"),
		body("stripe SOH after the document", "stripe", "{\"id\":\"evt_1\",\"type\":\"a\"}\x01", "body_not_json"),
		body("stripe truncated", "stripe", `{"id":"evt_1","type":"a","data":{"object":`, "body_not_json"),
		body("stripe not an object", "stripe", `["evt_1","a"]`, "event_id_missing"),
		body("stripe duplicate type", "stripe", `{"id":"e1","type":"a","type":"b"}`, "body_duplicate_key"),
		body("stripe duplicate id", "stripe", `{"id":"e1","type":"a","data":{},"id":"e2"}`, "body_duplicate_key"),
		body("stripe duplicate through an escape", "stripe", `{"id":"e1","type":"a","typ\u0065":"b"}`, "body_duplicate_key"),
		// Go's encoding/json reads "ID" as id, the last one winning: the
		// subscriber would see event e2 where Hookfan deduplicated e1.
		body("stripe id beside ID", "stripe", `{"id":"e1","type":"a","ID":"e2"}`, "body_duplicate_key"),
		body("stripe type beside Type", "stripe", `{"Type":"b","id":"e1","type":"a"}`, "body_duplicate_key"),
		body("slack event beside Event", "slack", `{"type":"event_callback","event_id":"Ev1","event":{"type":"a"},"Event":{"type":"b"}}`, "body_duplicate_key"),
		body("stripe keys are case-sensitive", "stripe", `{"ID":"e1","type":"a"}`, "event_id_missing"),
		body("stripe id a number", "stripe", `{"id":1,"type":"a"}`, "event_id_missing"),
		body("stripe empty id", "stripe", `{"id":"","type":"a"}`, "event_id_invalid"),
		body("stripe empty type", "stripe", `{"id":"e1","type":""}`, "event_type_invalid"),
		body("stripe type not UTF-8", "stripe", "{\"id\":\"e1\",\"type\":\"a\xff\"}", "event_type_invalid"),
		body("stripe type a lone surrogate", "stripe", `{"id":"e1","type":"a\ud800"}`, "event_type_invalid"),
		body("stripe type ending in U+FFFF", "stripe", "{\"id\":\"e1\",\"type\":\"a\uffff\"}", "event_type_invalid"),
		body("stripe type ending in an escaped U+FFFF", "stripe", `{"id":"e1","type":"a\uffff"}`, "event_type_invalid"),
		body("stripe type holding U+FFFE", "stripe", `{"id":"e1","type":"a\ufffeb"}`, "event_type_invalid"),
		body("stripe id ending in U+FFFF", "stripe", `{"id":"e1\uffff","type":"a"}`, "event_id_invalid"),
		body("stripe id not UTF-8", "stripe", "{\"id\":\"e\xc3\",\"type\":\"a\"}", "event_id_invalid"),
		body("stripe type longer than 256 bytes", "stripe", `{"id":"e1","type":"`+strings.Repeat("t", 257)+`"}`, "event_type_invalid"),
		body("slack duplicate event", "slack", `{"type":"event_callback","event_id":"Ev1","event":{"type":"a"},"event":{"type":"b"}}`, "body_duplicate_key"),
		body("slack duplicate event.type", "slack", `{"type":"event_callback","event_id":"Ev1","event":{"type":"a","type":"b"}}`, "body_duplicate_key"),
		body("slack duplicate top-level type", "slack", `{"type":"event_callback","type":"url_verification","challenge":"c"}`, "body_duplicate_key"),
		body("standard duplicate type", "standard-webhooks", `{"type":"a","data":{},"type":"b"}`, "body_duplicate_key"),
		body("standard not JSON", "standard-webhooks", `type=a`, "body_not_json"),
		body("github duplicate action", "github", `{"action":"created","action":"deleted"}`, "body_duplicate_key"),
		body("github action not UTF-8", "github", "{\"action\":\"cr\xffeated\"}", "event_type_invalid"),
		body("generic duplicate parent on the path", "nested", `{"data":{"id":"1","object":{"type":"a"}},"data":{"id":"2"}}`, "body_duplicate_key"),
		body("generic duplicate in the middle of the path", "nested", `{"data":{"id":"1","object":{"type":"a"},"object":{"type":"b"}}}`, "body_duplicate_key"),
		body("generic field path through a string", "nested", `{"data":{"id":"1","object":"a"}}`, "event_type_missing"),
		body("generic type field an object", "hmac", `{"id":"1","event":{"name":"a"}}`, "event_type_missing"),
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srcs := testSources()
			for i := range srcs {
				if srcs[i].Name == "small" {
					srcs[i].MaxBodyBytes = 512
				}
			}
			r := newRig(t, srcs)
			if tt.setup != nil {
				tt.setup(r)
			}
			m := newMutable(t, r, tt.source, tt.kind, tt.sample)
			if tt.edit != nil {
				tt.edit(r, m)
			}
			resp := r.do(t, m.request())
			if resp.StatusCode != tt.wantStatus {
				t.Errorf("status = %d, want %d (body %s)", resp.StatusCode, tt.wantStatus, resp.Body)
			}
			if got := errorCode(t, resp.Body); got != tt.wantCode {
				t.Errorf("code = %s, want %s", got, tt.wantCode)
			}
			if n := len(r.pub.calls); n != 0 {
				t.Errorf("published %d messages, want none", n)
			}
			wantSource := tt.wantSource
			if wantSource == "" {
				wantSource = tt.source
			}
			if diff := cmp.Diff([]metric{{Name: metrics.IngestRejected, Source: wantSource, Reason: tt.wantCode}}, r.met.got()); diff != "" {
				t.Errorf("metrics (-want +got):\n%s", diff)
			}
			lines := r.log.lines(t)
			if len(lines) != 1 || lines[0]["code"] != tt.wantCode || lines[0]["outcome"] != "rejected" {
				t.Errorf("log = %s, want one rejected line with code %s", r.log.String(), tt.wantCode)
			}
			if strings.Contains(r.log.String(), secretOf(tt.source)) {
				t.Errorf("the log holds the secret: %s", r.log.String())
			}
		})
	}
}

// rejection is a request that must be refused, and how.
type rejection struct {
	name   string
	source string
	kind   string
	sample string
	// edit changes the request after signing; setup changes the rig.
	edit       func(r *rig, m *mutableRequest)
	setup      func(r *rig)
	wantStatus int
	wantCode   string
	wantSource string // the metric's Source; the request's source by default
}

// body is a rejection of a source's sample with its body replaced (and
// signed), the sample picked by the source's kind.
func body(name, source, body, code string) rejection {
	sample := map[string][2]string{
		"stripe": {"stripe", "payment_intent.succeeded"}, "slack": {"slack", "event_callback.message"},
		"standard-webhooks": {"standard-webhooks", "invoice.paid"}, "github": {"github", "push"},
		"nested": {"hmac", "order.created"}, "hmac": {"hmac", "order.created"},
	}[source]
	return rejection{name: name, source: source, kind: sample[0], sample: sample[1], wantStatus: http.StatusBadRequest, wantCode: code,
		edit: func(r *rig, m *mutableRequest) { m.body = []byte(body); m.resign(r, source, r.now) }}
}

// mutableRequest is a signed sample that a test may change before sending.
type mutableRequest struct {
	t      testing.TB
	source string
	sample events.Sample
	header http.Header
	body   []byte
	raw    string // replaces the encoded body when set
	base64 bool
	method string
}

func newMutable(t testing.TB, r *rig, source, kind, name string) *mutableRequest {
	s := events.MustLoad(kind, name)
	m := &mutableRequest{t: t, source: source, sample: s, body: s.Body}
	m.resign(r, source, r.now)
	return m
}

// resign signs the current body at time at with the source's secret.
func (m *mutableRequest) resign(_ *rig, source string, at time.Time) {
	s := m.sample.Clone()
	s.Body = m.body
	h, err := events.Sign(sourceConfig(m.t, source).Verify, s, at, secretOf(source))
	if err != nil {
		m.t.Fatal(err)
	}
	m.header = h
}

func (m *mutableRequest) request() eventsRequest {
	req := events.ProxyRequest(m.source, m.header, m.body)
	if m.method != "" {
		req.HTTPMethod = m.method
	}
	if m.base64 {
		req.IsBase64Encoded = true
		req.Body = base64.StdEncoding.EncodeToString(m.body)
	}
	if m.raw != "" {
		req.IsBase64Encoded = true
		req.Body = m.raw
	}
	return req
}

func TestPublishFailureThenRetry(t *testing.T) {
	r := newRig(t, testSources())
	r.pub.err = errBoom
	first := signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now)
	resp := r.do(t, first)
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != "publish_failed" {
		t.Fatalf("answer = %d %s, want 503 publish_failed", resp.StatusCode, resp.Body)
	}
	if strings.Contains(resp.Body, "boom") {
		t.Errorf("the answer leaks the internal error: %s", resp.Body)
	}
	failedID := attr(r.pub.calls[0], "id")
	if diff := cmp.Diff([]metric{{Name: metrics.IngestPublishFailed, Source: "stripe"}}, r.met.got()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if l := r.log.lines(t); len(l) != 1 || l[0]["outcome"] != "publish_failed" || l[0]["level"] != "ERROR" {
		t.Errorf("log = %s", r.log.String())
	}

	// Stripe retries an hour later: a new timestamp and signature, the same event.
	r.pub.err = nil
	r.now = r.now.Add(time.Hour)
	retry := signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now)
	if retry.Headers["Stripe-Signature"] == first.Headers["Stripe-Signature"] {
		t.Fatal("the retry should carry a new signature")
	}
	id := acceptedID(t, r.do(t, retry))
	if id != failedID {
		t.Errorf("retry id = %s, want the failed attempt's %s", id, failedID)
	}
}

func TestSecretRotationIsPickedUp(t *testing.T) {
	r := newRig(t, testSources())
	// The cache still holds the old value; the store already has the new one.
	r.sec.values["hookfan/sources/github"] = []string{"old-secret"}
	r.sec.fresh["hookfan/sources/github"] = []string{secretOf("github"), "old-secret"}
	acceptedID(t, r.do(t, signed(t, "github", "github", "push", r.now)))
	if r.sec.refreshes != 1 {
		t.Errorf("refreshes = %d, want 1", r.sec.refreshes)
	}
	// A forged request triggers a refresh attempt, which finds nothing new.
	req := signed(t, "github", "github", "push", r.now)
	req.Body += " "
	resp := r.do(t, req)
	if resp.StatusCode != 401 || errorCode(t, resp.Body) != "signature_invalid" {
		t.Errorf("forged request: %d %s", resp.StatusCode, resp.Body)
	}
	if r.sec.refreshes != 2 {
		t.Errorf("refreshes = %d, want 2", r.sec.refreshes)
	}
	// Malformed requests never reach the store.
	req.Headers["X-Hub-Signature-256"] = "nonsense"
	req.MultiValueHeaders["X-Hub-Signature-256"] = []string{"nonsense"}
	r.do(t, req)
	if r.sec.refreshes != 2 {
		t.Errorf("refreshes = %d after a malformed request, want still 2", r.sec.refreshes)
	}
}

// TestSlackURLVerification answers the handshake only after the signature
// passed, and never publishes it.
func TestSlackURLVerification(t *testing.T) {
	r := newRig(t, testSources())
	resp := r.do(t, signed(t, "slack", "slack", "url_verification", r.now))
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d %s, want 200", resp.StatusCode, resp.Body)
	}
	if want := `{"challenge":"3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P"}`; resp.Body != want {
		t.Errorf("body = %s, want %s", resp.Body, want)
	}
	if len(r.pub.calls) != 0 {
		t.Errorf("url_verification was published")
	}
	if l := r.log.lines(t); len(l) != 1 || l[0]["outcome"] != "challenge" {
		t.Errorf("log = %s", r.log.String())
	}

	forged := signed(t, "slack", "slack", "url_verification", r.now)
	forged.Headers["X-Slack-Signature"] = "v0=" + strings.Repeat("0", 64)
	forged.MultiValueHeaders["X-Slack-Signature"] = []string{forged.Headers["X-Slack-Signature"]}
	resp = r.do(t, forged)
	if resp.StatusCode != http.StatusUnauthorized || strings.Contains(resp.Body, "challenge\"") {
		t.Errorf("forged handshake: %d %s, want 401 without the challenge", resp.StatusCode, resp.Body)
	}
}

func TestBase64Bodies(t *testing.T) {
	r := newRig(t, testSources())
	// A JSON body API Gateway passed base64-encoded is published as text.
	s := events.MustLoad("stripe", "payment_intent.succeeded")
	req := signSample(t, "stripe", s, r.now)
	req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(s.Body), true
	acceptedID(t, r.do(t, req))
	in := r.pub.published()[0]
	if *in.Message != string(s.Body) || attr(in, "encoding") != "" {
		t.Errorf("UTF-8 body: message %q encoding %q", *in.Message, attr(in, "encoding"))
	}

	// A body that is not UTF-8 travels base64 with encoding=base64.
	bin := events.Sample{Kind: "hmac", Name: "binary", Body: []byte{0xff, 0xfe, 0x00, 'h', 'i', 0x80}, Header: http.Header{"Content-Type": {"application/octet-stream"}}}
	req = signSample(t, "hmac-plain", bin, r.now)
	req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(bin.Body), true
	id := acceptedID(t, r.do(t, req))
	in = r.pub.published()[1]
	if got, want := *in.Message, base64.StdEncoding.EncodeToString(bin.Body); got != want {
		t.Errorf("message = %q, want %q", got, want)
	}
	if attr(in, "encoding") != "base64" || attr(in, "content_type") != "application/octet-stream" {
		t.Errorf("attributes = %v", in.MessageAttributes)
	}
	if want := wantID("hmac-plain", bodySHA(bin.Body)); id != want {
		t.Errorf("id = %s, want %s", id, want)
	}

	// Not UTF-8 and not marked base64 by API Gateway: still published
	// safely. (Another body: the same one again would be a replay.)
	bin.Body = append(bin.Body, 0x81)
	req = signSample(t, "hmac-plain", bin, r.now)
	acceptedID(t, r.do(t, req))
	if in := r.pub.published()[2]; attr(in, "encoding") != "base64" {
		t.Errorf("raw non-UTF-8 body not base64-encoded: %v", in.MessageAttributes)
	}
}

func TestMessageMustFitSNS(t *testing.T) {
	r := newRig(t, testSources())
	// Within the body limit, but base64 makes it a third larger than SNS takes.
	body := make([]byte, 200*1024)
	for i := range body {
		body[i] = 0xff
	}
	s := events.Sample{Kind: "hmac", Name: "big", Body: body, Header: http.Header{}}
	resp := r.do(t, signSample(t, "hmac-plain", s, r.now))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || errorCode(t, resp.Body) != "body_too_large" {
		t.Errorf("answer %d %s, want 413 body_too_large", resp.StatusCode, resp.Body)
	}
	if len(r.pub.calls) != 0 {
		t.Error("published")
	}
	// The largest accepted text body plus attributes fits in one SNS message.
	text := []byte(strings.Repeat("a", config.MaxBodyBytesCeiling))
	s = events.Sample{Kind: "hmac", Name: "big", Body: text, Header: http.Header{"Content-Type": {"text/plain"}}}
	acceptedID(t, r.do(t, signSample(t, "hmac-plain", s, r.now)))
}

func TestHeaderSpellings(t *testing.T) {
	tests := []struct {
		name string
		edit func(req *eventsRequest)
	}{
		{"lower case names", func(req *eventsRequest) {
			req.Headers = lowerKeys(req.Headers)
			req.MultiValueHeaders = lowerMultiKeys(req.MultiValueHeaders)
		}},
		{"only single-value headers", func(req *eventsRequest) { req.MultiValueHeaders = nil }},
		{"only multi-value headers, upper case", func(req *eventsRequest) {
			req.Headers = nil
			up := map[string][]string{}
			for k, v := range req.MultiValueHeaders {
				up[strings.ToUpper(k)] = v
			}
			req.MultiValueHeaders = up
		}},
		{"signature sent twice with the same value", func(req *eventsRequest) {
			v := req.MultiValueHeaders["Stripe-Signature"]
			req.MultiValueHeaders["stripe-signature"] = v
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, testSources())
			req := signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now)
			tt.edit(&req)
			acceptedID(t, r.do(t, req))
		})
	}
}

func lowerKeys(m map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

func lowerMultiKeys(m map[string][]string) map[string][]string {
	out := map[string][]string{}
	for k, v := range m {
		out[strings.ToLower(k)] = v
	}
	return out
}

func TestSecretsNeverLogged(t *testing.T) {
	r := newRig(t, testSources())
	req := signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now)
	sig := req.Headers["Stripe-Signature"]
	r.do(t, req)
	req.Body += "x"
	r.do(t, req)
	r.pub.err = errBoom
	r.do(t, signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now))
	out := r.log.String()
	for _, leak := range []string{secretOf("stripe"), sig, sig[strings.Index(sig, "v1=")+3:]} {
		if strings.Contains(out, leak) {
			t.Errorf("log holds %q:\n%s", leak, out)
		}
	}
	if n := len(r.log.lines(t)); n != 3 {
		t.Errorf("%d log lines for 3 requests", n)
	}
}

func TestEventID(t *testing.T) {
	tests := []struct{ source, provider string }{
		{"stripe", "evt_1"}, {"github", "72d3162e-cc78-11e3-81ab-4c9367dc0958"}, {"a", ""}, {"x", "with.dots.and\x00nul"},
	}
	for _, tt := range tests {
		got := ingest.EventID(tt.source, tt.provider)
		if want := wantID(tt.source, tt.provider); got != want {
			t.Errorf("EventID(%q, %q) = %s, want %s", tt.source, tt.provider, got, want)
		}
		if len(got) != 36 || strings.Contains(got, ".") {
			t.Errorf("EventID(%q, %q) = %s: want evt_ and 32 hex digits", tt.source, tt.provider, got)
		}
	}
	// The source name is part of the id: two sources never collide.
	if ingest.EventID("stripe", "evt_1") == ingest.EventID("stripe-eu", "evt_1") {
		t.Error("two sources give one provider id the same Hookfan id")
	}
}

func TestNewValidates(t *testing.T) {
	good := ingest.Options{TopicARN: topicARN, Publisher: &fakePublisher{}, Secrets: &fakeSecrets{}, Metrics: metrics.NewRecorder(&memSink{}),
		Sources: testSources(), Replay: replayguard.NewMemory()}
	tests := []struct {
		name string
		edit func(o *ingest.Options)
	}{
		{"no topic", func(o *ingest.Options) { o.TopicARN = "" }},
		{"no publisher", func(o *ingest.Options) { o.Publisher = nil }},
		{"duplicate source", func(o *ingest.Options) {
			s := sourceConfig(t, "stripe")
			o.Sources = []config.Source{s, s}
		}},
		{"bad kind", func(o *ingest.Options) {
			o.Sources = []config.Source{{Name: "x", Verify: config.Verify{Kind: "md5", SecretName: "s"}}}
		}},
		{"replay protection without a store", func(o *ingest.Options) { o.Replay = nil }},
	}
	for _, tt := range tests {
		o := good
		tt.edit(&o)
		if _, err := ingest.New(o); err == nil {
			t.Errorf("%s: New = nil error, want one", tt.name)
		}
	}
	if _, err := ingest.New(good); err != nil {
		t.Errorf("New(good) = %v", err)
	}
}
