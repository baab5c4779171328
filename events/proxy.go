package events

import (
	"net/http"

	lambdaevents "github.com/aws/aws-lambda-go/events"
)

// ProxyRequest builds the API Gateway REST proxy event that a POST of body
// with header h to /webhooks/{source} produces: both the single-value and
// the multi-value header maps, keyed as the header was spelled.
func ProxyRequest(source string, h http.Header, body []byte) lambdaevents.APIGatewayProxyRequest {
	single := make(map[string]string, len(h))
	multi := make(map[string][]string, len(h))
	for k, vs := range h {
		if len(vs) == 0 {
			continue
		}
		single[k] = vs[len(vs)-1] // API Gateway keeps the last value in headers
		multi[k] = append([]string(nil), vs...)
	}
	return lambdaevents.APIGatewayProxyRequest{
		Resource:          "/webhooks/{source}",
		Path:              "/webhooks/" + source,
		HTTPMethod:        http.MethodPost,
		Headers:           single,
		MultiValueHeaders: multi,
		PathParameters:    map[string]string{"source": source},
		RequestContext: lambdaevents.APIGatewayProxyRequestContext{
			RequestID:  "local-" + source,
			Stage:      "prod",
			HTTPMethod: http.MethodPost,
			Path:       "/prod/webhooks/" + source,
		},
		Body: string(body),
	}
}
