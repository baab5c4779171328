package devstack

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// IngestFunc is the ingest Lambda's handler.
type IngestFunc func(ctx context.Context, req events.APIGatewayProxyRequest) (events.APIGatewayProxyResponse, error)

// maxGatewayBody is API Gateway's payload limit (10 MB).
const maxGatewayBody = 10 << 20

// Gateway serves POST /webhooks/{source} the way the deployed REST API does:
// a Lambda proxy integration with binary media type "*/*", so every body
// reaches the function base64-encoded, byte for byte. timeout is the ingest
// function's timeout.
func Gateway(fn IngestFunc, timeout time.Duration, log *slog.Logger) http.Handler {
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
		req := toProxyRequest(r, body)
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), timeout)
		defer cancel()
		ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: req.RequestContext.RequestID})
		resp, err := fn(ctx, req)
		if err != nil {
			log.Error("ingest function failed", "request_id", req.RequestContext.RequestID, "error", err)
			writeGatewayError(w, http.StatusBadGateway, "Internal server error")
			return
		}
		writeProxyResponse(w, resp)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		// API Gateway's answer for a route or method it does not have.
		writeGatewayError(w, http.StatusForbidden, "Missing Authentication Token")
	})
	return mux
}

func toProxyRequest(r *http.Request, body []byte) events.APIGatewayProxyRequest {
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
	ip, _, _ := net.SplitHostPort(r.RemoteAddr)
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	return events.APIGatewayProxyRequest{
		Resource:                        "/webhooks/{source}",
		Path:                            r.URL.Path,
		HTTPMethod:                      r.Method,
		Headers:                         headers,
		MultiValueHeaders:               multi,
		QueryStringParameters:           query,
		MultiValueQueryStringParameters: multiQuery,
		PathParameters:                  map[string]string{"source": r.PathValue("source")},
		RequestContext: events.APIGatewayProxyRequestContext{
			RequestID:        hex.EncodeToString(id),
			Stage:            "local",
			HTTPMethod:       r.Method,
			ResourcePath:     "/webhooks/{source}",
			Path:             r.URL.Path,
			RequestTimeEpoch: time.Now().UnixMilli(),
			Identity:         events.APIGatewayRequestIdentity{SourceIP: ip, UserAgent: r.UserAgent()},
		},
		Body:            base64.StdEncoding.EncodeToString(body),
		IsBase64Encoded: true,
	}
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
	body := []byte(resp.Body)
	if resp.IsBase64Encoded {
		if b, err := base64.StdEncoding.DecodeString(resp.Body); err == nil {
			body = b
		}
	}
	status := resp.StatusCode
	if status == 0 {
		status = http.StatusOK
	}
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func writeGatewayError(w http.ResponseWriter, status int, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = io.WriteString(w, `{"message":"`+strings.ReplaceAll(message, `"`, `'`)+`"}`)
}
