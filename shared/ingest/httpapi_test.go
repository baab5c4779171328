package ingest

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// h2Publisher keeps a copy of each published message and its attributes
// (the handler reuses the input's memory once Publish returns).
type h2Publisher struct {
	mu       sync.Mutex
	messages []string
	attrs    []map[string]string
}

func (p *h2Publisher) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	attrs := map[string]string{}
	for k, v := range in.MessageAttributes {
		attrs[k] = strings.Clone(*v.StringValue)
	}
	p.messages = append(p.messages, strings.Clone(*in.Message))
	p.attrs = append(p.attrs, attrs)
	return &sns.PublishOutput{}, nil
}

type h2Secrets map[string][]string

func (s h2Secrets) Get(_ context.Context, name string) ([]string, error) { return s[name], nil }
func (s h2Secrets) Refresh(_ context.Context, name string) ([]string, bool, error) {
	return s[name], false, nil
}

const h2GitHubSecret = "github-secret"

func newH2Handler(t testing.TB) (*Handler, *h2Publisher) {
	t.Helper()
	sink := metrics.NewEMF(io.Discard)
	pub := &h2Publisher{}
	h, err := New(Options{
		Sources:   []config.Source{{Name: "github", Verify: config.Verify{Kind: provider.GitHub, SecretName: "gh"}}},
		TopicARN:  "arn:aws:sns:eu-west-1:123456789012:t",
		Publisher: pub,
		Secrets:   h2Secrets{"gh": {h2GitHubSecret}},
		Metrics:   metrics.NewRecorder(sink),
		Replay:    replayguard.NewMemory(),
	})
	if err != nil {
		t.Fatal(err)
	}
	return h, pub
}

// h2GitHubRequest is a signed GitHub push as an HTTP API delivers it to the
// per-source route: lowercased header names, the stage in rawPath, the
// body base64-encoded unless its content type is text.
func h2GitHubRequest(body []byte, contentType string, base64Body bool) events.APIGatewayV2HTTPRequest {
	mac := hmac.New(sha256.New, []byte(h2GitHubSecret))
	mac.Write(body)
	req := events.APIGatewayV2HTTPRequest{
		Version:  "2.0",
		RouteKey: "POST /webhooks/github",
		RawPath:  "/v1/webhooks/github",
		Headers: map[string]string{
			"content-type":        contentType,
			"x-github-delivery":   "72d3162e-cc78-11e3-81ab-4c9367dc0958",
			"x-github-event":      "push",
			"x-hub-signature-256": "sha256=" + hex.EncodeToString(mac.Sum(nil)),
			"user-agent":          "GitHub-Hookshot/044aadd",
		},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey: "POST /webhooks/github", Stage: "v1", RequestID: "req-1",
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: http.MethodPost, Path: "/v1/webhooks/github", SourceIP: "192.30.252.1"},
		},
		Body: string(body),
	}
	if base64Body {
		req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return req
}

// TestHandleHTTPBodiesByteForByte: whether the HTTP API hands the body over
// as text or base64, what is published is the provider's exact bytes, and
// the answer is the REST answer in the payload 2.0 shape.
func TestHandleHTTPBodiesByteForByte(t *testing.T) {
	jsonBody := []byte(`{"ref":"refs/heads/main","head_commit":{"message":"caf\u00e9 \u2603 <script>"}}` + "\n")
	form := []byte("payload=%7B%22ref%22%3A%22refs%2Fheads%2Fmain%22%7D")
	binary := []byte{'{', '"', 'a', '"', ':', '"', 0xff, 0xfe, '"', '}'} // not UTF-8
	tests := []struct {
		name        string
		body        []byte
		contentType string
		base64      bool
		wantMessage string // the SNS message: the body, or its base64 when SQS could not carry it
		wantEnc     string
	}{
		{"JSON as text", jsonBody, "application/json", false, string(jsonBody), ""},
		{"JSON as base64", jsonBody, "application/json", true, string(jsonBody), ""},
		{"form as base64", form, "application/x-www-form-urlencoded", true, string(form), ""},
		{"invalid UTF-8 as base64", binary, "application/octet-stream", true, base64.StdEncoding.EncodeToString(binary), message.EncodingBase64},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, pub := newH2Handler(t)
			resp, err := h.HandleHTTP(context.Background(), h2GitHubRequest(tt.body, tt.contentType, tt.base64))
			if err != nil || resp.StatusCode != http.StatusAccepted {
				t.Fatalf("HandleHTTP = %d %s, %v; want 202", resp.StatusCode, resp.Body, err)
			}
			if len(pub.messages) != 1 {
				t.Fatalf("published %d messages, want 1", len(pub.messages))
			}
			if pub.messages[0] != tt.wantMessage || pub.attrs[0][message.AttrEncoding] != tt.wantEnc {
				t.Errorf("published %q (encoding %q), want %q (encoding %q)", pub.messages[0], pub.attrs[0][message.AttrEncoding], tt.wantMessage, tt.wantEnc)
			}
			if got := pub.attrs[0][message.AttrSource]; got != "github" {
				t.Errorf("source attribute %q, want github (from the route key)", got)
			}
			if got := pub.attrs[0][message.AttrContentType]; got != tt.contentType {
				t.Errorf("content type attribute %q, want %q (from the lowercased header)", got, tt.contentType)
			}
			var body struct{ ID string }
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body.ID != pub.attrs[0][message.AttrID] {
				t.Errorf("answer %s, want the published id %s", resp.Body, pub.attrs[0][message.AttrID])
			}
		})
	}
}

// TestHandleHTTPRejects: the REST contract's refusals, through the 2.0 shape.
func TestHandleHTTPRejects(t *testing.T) {
	valid := []byte(`{"zen":"Keep it logically awesome."}`)
	tests := []struct {
		name   string
		edit   func(r *events.APIGatewayV2HTTPRequest)
		status int
		code   string
	}{
		{"unknown source on the catch-all route", func(r *events.APIGatewayV2HTTPRequest) {
			r.RouteKey, r.RawPath, r.PathParameters = "POST /webhooks/{source}", "/v1/webhooks/gitlab", map[string]string{"source": "gitlab"}
		}, http.StatusNotFound, CodeUnknownSource},
		{"signature of other bytes", func(r *events.APIGatewayV2HTTPRequest) {
			r.Body = base64.StdEncoding.EncodeToString([]byte(`{"zen":"Keep it logically awesome!"}`))
		}, http.StatusUnauthorized, CodeSignatureInvalid},
		{"signature header repeated (joined with a comma)", func(r *events.APIGatewayV2HTTPRequest) {
			r.Headers["x-hub-signature-256"] += "," + r.Headers["x-hub-signature-256"]
		}, http.StatusUnauthorized, CodeSignatureMalformed},
		{"not base64 though flagged", func(r *events.APIGatewayV2HTTPRequest) { r.Body = "%%%" }, http.StatusBadRequest, CodeBodyNotBase64},
		{"empty body", func(r *events.APIGatewayV2HTTPRequest) { r.Body = "" }, http.StatusBadRequest, CodeBodyEmpty},
		{"GET", func(r *events.APIGatewayV2HTTPRequest) { r.RequestContext.HTTP.Method = http.MethodGet }, http.StatusMethodNotAllowed, CodeMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, pub := newH2Handler(t)
			req := h2GitHubRequest(valid, "application/json", true)
			tt.edit(&req)
			resp, err := h.HandleHTTP(context.Background(), req)
			if err != nil || resp.StatusCode != tt.status {
				t.Fatalf("HandleHTTP = %d %s, %v; want %d", resp.StatusCode, resp.Body, err, tt.status)
			}
			var body struct{ Error struct{ Code string } }
			if err := json.Unmarshal([]byte(resp.Body), &body); err != nil || body.Error.Code != tt.code {
				t.Errorf("answer %s (%v), want error %q", resp.Body, err, tt.code)
			}
			if resp.Headers["Content-Type"] != "application/json" {
				t.Errorf("answer headers %v, want a JSON content type", resp.Headers)
			}
			if len(pub.messages) != 0 {
				t.Errorf("published %d messages for a refused request", len(pub.messages))
			}
		})
	}
}

func TestProxyFromHTTP(t *testing.T) {
	req := events.APIGatewayV2HTTPRequest{
		RouteKey:              "POST /webhooks/{source}",
		RawPath:               "/v1/webhooks/shop",
		Cookies:               []string{"a=1", "b=2"},
		Headers:               map[string]string{"x-shopify-topic": "orders/create"},
		QueryStringParameters: map[string]string{"k": "v1,v2"},
		PathParameters:        map[string]string{"source": "shop"},
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			AccountID: "123456789012", APIID: "abc", DomainName: "hooks.example.com", RequestID: "r", Stage: "v1",
			Time: "12/Mar/2020:19:03:58 +0000", TimeEpoch: time.Date(2020, 3, 12, 19, 3, 58, 0, time.UTC).UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{Method: "POST", Path: "/v1/webhooks/shop", Protocol: "HTTP/1.1", SourceIP: "203.0.113.9", UserAgent: "Shopify-Captain-Hook"},
		},
		Body: "e30=", IsBase64Encoded: true,
	}
	got := proxyFromHTTP(&req)
	want := events.APIGatewayProxyRequest{
		Resource: "/webhooks/{source}", Path: "/webhooks/shop", HTTPMethod: "POST",
		Headers:               map[string]string{"x-shopify-topic": "orders/create", "cookie": "a=1; b=2"},
		QueryStringParameters: map[string]string{"k": "v1,v2"},
		PathParameters:        map[string]string{"source": "shop"},
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID: "123456789012", ResourcePath: "/webhooks/{source}", Stage: "v1", DomainName: "hooks.example.com", RequestID: "r",
			Protocol: "HTTP/1.1", Identity: events.APIGatewayRequestIdentity{SourceIP: "203.0.113.9", UserAgent: "Shopify-Captain-Hook"},
			Path: "/v1/webhooks/shop", HTTPMethod: "POST", RequestTime: "12/Mar/2020:19:03:58 +0000", RequestTimeEpoch: 1584039838000, APIID: "abc",
		},
		Body: "e30=", IsBase64Encoded: true,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("proxyFromHTTP (-want +got):\n%s", diff)
	}
	if _, ok := req.Headers["cookie"]; ok {
		t.Error("proxyFromHTTP wrote the cookie into the request's own header map")
	}

	for _, tt := range []struct{ route, raw, stage, source, path string }{
		{"POST /webhooks/github", "/v1/webhooks/github", "v1", "github", "/webhooks/github"},
		{"POST /webhooks/github", "/webhooks/github", "$default", "github", "/webhooks/github"},
		{"POST /webhooks/github", "/webhooks/github", "v1", "github", "/webhooks/github"}, // a custom domain's mapping drops the stage
		{"$default", "/v1/other", "v1", "", "/other"},
		{"POST /webhooks/{source}/x", "/v1/webhooks/a/x", "v1", "", "/webhooks/a/x"},
	} {
		r := events.APIGatewayV2HTTPRequest{RouteKey: tt.route, RawPath: tt.raw, RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: tt.stage}}
		p := proxyFromHTTP(&r)
		if p.PathParameters["source"] != tt.source || p.Path != tt.path {
			t.Errorf("%s %s (stage %s): source %q path %q, want %q %q", tt.route, tt.raw, tt.stage, p.PathParameters["source"], p.Path, tt.source, tt.path)
		}
	}
}

func TestHTTPFromProxy(t *testing.T) {
	got := httpFromProxy(&events.APIGatewayProxyResponse{
		StatusCode:        202,
		Headers:           map[string]string{"Content-Type": "application/json"},
		MultiValueHeaders: map[string][]string{"Vary": {"a", "b"}, "Set-Cookie": {"x=1", "y=2"}},
		Body:              `{"id":"x"}`,
	})
	want := events.APIGatewayV2HTTPResponse{
		StatusCode: 202,
		Headers:    map[string]string{"Content-Type": "application/json", "Vary": "a,b"},
		Body:       `{"id":"x"}`,
		Cookies:    []string{"x=1", "y=2"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("httpFromProxy (-want +got):\n%s", diff)
	}
}

// FuzzProxyFromHTTP: the source read from a route is always a single path
// segment of the route itself (or the path parameter as sent), and the
// stageless path is a suffix of rawPath.
func FuzzProxyFromHTTP(f *testing.F) {
	for _, s := range [][3]string{
		{"POST /webhooks/github", "/v1/webhooks/github", "v1"},
		{"POST /webhooks/{source}", "/v1/webhooks/x", "v1"},
		{"$default", "/", "$default"},
		{"POST /webhooks/", "/v1/webhooks/", "v1"},
		{"POST /webhooks/a/b", "/v1v1/webhooks/a/b", "v1"},
		{"POST /webhooks/{source}/{x}", "//", ""},
	} {
		f.Add(s[0], s[1], s[2])
	}
	f.Fuzz(func(t *testing.T, routeKey, rawPath, stage string) {
		req := events.APIGatewayV2HTTPRequest{RouteKey: routeKey, RawPath: rawPath, RequestContext: events.APIGatewayV2HTTPRequestContext{Stage: stage}}
		p := proxyFromHTTP(&req)
		if !strings.HasSuffix(rawPath, p.Path) {
			t.Errorf("path %q is not a suffix of rawPath %q", p.Path, rawPath)
		}
		if s, ok := p.PathParameters["source"]; ok {
			if s == "" || strings.ContainsAny(s, "/{}") || !strings.HasSuffix(routeKey, "/webhooks/"+s) {
				t.Errorf("route %q gives source %q", routeKey, s)
			}
		}
	})
}

// BenchmarkHandleHTTP measures the 2.0 adapter beside the REST handler on
// the same signed GitHub request: what the HTTP API's shape costs ingest.
func BenchmarkHandleHTTP(b *testing.B) {
	body := []byte(`{"ref":"refs/heads/main","head_commit":{"message":"fix"},"repository":{"full_name":"octo/hello"}}`)
	v2 := h2GitHubRequest(body, "application/json", true)
	v1 := proxyFromHTTP(&v2)
	for _, bb := range []struct {
		name string
		run  func(h *Handler) int
	}{
		{"rest", func(h *Handler) int { r, _ := h.Handle(context.Background(), v1); return r.StatusCode }},
		{"http", func(h *Handler) int { r, _ := h.HandleHTTP(context.Background(), v2); return r.StatusCode }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			h, pub := newH2Handler(b)
			b.ReportAllocs()
			for b.Loop() {
				if status := bb.run(h); status != http.StatusAccepted {
					b.Fatalf("status %d", status)
				}
				pub.mu.Lock()
				pub.messages, pub.attrs = pub.messages[:0], pub.attrs[:0]
				pub.mu.Unlock()
			}
		})
	}
}
