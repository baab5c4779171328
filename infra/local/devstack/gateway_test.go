package devstack

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

func post(t *testing.T, srv *httptest.Server, path, contentType string, body []byte, header http.Header) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestGatewayRoutes: the REST shape gives a configured source its own
// resource (no path parameter, as the deployed per-source method) and any
// other name the catch-all with its {source} parameter; every body
// arrives base64-encoded.
func TestGatewayRoutes(t *testing.T) {
	var got []events.APIGatewayProxyRequest
	fn := func(_ context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error) {
		got = append(got, req)
		return events.APIGatewayProxyResponse{StatusCode: 202, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"id":"x"}`}, nil
	}
	srv := httptest.NewServer(Gateway(fn, []string{"github"}, time.Second, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	body := []byte{'{', 0xff, '}'}
	if status, answer := post(t, srv, "/webhooks/github", "application/json", body, nil); status != 202 || answer != `{"id":"x"}` {
		t.Fatalf("github: %d %s", status, answer)
	}
	post(t, srv, "/webhooks/gitlab", "application/json", body, nil)
	if len(got) != 2 {
		t.Fatalf("function called %d times", len(got))
	}
	if got[0].Resource != "/webhooks/github" || got[0].PathParameters != nil || got[0].Path != "/webhooks/github" {
		t.Errorf("github: resource %q params %v path %q, want its own resource without parameters", got[0].Resource, got[0].PathParameters, got[0].Path)
	}
	if got[1].Resource != "/webhooks/{source}" || got[1].PathParameters["source"] != "gitlab" {
		t.Errorf("gitlab: resource %q params %v, want the catch-all", got[1].Resource, got[1].PathParameters)
	}
	for _, r := range got {
		if b, err := base64.StdEncoding.DecodeString(r.Body); !r.IsBase64Encoded || err != nil || string(b) != string(body) {
			t.Errorf("body %q (base64 %v), want the bytes base64-encoded", r.Body, r.IsBase64Encoded)
		}
	}
}

// TestHTTPGatewayShape: the HTTP API shape (payload 2.0): lowercased
// names, repeated values joined, cookies apart, the stage in rawPath, the
// route key per source, text bodies as text and the rest base64.
func TestHTTPGatewayShape(t *testing.T) {
	var got []events.APIGatewayV2HTTPRequest
	fn := func(_ context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
		got = append(got, req)
		return events.APIGatewayV2HTTPResponse{StatusCode: 404, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"error":{}}`, Cookies: []string{"a=1"}}, nil
	}
	srv := httptest.NewServer(HTTPGateway(fn, []string{"github", "shop"}, time.Second, slog.New(slog.DiscardHandler)))
	defer srv.Close()
	header := http.Header{"X-Hub-Signature-256": {"sha256=aa", "sha256=bb"}, "Cookie": {"c=1; d=2"}}
	json := []byte(`{"zen":"caf` + "\u00e9" + `"}`)
	binary := []byte{'{', 0xff, '}'}
	form := []byte("payload=%7B%7D")
	for _, tt := range []struct {
		path, contentType string
		body              []byte
		wantBase64        bool
		route             string
		params            map[string]string
	}{
		{"/webhooks/github", "application/json; charset=utf-8", json, false, "POST /webhooks/github", nil},
		{"/webhooks/github", "application/json", binary, true, "POST /webhooks/github", nil},
		{"/webhooks/shop", "application/x-www-form-urlencoded", form, true, "POST /webhooks/shop", nil},
		{"/webhooks/other", "text/plain", []byte("hi"), false, "POST /webhooks/{source}", map[string]string{"source": "other"}},
	} {
		got = nil
		status, answer := post(t, srv, tt.path, tt.contentType, tt.body, header)
		if status != 404 || answer != `{"error":{}}` || len(got) != 1 {
			t.Fatalf("%s: %d %s (%d calls)", tt.path, status, answer, len(got))
		}
		r := got[0]
		body := r.Body
		if r.IsBase64Encoded {
			b, err := base64.StdEncoding.DecodeString(r.Body)
			if err != nil {
				t.Fatal(err)
			}
			body = string(b)
		}
		if r.IsBase64Encoded != tt.wantBase64 || body != string(tt.body) {
			t.Errorf("%s %s: body %q base64 %v, want the bytes, base64 %v", tt.path, tt.contentType, r.Body, r.IsBase64Encoded, tt.wantBase64)
		}
		if r.RouteKey != tt.route || r.RequestContext.RouteKey != tt.route || !cmp.Equal(r.PathParameters, tt.params) {
			t.Errorf("%s: route %q params %v, want %q %v", tt.path, r.RouteKey, r.PathParameters, tt.route, tt.params)
		}
		if r.Version != "2.0" || r.RawPath != "/local"+tt.path || r.RequestContext.Stage != "local" || r.RequestContext.HTTP.Method != "POST" {
			t.Errorf("%s: version %q rawPath %q stage %q method %q", tt.path, r.Version, r.RawPath, r.RequestContext.Stage, r.RequestContext.HTTP.Method)
		}
		if r.Headers["x-hub-signature-256"] != "sha256=aa,sha256=bb" || r.Headers["content-type"] != tt.contentType {
			t.Errorf("%s: headers %v, want lowercased names and joined values", tt.path, r.Headers)
		}
		if _, ok := r.Headers["cookie"]; ok || !cmp.Equal(r.Cookies, []string{"c=1", "d=2"}) {
			t.Errorf("%s: cookies %v (header %q), want them apart", tt.path, r.Cookies, r.Headers["cookie"])
		}
	}
}
