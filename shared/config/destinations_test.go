package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// destinationsConfig has one destination per filter shape and one source
// whose maxBodyBytes is large when large is set.
func destinationsConfig(t *testing.T, large bool) *Config {
	t.Helper()
	limit := ""
	if large {
		limit = `, "maxBodyBytes": 1000000`
	}
	c, err := Parse([]byte(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}` + limit + `}],
	  "destinations": [
	    {"name": "all", "url": "https://a.example.com"},
	    {"name": "types", "url": "https://a.example.com", "filter": {"types": ["invoice.*"]}},
	    {"name": "strings", "url": "https://a.example.com", "filter": {"body": {"data": {"object": {"status": ["paid"], "id": [{"prefix": "in_"}]}}}}},
	    {"name": "numbers", "url": "https://a.example.com", "filter": {"body": {"amount": [{"numeric": [">", 100]}]}}},
	    {"name": "exists", "url": "https://a.example.com", "filter": {"body": {"refund": [{"exists": true}]}}},
	    {"name": "anything-but", "url": "https://a.example.com", "filter": {"body": {"currency": [{"anything-but": ["usd"]}]}}},
	    {"name": "both", "url": "https://a.example.com", "filter": {"sources": ["stripe"], "body": {"status": ["paid"]}},
	     "headers": [{"name": "Authorization", "secretName": "hookfan/dest/both/token"}, {"name": "X-Tenant", "value": "acme"},
	                 {"name": "X-Other", "secretName": "hookfan/dest/both/token"}]}
	  ]
	}`))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSubscriptionFilter(t *testing.T) {
	type got struct{ Policy, Scope string }
	want := map[string]got{
		"all":     {"", ""},
		"types":   {`{"type":[{"prefix":"invoice."}]}`, ScopeAttributes},
		"strings": {`{"data":{"object":{"status":["paid"],"id":[{"prefix":"in_"}]}}}`, ScopeBody},
		// Numbers mean slightly different things to SNS (five decimal
		// places): the deliver function alone filters.
		"numbers": {"", ""},
		// SNS drops {"refund": null} or "" (no value, its Key matching
		// page): the function alone judges exists, so an event it
		// accepts can never vanish before the queue.
		"exists": {"", ""},
		// SNS's page on anything-but says both that an array matches
		// when no element is listed and that ["usd", "gbp"] matches.
		"anything-but": {"", ""},
		// One scope per policy: source and type at SNS, the body in the
		// deliver function.
		"both": {`{"source":["stripe"]}`, ScopeAttributes},
	}
	c := destinationsConfig(t, false)
	for _, d := range c.Destinations {
		p, s := c.SubscriptionFilter(d)
		if diff := cmp.Diff(want[d.Name], got{p, s}); diff != "" {
			t.Errorf("%s (-want +got):\n%s", d.Name, diff)
		}
	}
	// With large payloads, a message may be a reference to S3 whose JSON
	// SNS would read instead of the event's: no body scope.
	large := destinationsConfig(t, true)
	d, _ := large.Destination("strings")
	if p, s := large.SubscriptionFilter(d); p != "" || s != "" {
		t.Errorf("strings with large payloads: %q %q, want no SNS filter", p, s)
	}
}

func TestLargePayloads(t *testing.T) {
	if c := destinationsConfig(t, false); c.LargePayloads() {
		t.Error("LargePayloads with every source at the default limit")
	}
	c := destinationsConfig(t, true)
	if !c.LargePayloads() {
		t.Error("no LargePayloads with a source taking 4,000,000 bytes")
	}
	// The DLQ's 14 days (counted from the first enqueue), then a whole
	// queue retention after a redrive at their last moment (≈ 40 h by
	// default), rounded up to days, + 1: 17. The archive's days are not
	// added: a replay writes the body again (from the archive's own copy).
	if got := c.PayloadExpirationDays(); got != 17 {
		t.Errorf("PayloadExpirationDays = %d, want 17 with the default schedule", got)
	}
	off := 0
	c.Archive.Days = &off
	if got := c.PayloadExpirationDays(); got != 17 {
		t.Errorf("PayloadExpirationDays without the archive = %d, want 17", got)
	}
	// A lane kept longer (a pause reserve) lengthens it by its retention.
	c.Destinations[0].Pause = &Pause{}
	want := int(roundUp(DLQRetention+c.Destinations[0].Retention(), 24*time.Hour)/(24*time.Hour)) + 1
	if got := c.PayloadExpirationDays(); got != want || got <= 17 {
		t.Errorf("PayloadExpirationDays with a pausing lane = %d, want %d", got, want)
	}
	if MaxBodyBytesREST != 4521984 || MaxBodyBytesHTTP != 1004885 {
		t.Errorf("ceilings %d, %d; want 4521984 (REST) and 1004885 (HTTP)", MaxBodyBytesREST, MaxBodyBytesHTTP)
	}
	// The REST ceiling's base64 plus the reserve fits Lambda's payload.
	if b64 := (MaxBodyBytesREST + 2) / 3 * 4; b64+LambdaEventReserveBytes > MaxLambdaPayloadBytes {
		t.Errorf("base64 of the REST ceiling (%d) plus the reserve exceeds %d", b64, MaxLambdaPayloadBytes)
	}
}

func TestHeadersRoundTripAndSecrets(t *testing.T) {
	c := destinationsConfig(t, false)
	d, _ := c.Destination("both")
	got, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(d))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, got); diff != "" {
		t.Errorf("round trip (-config +env):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hookfan/dest/both/token"}, d.HeaderSecrets()); diff != "" {
		t.Errorf("HeaderSecrets (-want +got):\n%s", diff)
	}
	// The body filter reads back compacted, whatever the config's spacing.
	if want := `{"status":["paid"]}`; string(d.Filter.Body) != want {
		t.Errorf("body filter %s, want %s", d.Filter.Body, want)
	}
}

func TestCheckHeaderValue(t *testing.T) {
	ok := []string{"Bearer abc.def-ghi", "a\tb", "ünïcode", strings.Repeat("x", MaxHeaderValueBytes)}
	for _, v := range ok {
		if err := CheckHeaderValue(v); err != nil {
			t.Errorf("CheckHeaderValue(%q) = %v", v, err)
		}
	}
	bad := map[string]string{
		"":       "is empty",
		"a\nb":   "holds a control character (byte 1, 0x0a); a header value may hold none but tab",
		"a\x00":  "holds a control character (byte 1, 0x00); a header value may hold none but tab",
		"a\x7f":  "holds a control character (byte 1, 0x7f); a header value may hold none but tab",
		" token": "starts or ends with white space, which HTTP drops; remove it",
		strings.Repeat("x", 1+MaxHeaderValueBytes): "is 8193 bytes; use at most 8192",
	}
	for v, want := range bad {
		err := CheckHeaderValue(v)
		if err == nil || err.Error() != want {
			t.Errorf("CheckHeaderValue(%.20q) = %v, want %q", v, err, want)
		}
	}
}

// TestOperatorPrincipals: operators.principals takes IAM root, role and
// user ARNs, each once; anything else is refused naming the entry and the
// forms that work.
func TestOperatorPrincipals(t *testing.T) {
	c := destinationsConfig(t, false)
	c.Operators.Principals = []string{"arn:aws:iam::123456789012:root", "arn:aws:iam::123456789012:role/ops/Oncall", "arn:aws-us-gov:iam::123456789012:user/alice"}
	if err := c.Validate(); err != nil {
		t.Fatalf("good principals refused: %v", err)
	}
	for _, bad := range []string{"arn:aws:iam::12345678901:root", "arn:aws:sts::123456789012:assumed-role/x/y", "arn:aws:iam::123456789012:role/", "arn:aws-:iam::123456789012:root",
		"arn:aws:iam:eu-west-1:123456789012:root", "arn:aws:iam::123456789012:role/a b"} {
		c.Operators.Principals = []string{bad}
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "is not an IAM principal ARN") {
			t.Errorf("%q: %v, want it refused", bad, err)
		}
	}
	c.Operators.Principals = []string{"123456789012", "arn:aws:iam::123456789012:group/ops", "arn:aws:iam::123456789012:root", "arn:aws:iam::123456789012:root"}
	err := c.Validate()
	for _, want := range []string{
		`operators.principals[0]: "123456789012" is not an IAM principal ARN; use arn:aws:iam::<account id>:root`,
		`operators.principals[1]: "arn:aws:iam::123456789012:group/ops" is not an IAM principal ARN`,
		`operators.principals[3]: "arn:aws:iam::123456789012:root" is listed twice`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v\nwant it to say %q", err, want)
		}
	}
}
