package stack

import (
	"maps"
	"regexp"
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
)

// TestCostAccessLogFigures fills each stage's access log format with the
// values of an accepted Stripe delivery (API Gateway writes "-" for an
// empty variable) and holds the cost model's AccessLogBytes (the HTTP API)
// and RESTAccessLogBytes to them: never below the line (the bill would be
// understated) and within a fifth above. A field added to a format fails
// here until the model prices it.
func TestCostAccessLogFigures(t *testing.T) {
	common := map[string]string{
		"requestTime": "02/Dec/2026:03:20:27 +0000", "identity.sourceIp": "54.187.174.169",
		"identity.userAgent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)", "httpMethod": "POST", "path": "/webhooks/stripe",
		"status": "202", "responseLength": "34", "responseLatency": "41", "error.message": "-",
	}
	with := func(more map[string]string) map[string]string {
		out := maps.Clone(common)
		maps.Copy(out, more)
		return out
	}
	t.Run("http", func(t *testing.T) {
		checkAccessLog(t, httpAccessLogFormat, cost.Assumed.AccessLogBytes, "AccessLogBytes", with(map[string]string{
			"requestId": "fD3kxhmVIAMEbnQ=", "routeKey": "POST /webhooks/stripe",
			"integrationStatus": "200", "integrationLatency": "38", "integrationErrorMessage": "-",
		}))
	})
	t.Run("rest", func(t *testing.T) {
		checkAccessLog(t, accessLogFormat, cost.Assumed.RESTAccessLogBytes, "RESTAccessLogBytes", with(map[string]string{
			"requestId": "c6af9ac6-7b61-11e6-9a41-93e8deadbeef", "resourcePath": "/webhooks/stripe",
			"integration.status": "200", "integration.latency": "38", "xrayTraceId": "-",
		}))
	})
}

func checkAccessLog(t *testing.T, format string, fig cost.Figure, name string, typical map[string]string) {
	vars := regexp.MustCompile(`\$context\.([A-Za-z.]+)`)
	var missing []string
	line := vars.ReplaceAllStringFunc(format, func(v string) string {
		name := v[len("$context."):]
		value, ok := typical[name]
		if !ok {
			missing = append(missing, name)
		}
		return value
	})
	if len(missing) > 0 {
		t.Fatalf("no typical value for %v: add one", missing)
	}
	n := len(line) + 1 // and its newline
	t.Logf("access log line: %d bytes, the model says %v: %s", n, fig.Value, line)
	if err := fig.Covers(n); err != nil {
		t.Errorf("cost.Assumed.%s: %v", name, err)
	}
}
