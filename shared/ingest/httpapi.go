package ingest

import (
	"context"
	"strings"

	"github.com/aws/aws-lambda-go/events"
)

// HandleHTTP answers one API Gateway HTTP API request (payload format 2.0)
// with the same contract as Handle: the request is read as the REST proxy
// event it corresponds to, and the answer is given back in the 2.0 shape.
// The error is always nil.
//
// What differs between the two shapes, and how it is carried over:
//   - Header names arrive lowercased and a repeated header's values joined
//     with commas. They are kept as one value each: splitting at commas
//     would break values that hold commas themselves (Stripe-Signature).
//   - Cookies arrive apart from the headers; they are put back as one
//     Cookie header, joined with "; ".
//   - The source is the route's {source} path parameter, or the last
//     segment of a per-source route key such as "POST /webhooks/github".
//   - The body is handed over as received, with its isBase64Encoded flag:
//     an HTTP API base64-encodes every body whose content type it does not
//     take for text, and Handle decodes it back to the exact bytes.
func (h *Handler) HandleHTTP(ctx context.Context, req events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error) {
	resp, err := h.Handle(ctx, proxyFromHTTP(&req))
	return httpFromProxy(&resp), err
}

// proxyFromHTTP converts a payload 2.0 request to the REST proxy event.
func proxyFromHTTP(req *events.APIGatewayV2HTTPRequest) events.APIGatewayProxyRequest {
	headers := req.Headers
	if len(req.Cookies) > 0 {
		headers = make(map[string]string, len(req.Headers)+1)
		for k, v := range req.Headers {
			headers[k] = v
		}
		headers["cookie"] = strings.Join(req.Cookies, "; ")
	}
	route := routePath(req.RouteKey)
	var params map[string]string
	if s, ok := httpSource(req, route); ok {
		params = map[string]string{"source": s}
	}
	rc := &req.RequestContext
	return events.APIGatewayProxyRequest{
		Resource:              route,
		Path:                  stagelessPath(req.RawPath, rc.Stage),
		HTTPMethod:            rc.HTTP.Method,
		Headers:               headers,
		QueryStringParameters: req.QueryStringParameters,
		PathParameters:        params,
		StageVariables:        req.StageVariables,
		RequestContext: events.APIGatewayProxyRequestContext{
			AccountID:        rc.AccountID,
			ResourcePath:     route,
			Stage:            rc.Stage,
			DomainName:       rc.DomainName,
			DomainPrefix:     rc.DomainPrefix,
			RequestID:        rc.RequestID,
			Protocol:         rc.HTTP.Protocol,
			Identity:         events.APIGatewayRequestIdentity{SourceIP: rc.HTTP.SourceIP, UserAgent: rc.HTTP.UserAgent},
			Path:             req.RawPath,
			HTTPMethod:       rc.HTTP.Method,
			RequestTime:      rc.Time,
			RequestTimeEpoch: rc.TimeEpoch,
			APIID:            rc.APIID,
		},
		Body:            req.Body,
		IsBase64Encoded: req.IsBase64Encoded,
	}
}

// routePath is the path of a route key ("POST /webhooks/{source}" →
// "/webhooks/{source}"); "" for $default.
func routePath(key string) string {
	_, path, ok := strings.Cut(key, " ")
	if !ok {
		return ""
	}
	return path
}

// httpSource is the request's source name: the {source} path parameter of
// the catch-all route, or the fixed last segment of a per-source route.
func httpSource(req *events.APIGatewayV2HTTPRequest, route string) (string, bool) {
	if s, ok := req.PathParameters["source"]; ok {
		return s, true
	}
	s, ok := strings.CutPrefix(route, "/webhooks/")
	if !ok || s == "" || strings.ContainsAny(s, "/{}") {
		return "", false
	}
	return s, true
}

// stagelessPath is the request path without the stage's prefix, as the
// REST proxy event's path has it. The $default stage has no prefix.
func stagelessPath(raw, stage string) string {
	if stage == "" || stage == "$default" {
		return raw
	}
	if rest, ok := strings.CutPrefix(raw, "/"+stage); ok && strings.HasPrefix(rest, "/") {
		return rest
	}
	return raw
}

// httpFromProxy converts the REST proxy answer to the payload 2.0 answer:
// multi-value headers are joined with commas, Set-Cookie values become
// cookies.
func httpFromProxy(resp *events.APIGatewayProxyResponse) events.APIGatewayV2HTTPResponse {
	out := events.APIGatewayV2HTTPResponse{
		StatusCode:      resp.StatusCode,
		Headers:         resp.Headers,
		Body:            resp.Body,
		IsBase64Encoded: resp.IsBase64Encoded,
	}
	if len(resp.MultiValueHeaders) == 0 {
		return out
	}
	out.Headers = make(map[string]string, len(resp.Headers)+len(resp.MultiValueHeaders))
	for k, v := range resp.Headers {
		out.Headers[k] = v
	}
	for k, vs := range resp.MultiValueHeaders {
		if strings.EqualFold(k, "Set-Cookie") {
			out.Cookies = append(out.Cookies, vs...)
			continue
		}
		out.Headers[k] = strings.Join(vs, ",")
	}
	return out
}
