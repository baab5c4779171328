package devstack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// IngestFunc is the ingest Lambda's handler behind a REST API.
type IngestFunc func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// HTTPIngestFunc is the ingest Lambda's handler behind an HTTP API.
type HTTPIngestFunc func(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error)

// maxGatewayBody is API Gateway's payload limit (10 MB).
const maxGatewayBody = 10 << 20

// localStage is the stage name in the events the gateways build.
const localStage = "local"

// Gateway serves POST /webhooks/{source} the way the deployed REST API does:
// a Lambda proxy integration (event version 1.0) with binary media type
// "*/*", so every body reaches the function base64-encoded, byte for byte.
// Each of sources has its own resource, /webhooks/<name>, whose events
// carry no path parameter (as the deployed API's per-source methods);
// any other name reaches /webhooks/{source}. timeout is the ingest
// function's timeout.
func Gateway(fn IngestFunc, sources []string, timeout time.Duration, log *slog.Logger) http.Handler {
	return gateway(sources, timeout, log, func(ctx context.Context, r *http.Request, body []byte, route string, requestID string) (http.HandlerFunc, error) {
		resp, err := fn(ctx, toProxyRequest(r, body, route, requestID))
		if err != nil {
			return nil, err
		}
		return func(w http.ResponseWriter, _ *http.Request) { writeProxyResponse(w, resp) }, nil
	})
}

// HTTPGateway serves POST /webhooks/{source} the way the deployed HTTP API
// does: a Lambda proxy integration with payload format 2.0 — header names
// lowercased and a repeated header's values joined with commas, cookies
// apart, the stage in rawPath, and the body as text when its content type
// is a text type and it is valid UTF-8, else base64-encoded. Routes are as
// Gateway's: one per source, the catch-all for any other name.
func HTTPGateway(fn HTTPIngestFunc, sources []string, timeout time.Duration, log *slog.Logger) http.Handler {
	return gateway(sources, timeout, log, func(ctx context.Context, r *http.Request, body []byte, route string, requestID string) (http.HandlerFunc, error) {
		resp, err := fn(ctx, toHTTPRequest(r, body, route, requestID))
		if err != nil {
			return nil, err
		}
		return func(w http.ResponseWriter, _ *http.Request) { writeHTTPResponse(w, resp) }, nil
	})
}

// invokeFunc calls the function with the request in its API's shape and
// returns how to write the answer.
type invokeFunc func(ctx context.Context, r *http.Request, body []byte, route, requestID string) (http.HandlerFunc, error)

func gateway(sources []string, timeout time.Duration, log *slog.Logger, invoke invokeFunc) http.Handler {
	known := map[string]bool{}
	for _, s := range sources {
		known[s] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /webhooks/{source}", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxGatewayBody))
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				writeGatewayError(w, http.StatusRequestEntityTooLarge, "Request Too Long")
				return
			}
			writeGatewayError(w, http.StatusBadRequest, "Bad Request")
			return
		}
		route := "/webhooks/{source}"
		if known[r.PathValue("source")] {
			route = "/webhooks/" + r.PathValue("source")
		}
		id := make([]byte, 16)
		_, _ = rand.Read(id)
		requestID := hex.EncodeToString(id)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
		defer cancel()
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID})
		write, err := invoke(ctx, r, body, route, requestID)
		if err != nil {
			log.Error("ingest function failed", "request_id", requestID, "error", err)
			writeGatewayError(w, http.StatusBadGateway, "Internal server error")
			return
		}
		write(w, r)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// API Gateway's answer for a route or method it does not have.
		writeGatewayError(w, http.StatusForbidden, "Missing Authentication Token")
	})
	return mux
}

func toProxyRequest(r *http.Request, body []byte, route, requestID string) events.APIGatewayProxyRequest {
	headers := map[string]string{}
	multi := map[string][]string{}
	for name, values := range r.Header {
		headers[name] = values[len(values)-1]
		multi[name] = values
	}
	if r.Host != "" {
		headers["Host"] = r.Host
		multi["Host"] = []string{r.Host}
	}
	query := map[string]string{}
	multiQuery := map[string][]string{}
	for k, v := range r.URL.Query() {
		query[k] = v[len(v)-1]
		multiQuery[k] = v
	}
	var params map[string]string
	if route == "/webhooks/{source}" {
		params = map[string]string{"source": r.PathValue("source")}
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	return events.APIGatewayProxyRequest{
		Resource:                        route,
		Path:                            r.URL.Path,
		HTTPMethod:                      r.Method,
		Headers:                         headers,
		MultiValueHeaders:               multi,
		QueryStringParameters:           query,
		MultiValueQueryStringParameters: multiQuery,
		PathParameters:                  params,
		RequestContext: events.APIGatewayProxyRequestContext{
			RequestID:        requestID,
			Stage:            localStage,
			HTTPMethod:       r.Method,
			ResourcePath:     route,
			Path:             "/" + localStage + r.URL.Path,
			RequestTimeEpoch: time.Now().UnixMilli(),
			Identity:         events.APIGatewayRequestIdentity{SourceIP: ip, UserAgent: r.UserAgent()},
		},
		Body:            base64.StdEncoding.EncodeToString(body),
		IsBase64Encoded: true,
	}
}

// toHTTPRequest builds the payload 2.0 event of an HTTP API route.
func toHTTPRequest(r *http.Request, body []byte, route, requestID string) events.APIGatewayV2HTTPRequest {
	headers := map[string]string{}
	var cookies []string
	for name, values := range r.Header {
		lower := strings.ToLower(name)
		if lower == "cookie" {
			for _, v := range values {
				for c := range strings.SplitSeq(v, ";") {
					if c = strings.TrimSpace(c); c != "" {
						cookies = append(cookies, c)
					}
				}
			}
			continue
		}
		if prev, ok := headers[lower]; ok {
			headers[lower] = prev + "," + strings.Join(values, ",")
		} else {
			headers[lower] = strings.Join(values, ",")
		}
	}
	if r.Host != "" {
		headers["host"] = r.Host
	}
	query := map[string]string{}
	for k, v := range r.URL.Query() {
		query[k] = strings.Join(v, ",")
	}
	var params map[string]string
	if route == "/webhooks/{source}" {
		params = map[string]string{"source": r.PathValue("source")}
	}
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	now := time.Now()
	rawPath := "/" + localStage + r.URL.Path
	req := events.APIGatewayV2HTTPRequest{
		Version:               "2.0",
		RouteKey:              r.Method + " " + route,
		RawPath:               rawPath,
		RawQueryString:        r.URL.RawQuery,
		Cookies:               cookies,
		Headers:               headers,
		QueryStringParameters: query,
		PathParameters:        params,
		RequestContext: events.APIGatewayV2HTTPRequestContext{
			RouteKey:  r.Method + " " + route,
			Stage:     localStage,
			RequestID: requestID,
			Time:      now.UTC().Format("02/Jan/2006:15:04:05 -0700"),
			TimeEpoch: now.UnixMilli(),
			HTTP: events.APIGatewayV2HTTPRequestContextHTTPDescription{
				Method: r.Method, Path: rawPath, Protocol: r.Proto, SourceIP: ip, UserAgent: r.UserAgent(),
			},
		},
	}
	if textBody(r.Header.Get("Content-Type"), body) {
		req.Body = string(body)
	} else {
		req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
	}
	return req
}

// textBody reports whether an HTTP API hands the body over as text: a
// text content type, and bytes that a JSON string can carry unchanged.
func textBody(contentType string, body []byte) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || !utf8.Valid(body) {
		return false
	}
	switch {
	case strings.HasPrefix(mt, "text/"),
		mt == "application/json", strings.HasSuffix(mt, "+json"),
		mt == "application/xml", strings.HasSuffix(mt, "+xml"),
		mt == "application/javascript":
		return true
	}
	return false
}

func writeHTTPResponse(w http.ResponseWriter, resp events.APIGatewayV2HTTPResponse) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for _, c := range resp.Cookies {
		w.Header().Add("Set-Cookie", c)
	}
	writeBody(w, resp.StatusCode, resp.Body, resp.IsBase64Encoded)
}

func writeProxyResponse(w http.ResponseWriter, resp events.APIGatewayProxyResponse) {
	for k, v := range resp.Headers {
		w.Header().Set(k, v)
	}
	for k, vs := range resp.MultiValueHeaders {
		w.Header().Del(k)
		for _, v := range vs {
			w.Header().Add(k, v)
		}
	}
	writeBody(w, resp.StatusCode, resp.Body, resp.IsBase64Encoded)
}

// writeBody answers with a function's status (200 when it set none) and
// body, decoded when the function base64-encoded it, as API Gateway does.
func writeBody(w http.ResponseWriter, status int, body string, isBase64 bool) {
	out := []byte(body)
	if isBase64 {
		if b, err := base64.StdEncoding.DecodeString(body); err == nil {
			out = b
		}
	}
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

func writeGatewayError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"message":"`+strings.ReplaceAll(message, `"`, `'`)+`"}`)
}
