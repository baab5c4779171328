package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/provider"
)

// base is a valid configuration; each invalid case edits one part of it.
const base = `{
  "sources": [
    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}},
    {"name": "github", "verify": {"kind": "github", "secretName": "hookfan/sources/github"}}
  ],
  "destinations": [
    {"name": "orders", "url": "https://orders.example.com/hooks",
     "filter": {"sources": ["stripe"], "types": ["payment_intent.*", "charge.refunded"]}}
  ]
}`

func TestParseInvalid(t *testing.T) {
	src := func(s string) string {
		return `{"sources": [` + s + `], "destinations": []}`
	}
	dst := func(d string) string {
		return `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}], "destinations": [` + d + `]}`
	}
	tests := []struct {
		name string
		json string
		want []string // every line of the joined error, in order
	}{
		{
			name: "empty document",
			json: ``,
			want: []string{"decode config: empty document; want a JSON object"},
		},
		{
			name: "unknown top-level field",
			json: `{"sources": [], "destination": []}`,
			want: []string{`destination: unknown field; did you mean destinations?`},
		},
		{
			name: "unknown nested field",
			json: dst(`{"name": "a", "url": "https://a.example.com", "timeout": 5}`),
			want: []string{`destinations[0].timeout: unknown field; did you mean timeoutSeconds?`},
		},
		{
			name: "wrong JSON type",
			json: dst(`{"name": "a", "url": "https://a.example.com", "timeoutSeconds": "5"}`),
			want: []string{`destinations[0].timeoutSeconds: "5" is a string; want a whole number`},
		},
		{
			name: "no sources",
			json: `{"sources": []}`,
			want: []string{`sources: no sources; add at least one, e.g. {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}}`},
		},
		{
			name: "bad source name",
			json: src(`{"name": "Stripe_Live", "verify": {"kind": "stripe", "secretName": "s"}}`),
			want: []string{`sources[0].name: "Stripe_Live" is not a valid source name; use 1 to 64 lowercase letters, digits or hyphens`},
		},
		{
			name: "source name too long",
			json: src(`{"name": "` + strings.Repeat("a", 65) + `", "verify": {"kind": "stripe", "secretName": "s"}}`),
			want: []string{`sources[0].name: "` + strings.Repeat("a", 65) + `" is not a valid source name; use 1 to 64 lowercase letters, digits or hyphens`},
		},
		{
			name: "duplicate source names",
			json: src(`{"name": "gh", "verify": {"kind": "github", "secretName": "a"}}, {"name": "gh", "verify": {"kind": "github", "secretName": "b"}}`),
			want: []string{`sources[1].name: duplicate source name "gh" (also used by sources[0]); give each source a unique name`},
		},
		{
			name: "unknown verification kind",
			json: src(`{"name": "x", "verify": {"kind": "paypal", "secretName": "s"}}`),
			want: []string{`sources[0].verify.kind: unknown verification kind "paypal"; use one of stripe, github, shopify, slack, standard-webhooks, hmac, token`},
		},
		{
			name: "missing secret name",
			json: src(`{"name": "x", "verify": {"kind": "shopify"}}`),
			want: []string{`sources[0].verify.secretName: missing; every source needs the name of the Secrets Manager secret that holds its signing secret or token`},
		},
		{
			name: "bad secret name",
			json: src(`{"name": "x", "verify": {"kind": "shopify", "secretName": "my secret!"}}`),
			want: []string{`sources[0].verify.secretName: "my secret!" is not a valid Secrets Manager name or ARN; use letters, digits and /_+=.@- (at most 512)`},
		},
		{
			name: "tolerance on an untimestamped kind",
			json: src(`{"name": "x", "verify": {"kind": "github", "secretName": "s", "toleranceSeconds": 60}}`),
			want: []string{`sources[0].verify.toleranceSeconds: set for kind "github", which carries no timestamp; remove it (it applies to stripe, slack and standard-webhooks)`},
		},
		{
			name: "tolerance out of range",
			json: src(`{"name": "x", "verify": {"kind": "slack", "secretName": "s", "toleranceSeconds": 7200}}`),
			want: []string{`sources[0].verify.toleranceSeconds: 7200 is out of range; use 1 to 3600 seconds (default 300)`},
		},
		{
			name: "hmac without header and with a bad algorithm",
			json: src(`{"name": "x", "verify": {"kind": "hmac", "secretName": "s", "algorithm": "md5", "encoding": "base32"}}`),
			want: []string{
				`sources[0].verify.header: missing; kind "hmac" needs the name of the request header that carries the signature`,
				`sources[0].verify.algorithm: "md5" is not supported; use one of sha256, sha1, sha512`,
				`sources[0].verify.encoding: "base32" is not supported; use one of hex, base64`,
			},
		},
		{
			name: "hmac options on a provider kind",
			json: src(`{"name": "x", "verify": {"kind": "stripe", "secretName": "s", "header": "X-Sig", "prefix": "sha256="}}`),
			want: []string{
				`sources[0].verify.header: set for kind "stripe", whose header is fixed; remove it (it applies to hmac and token)`,
				`sources[0].verify.prefix: set for kind "stripe"; remove it (it applies to hmac only)`,
			},
		},
		{
			name: "token without header",
			json: src(`{"name": "x", "verify": {"kind": "token", "secretName": "s"}}`),
			want: []string{`sources[0].verify.header: missing; kind "token" needs the name of the request header that carries the token`},
		},
		{
			name: "body limit above what the REST API hands to Lambda",
			json: `{"api": {"type": "rest"}, "sources": [{"name": "x", "verify": {"kind": "github", "secretName": "s"}, "maxBodyBytes": 4521985}], "destinations": []}`,
			want: []string{`sources[0].maxBodyBytes: 4521985 is out of range; use 1 to 4521984 (the largest body an API Gateway rest API hands to Lambda within its 6 MB payload; bodies over 260096 travel through S3), or omit it for 260096 (one SNS message)`},
		},
		{
			name: "body limit above what the HTTP API hands to Lambda",
			json: `{"api": {"type": "http"}, "sources": [{"name": "x", "verify": {"kind": "github", "secretName": "s"}, "maxBodyBytes": 2097152}], "destinations": []}`,
			want: []string{`sources[0].maxBodyBytes: 2097152 is out of range; use 1 to 1004885 (the largest body an API Gateway http API hands to Lambda within its 6 MB payload; bodies over 260096 travel through S3), or omit it for 260096 (one SNS message)`},
		},
		{
			name: "headers: names reserved, invalid, repeated; values and secrets",
			json: dst(`{"name": "a", "url": "https://a.example.com", "headers": [
				{"name": "Authorization", "secretName": "hookfan/dest/a/token"},
				{"name": "authorization", "value": "Bearer x"},
				{"name": "Host", "value": "evil.example.com"},
				{"name": "Transfer-Encoding", "value": "chunked"},
				{"name": "webhook-signature", "value": "v1,forged"},
				{"name": "Svix-Id", "value": "x"},
				{"name": "Hookfan-Attempt", "value": "1"},
				{"name": "Content-Type", "value": "text/plain"},
				{"name": "X Api Key", "value": "k"},
				{"name": "X-Split", "value": "a\r\nInjected: yes"},
				{"name": "X-Both", "value": "a", "secretName": "b"},
				{"name": "X-None"},
				{"name": "X-Secret", "secretName": "not a secret name"},
				{"name": "", "value": "x"}
			]}`),
			want: []string{
				`destinations[0].headers[1].name: "authorization" is already set by destinations[0].headers[0] (header names ignore case); set each header once`,
				`destinations[0].headers[1].value: is a static value for "authorization", a credential's header (its name has "authorization"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[2].name: "Host" cannot be set: set from the destination's url`,
				`destinations[0].headers[3].name: "Transfer-Encoding" cannot be set: a framing header the HTTP client manages`,
				`destinations[0].headers[4].name: "webhook-signature" cannot be set: names starting with webhook-, svix-, hookfan- are the signature's and Hookfan's own headers`,
				`destinations[0].headers[5].name: "Svix-Id" cannot be set: names starting with webhook-, svix-, hookfan- are the signature's and Hookfan's own headers`,
				`destinations[0].headers[6].name: "Hookfan-Attempt" cannot be set: names starting with webhook-, svix-, hookfan- are the signature's and Hookfan's own headers`,
				`destinations[0].headers[7].name: "Content-Type" cannot be set: every delivery carries the provider's own`,
				"destinations[0].headers[8].name: \"X Api Key\" is not a valid HTTP header name; use 1 to 128 letters, digits or !#$%&'*+.^_`|~-",
				`destinations[0].headers[9].value: holds a control character (byte 1, 0x0d); a header value may hold none but tab`,
				`destinations[0].headers[10]: has both value and secretName; keep one`,
				`destinations[0].headers[11]: has neither value nor secretName; set one (secretName for credentials)`,
				`destinations[0].headers[12].secretName: "not a secret name" is not a valid Secrets Manager name or ARN; use letters, digits and /_+=.@- (at most 512)`,
				`destinations[0].headers[13].name: missing; name the header, such as Authorization or X-Api-Key`,
			},
		},
		{
			name: "body filter problems name the destination's field",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"sources": ["stripe"], "body": {"data": {"amount": [{"numeric": [">", 1e10]}], "currency": "usd"}}}}`),
			want: []string{
				`destinations[0].filter.body.data.amount[0]: 1e10 is out of range; SNS compares numbers from -1e9 to 1e9`,
				`destinations[0].filter.body.data.currency: is the string "usd"; want a list of conditions, such as ["paid"] or [{"prefix": "pi_"}], or an object of nested keys`,
			},
		},
		{
			name: "body filter not an object",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"body": ["paid"]}}`),
			want: []string{`destinations[0].filter.body: want a JSON object of keys and conditions, such as {"data": {"object": {"amount": [{"numeric": [">=", 1000]}]}}}`},
		},
		{
			name: "event fields on a provider kind",
			json: src(`{"name": "x", "verify": {"kind": "github", "secretName": "s"}, "event": {"idHeader": "X-Id"}}`),
			want: []string{`sources[0].event: set for kind "github", whose event id and type come from the provider's own headers or body; remove it (it applies to hmac and token)`},
		},
		{
			name: "event id from header and field",
			json: src(`{"name": "x", "verify": {"kind": "hmac", "secretName": "s", "header": "X-Sig"}, "event": {"idHeader": "X-Id", "idField": "data..id"}}`),
			want: []string{
				`sources[0].event: both idHeader and idField are set; keep one`,
				`sources[0].event.idField: "data..id" is not a valid JSON field path; use dot-separated names such as "data.id"`,
			},
		},
		{
			name: "bad destination name",
			json: dst(`{"name": "Orders!", "url": "https://a.example.com"}`),
			want: []string{`destinations[0].name: "Orders!" is not a valid destination name; use 1 to 64 lowercase letters, digits or hyphens`},
		},
		{
			name: "duplicate destination names",
			json: dst(`{"name": "a", "url": "https://a.example.com"}, {"name": "a", "url": "https://b.example.com"}`),
			want: []string{`destinations[1].name: duplicate destination name "a" (also used by destinations[0]); give each destination a unique name`},
		},
		{
			name: "http URL",
			json: dst(`{"name": "a", "url": "http://a.example.com/hooks"}`),
			want: []string{`destinations[0].url: "http://a.example.com/hooks" uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)`},
		},
		{
			name: "relative URL",
			json: dst(`{"name": "a", "url": "/hooks"}`),
			want: []string{`destinations[0].url: "/hooks" is not an absolute URL; use https://host/path (or urlSecretName, a secret holding it)`},
		},
		{
			name: "private IPv4 host",
			json: dst(`{"name": "a", "url": "https://10.1.2.3/hooks"}`),
			want: []string{`destinations[0].url: host 10.1.2.3 is a private-use address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "loopback IPv4 host",
			json: dst(`{"name": "a", "url": "https://127.0.0.1:8443/hooks"}`),
			want: []string{`destinations[0].url: host 127.0.0.1 is a loopback address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "link-local metadata host",
			json: dst(`{"name": "a", "url": "https://169.254.169.254/latest/meta-data"}`),
			want: []string{`destinations[0].url: host 169.254.169.254 is a link-local address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "IPv4-mapped IPv6 loopback host",
			json: dst(`{"name": "a", "url": "https://[::ffff:127.0.0.1]/hooks"}`),
			want: []string{`destinations[0].url: host ::ffff:127.0.0.1 embeds 127.0.0.1, a loopback address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "IPv4-compatible IPv6 loopback host",
			json: dst(`{"name": "a", "url": "https://[::127.0.0.1]/"}`),
			want: []string{`destinations[0].url: host ::7f00:1 embeds 127.0.0.1, a loopback address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "6to4 host carrying the metadata service",
			json: dst(`{"name": "a", "url": "https://[2002:a9fe:a9fe::]/"}`),
			want: []string{`destinations[0].url: host 2002:a9fe:a9fe:: embeds 169.254.169.254, a link-local address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "Teredo host",
			json: dst(`{"name": "a", "url": "https://[2001::1]/"}`),
			want: []string{`destinations[0].url: host 2001::1 is a Teredo address; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "localhost with the final dot",
			json: dst(`{"name": "a", "url": "https://localhost./"}`),
			want: []string{`destinations[0].url: host "localhost." is a loopback name; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "decimal IPv4 host",
			json: dst(`{"name": "a", "url": "https://2130706433/"}`),
			want: []string{`destinations[0].url: host "2130706433" is an IPv4 address in a numeric form other than dotted decimal; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "localhost by name",
			json: dst(`{"name": "a", "url": "https://localhost/hooks"}`),
			want: []string{`destinations[0].url: host "localhost" is a loopback name; use a public host, or set allowPrivateNetworks for local development`},
		},
		{
			name: "credentials in URL",
			json: dst(`{"name": "a", "url": "https://user:pw@a.example.com/hooks"}`),
			want: []string{`destinations[0].url: "https://REDACTED@a.example.com/hooks" carries credentials; remove them from the URL (deliveries are authenticated by their signature; a subscriber's credential goes in a header with secretName)`},
		},
		{
			name: "credentials in URL without a password",
			json: dst(`{"name": "a", "url": "https://tok_live_9f3@a.example.com/hooks"}`),
			want: []string{`destinations[0].url: "https://REDACTED@a.example.com/hooks" carries credentials; remove them from the URL (deliveries are authenticated by their signature; a subscriber's credential goes in a header with secretName)`},
		},
		{
			// The value is the credential: the message shows the host and the name.
			name: "a credential in the URL's query",
			json: dst(`{"name": "a", "url": "https://a.example.com/hooks/tok_path?api_key=k_secret&x=1&Token=t_secret"}`),
			want: []string{
				`destinations[0].url: the query of https://a.example.com names "Token", a credential's parameter (its name has "token"): the URL lives in the configuration, the template and the function's environment; store the whole URL in a Secrets Manager secret and name it with urlSecretName instead of url`,
				`destinations[0].url: the query of https://a.example.com names "api_key", a credential's parameter (its name has "key"): the URL lives in the configuration, the template and the function's environment; store the whole URL in a Secrets Manager secret and name it with urlSecretName instead of url`,
			},
		},
		{
			name: "url and urlSecretName",
			json: dst(`{"name": "a", "url": "https://a.example.com/hooks", "urlSecretName": "hookfan/dest/a/url"}`),
			want: []string{`destinations[0]: both url and urlSecretName are set; keep one (urlSecretName when the URL carries a token in its path or query)`},
		},
		{
			name: "neither url nor urlSecretName",
			json: dst(`{"name": "a"}`),
			want: []string{`destinations[0].url: "" is not an absolute URL; use https://host/path (or urlSecretName, a secret holding it)`},
		},
		{
			name: "bad urlSecretName",
			json: dst(`{"name": "a", "urlSecretName": "not a name"}`),
			want: []string{`destinations[0].urlSecretName: "not a name" is not a valid Secrets Manager name or ARN; use letters, digits and /_+=.@- (at most 512)`},
		},
		{
			// The value is a credential: the message names the header, never the value.
			name: "static values of credential headers",
			json: dst(`{"name": "a", "url": "https://a.example.com", "headers": [
				{"name": "Authorization", "value": "Bearer sk_live_abc"},
				{"name": "Cookie", "value": "session=s3cr3t"},
				{"name": "x-api-key", "value": "k_123"},
				{"name": "X-Auth-Token", "value": "t_1"},
				{"name": "X-Client-Secret", "value": "c_1"},
				{"name": "X-Password", "value": "p_1"},
				{"name": "X-Tenant", "value": "acme"}
			]}`),
			want: []string{
				`destinations[0].headers[0].value: is a static value for "Authorization", a credential's header (its name has "authorization"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[1].value: is a static value for "Cookie", a credential's header (its name has "cookie"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[2].value: is a static value for "x-api-key", a credential's header (its name has "x-api-key"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[3].value: is a static value for "X-Auth-Token", a credential's header (its name has "token"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[4].value: is a static value for "X-Client-Secret", a credential's header (its name has "secret"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
				`destinations[0].headers[5].value: is a static value for "X-Password", a credential's header (its name has "password"): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)`,
			},
		},
		{
			name: "two sources sharing a secret",
			json: `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/shared"}},
				{"name": "github", "verify": {"kind": "github", "secretName": "hookfan/github"}},
				{"name": "stripe-eu", "verify": {"kind": "stripe", "secretName": "hookfan/shared"}}]}`,
			want: []string{`sources[2].verify.secretName: "hookfan/shared" is also the secret of sources[0] ("stripe"): a request signed for either source verifies at both, so a request captured at one is accepted at the other; give source "stripe-eu" a secret of its own (the provider issues one per endpoint)`},
		},
		{
			name: "type patterns written as regular expressions",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"types": ["^charge\\.(refunded|failed)$", "invoice.paid", "charge.[a-z]+"], "excludeTypes": []}}`),
			want: []string{
				`destinations[0].filter.types[0]: "^charge\\.(refunded|failed)$" holds "^", which a type pattern does not interpret: a pattern is an exact type or a prefix ending in "*", never a regular expression, so this matches no event; list each type ("charge.refunded", "charge.failed") or a prefix ("charge.*")`,
				`destinations[0].filter.types[2]: "charge.[a-z]+" holds "[", which a type pattern does not interpret: a pattern is an exact type or a prefix ending in "*", never a regular expression, so this matches no event; list each type ("charge.refunded", "charge.failed") or a prefix ("charge.*")`,
			},
		},
		{
			name: "exclude type with white space",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"excludeTypes": ["charge.refunded "]}}`),
			want: []string{`destinations[0].filter.excludeTypes[0]: "charge.refunded " holds " ", which a type pattern does not interpret: a pattern is an exact type or a prefix ending in "*", never a regular expression, so this matches no event; list each type ("charge.refunded", "charge.failed") or a prefix ("charge.*")`},
		},
		{
			name: "filter names an unknown source",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"sources": ["stripe", "paypal"]}}`),
			want: []string{`destinations[0].filter.sources[1]: "paypal" is not a configured source; use one of the names in sources[]`},
		},
		{
			name: "filter with types and excludeTypes and a bad wildcard",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"types": ["charge.*.x"], "excludeTypes": ["ping"]}}`),
			want: []string{
				`destinations[0].filter: both types and excludeTypes are set; SNS cannot combine them on one attribute, keep one`,
				`destinations[0].filter.types[0]: "charge.*.x" has a "*" before its end; only a trailing "*" (prefix match) is supported`,
			},
		},
		{
			name: "excludeTypes mixing a prefix",
			json: dst(`{"name": "a", "url": "https://a.example.com", "filter": {"excludeTypes": ["ping", "test.*"]}}`),
			want: []string{`destinations[0].filter.excludeTypes: ["ping" "test.*"] mixes a prefix with other values; SNS anything-but takes either exact values or a single prefix`},
		},
		{
			name: "timeout out of range",
			json: dst(`{"name": "a", "url": "https://a.example.com", "timeoutSeconds": 600}`),
			want: []string{`destinations[0].timeoutSeconds: 600 is out of range; use 1 to 120 seconds (default 10)`},
		},
		{
			name: "max concurrency below the event source mapping minimum",
			json: dst(`{"name": "a", "url": "https://a.example.com", "maxConcurrency": 1}`),
			want: []string{`destinations[0].maxConcurrency: 1 is out of range; the SQS event source mapping accepts 2 to 1000 (default 5)`},
		},
		{
			name: "batch size and window out of range",
			json: dst(`{"name": "a", "url": "https://a.example.com", "batchSize": 11, "batchWindowSeconds": 301}`),
			want: []string{
				`destinations[0].batchSize: 11 is out of range; use 1 to 10 (default 10)`,
				`destinations[0].batchWindowSeconds: 301 is out of range; use 0 to 300 seconds`,
			},
		},
		{
			name: "schedule delay beyond the visibility ceiling",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": ["5s", "13h"]}}`),
			want: []string{`destinations[0].retry.schedule[1]: 13h0m0s cannot be honoured: SQS hides a message at most 12h0m0s from its receive, which can precede this delay by the function timeout (20s), the batch window (0s) and a 1m0s margin; use at most 11h58m40s`},
		},
		{
			// The message states the real limit (11h58m40s), not SQS's 12 h.
			name: "a day-long delay",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": ["24h"]}}`),
			want: []string{`destinations[0].retry.schedule[0]: 24h0m0s cannot be honoured: SQS hides a message at most 12h0m0s from its receive, which can precede this delay by the function timeout (20s), the batch window (0s) and a 1m0s margin; use at most 11h58m40s`},
		},
		{
			name: "a day-long delay beside a timeout out of range",
			json: dst(`{"name": "a", "url": "https://a.example.com", "timeoutSeconds": 9999, "retry": {"schedule": ["24h", "0s"]}}`),
			want: []string{
				`destinations[0].retry.schedule[1]: 0s is out of range; each delay must be more than 0`,
				`destinations[0].timeoutSeconds: 9999 is out of range; use 1 to 120 seconds (default 10)`,
				`destinations[0].retry.schedule[0]: 24h0m0s is more than SQS hides a message (12h0m0s from its receive, less the function timeout, the batch window and a 1m0s margin); use at most 11h58m40s with the default timeout and no batch window`,
			},
		},
		{
			name: "schedule delay of 12h cannot fit after the receive",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": ["5s", "12h", "11h58m"], "jitter": 0}}`),
			want: []string{`destinations[0].retry.schedule[1]: 12h0m0s cannot be honoured: SQS hides a message at most 12h0m0s from its receive, which can precede this delay by the function timeout (20s), the batch window (0s) and a 1m0s margin; use at most 11h58m40s`},
		},
		{
			name: "schedule delay that the batch window and a long timeout push past 12h",
			json: dst(`{"name": "a", "url": "https://a.example.com", "timeoutSeconds": 120, "batchWindowSeconds": 300, "retry": {"schedule": ["11h50m", "11h55m"]}}`),
			want: []string{`destinations[0].retry.schedule[1]: 11h55m0s cannot be honoured: SQS hides a message at most 12h0m0s from its receive, which can precede this delay by the function timeout (2m10s), the batch window (5m0s) and a 1m0s margin; use at most 11h51m50s`},
		},
		{
			name: "schedule that SQS retention cannot hold",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": ["11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h","11h"]}}`),
			want: []string{
				`destinations[0].retry.schedule: needs 363h0m0s of queue retention (delays with jitter plus one visibility timeout per attempt plus 1h0m0s), more than SQS's maximum of 336h0m0s; shorten the schedule`,
			},
		},
		{
			name: "empty schedule and bad jitter",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": [], "jitter": 1.5}}`),
			want: []string{
				`destinations[0].retry.schedule: is empty; list at least one delay, or omit it for the default (5s, 30s, 2m0s, 10m0s, 30m0s, 1h0m0s, 2h0m0s, 4h0m0s, 8h0m0s)`,
				`destinations[0].retry.jitter: 1.5 is out of range; use 0 (none) up to but not including 1 (default 0.2)`,
			},
		},
		{
			name: "schedule entry not a duration",
			json: dst(`{"name": "a", "url": "https://a.example.com", "retry": {"schedule": ["5 minutes"]}}`),
			want: []string{`destinations[0].retry.schedule[0]: "5 minutes" is not a duration; want a duration string such as "30s", "2m" or "1h30m"`},
		},
		{
			name: "metrics sink, api and alarms",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "metrics": {"sink": "prometheus"}, "api": {"rateLimit": -1, "logRetentionDays": 10}, "alarms": {"email": "ops", "oldestMessageSeconds": 5}}`,
			want: []string{
				`metrics.sink: unknown sink "prometheus"; use "emf" (Embedded Metric Format, default) or "cloudwatch" (PutMetricData)`,
				`api.rateLimit: -1 is negative; use requests per second above 0 (default 100)`,
				`api.logRetentionDays: 10 is not a CloudWatch Logs retention; use one of [1 3 5 7 14 30 60 90 120 150 180 365 400 545 731 1096 1827 2192 2557 2922 3288 3653]`,
				`alarms.email: "ops" is not an email address`,
				`alarms.oldestMessageSeconds: 5 is too small; use at least 60 seconds (default 3600)`,
			},
		},
		{
			name: "alarm endpoints and DLQ thresholds",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}],
			  "destinations": [{"name": "a", "url": "https://a.example.com", "alarms": {"dlq": {"threshold": 5, "windowMinutes": 61}}}],
			  "alarms": {"https": ["http://events.example.com/sns", "https://u:pw@events.example.com/sns", "https://10.0.0.1/sns", "events.example.com", "https://events.example.com/x#y",
			    "https://events.example.com/ok", "https://events.example.com/ok"], "httpsSecrets": ["hookfan/alarms/pagerduty", "bad name!", "hookfan/alarms/pagerduty"], "dlq": {"threshold": 0}}}`,
			want: []string{
				`destinations[0].alarms.dlq.windowMinutes: 61 is out of range; use 1 to 60 minutes (default 5)`,
				`alarms.https[0]: "http://events.example.com/sns" does not use https; SNS sends alarms to https endpoints here (use the tool's https URL)`,
				`alarms.https[1]: "https://REDACTED@events.example.com/sns" carries credentials; remove user:password@ (the configuration holds no credentials: use the tool's integration URL, which carries its routing key)`,
				`alarms.https[2]: "https://10.0.0.1/sns": host 10.0.0.1 is a private-use address; SNS reaches public hosts only`,
				`alarms.https[3]: "events.example.com" is not an absolute URL; use the https URL your incident tool gives for Amazon SNS`,
				`alarms.https[4]: "https://events.example.com/x#y" has a fragment; remove the #part`,
				`alarms.https[6]: "https://events.example.com/ok" is alarms.https[5] again; list each endpoint once`,
				`alarms.httpsSecrets[1]: "bad name!" is not a valid Secrets Manager name or ARN; use letters, digits and /_+=.@- (at most 512)`,
				`alarms.httpsSecrets[2]: "hookfan/alarms/pagerduty" is alarms.httpsSecrets[0] again; list each secret once`,
				`alarms.dlq.threshold: 0: give the number of messages (1 or more) that may reach the DLQ within the window before it alarms; leave out alarms.dlq to alarm on any message in the DLQ`,
			},
		},
		{
			name: "record days shorter than retention plus DLQ",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "dedupe": {"recordDays": 10}}`,
			want: []string{`dedupe.recordDays: 10 days is shorter than the longest queue retention plus the DLQ's 14 days; use at least 14 so a redriven message is still deduplicated`},
		},
		{
			name: "archive days negative",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "archive": {"days": -1}}`,
			want: []string{`archive.days: -1 is out of range; use 1 to 3650 days, or 0 to turn the archive off (default 30)`},
		},
		{
			name: "archive days too many",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "archive": {"days": 5000}}`,
			want: []string{`archive.days: 5000 is out of range; use 1 to 3650 days, or 0 to turn the archive off (default 30)`},
		},
		{
			name: "archive days not a number",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "archive": {"days": "30"}}`,
			want: []string{`archive.days: "30" is a string; want a whole number`},
		},
		{
			name: "archive unknown field",
			json: `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "archive": {"bucket": "x"}}`,
			want: []string{`archive.bucket: unknown field; check its spelling against the configuration reference, docs/configuration.md#configuration-reference`},
		},
		{
			name: "several problems reported at once",
			json: `{"sources": [{"name": "A", "verify": {"kind": "nope"}}], "destinations": [{"name": "d", "url": "http://10.0.0.1", "maxConcurrency": 1, "filter": {"sources": ["b"]}}]}`,
			want: []string{
				`sources[0].name: "A" is not a valid source name; use 1 to 64 lowercase letters, digits or hyphens`,
				`sources[0].verify.kind: unknown verification kind "nope"; use one of stripe, github, shopify, slack, standard-webhooks, hmac, token`,
				`sources[0].verify.secretName: missing; every source needs the name of the Secrets Manager secret that holds its signing secret or token`,
				`destinations[0].url: "http://10.0.0.1" uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)`,
				`destinations[0].url: host 10.0.0.1 is a private-use address; use a public host, or set allowPrivateNetworks for local development`,
				`destinations[0].filter.sources[0]: "b" is not a configured source; use one of the names in sources[]`,
				`destinations[0].maxConcurrency: 1 is out of range; the SQS event source mapping accepts 2 to 1000 (default 5)`,
			},
		},
	}
	if len(tests) < 20 {
		t.Fatalf("only %d invalid cases", len(tests))
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(tt.json))
			if err == nil {
				t.Fatalf("Parse accepted an invalid config: %+v", c)
			}
			got := strings.Split(err.Error(), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseValidDerived(t *testing.T) {
	jitter0 := `{
	  "sources": [
	    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe", "toleranceSeconds": 600}},
	    {"name": "generic", "verify": {"kind": "hmac", "secretName": "arn:aws:secretsmanager:eu-west-1:123456789012:secret:hookfan/generic-AbCdEf", "header": "X-Signature", "algorithm": "sha512", "encoding": "base64", "prefix": "sha512="},
	     "maxBodyBytes": 65536, "event": {"idHeader": "X-Request-Id", "typeField": "event.kind"}}
	  ],
	  "destinations": [
	    {"name": "defaults", "url": "https://a.example.com/hooks"},
	    {"name": "custom", "url": "https://b.example.com/in", "timeoutSeconds": 30, "maxConcurrency": 20, "batchSize": 5,
	     "batchWindowSeconds": 2, "retry": {"schedule": ["10s", "1m", "1h"], "jitter": 0},
	     "filter": {"sources": ["stripe", "generic"], "types": ["invoice.*", "charge.refunded"]}},
	    {"name": "local", "url": "http://127.0.0.1:9000/hooks", "allowPrivateNetworks": true,
	     "filter": {"excludeTypes": ["ping", "test"]}},
	    {"name": "no-tests", "url": "https://[2606:4700::1111]/x", "filter": {"excludeTypes": ["test.*"]}}
	  ],
	  "metrics": {"sink": "cloudwatch"},
	  "api": {"rateLimit": 25.5, "burstLimit": 50, "logRetentionDays": 90},
	  "dedupe": {"recordDays": 45},
	  "alarms": {"email": "ops@example.com", "oldestMessageSeconds": 600},
	  "archive": {"days": 90}
	}`
	c, err := Parse([]byte(jitter0))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	type derived struct {
		Timeout, FunctionTimeout, Visibility, Retention time.Duration
		MaxReceiveCount, Concurrency, Batch             int
		BatchWindow                                     time.Duration
		Jitter                                          float64
		FilterPolicy                                    string
	}
	got := map[string]derived{}
	for _, d := range c.Destinations {
		got[d.Name] = derived{d.Timeout(), d.FunctionTimeout(), d.VisibilityTimeout(), d.Retention(),
			d.MaxReceiveCount(), d.Concurrency(), d.ReceiveBatch(), d.BatchWindow(), d.Jitter(), d.Filter.FilterPolicy()}
	}
	// Default schedule: 5s+30s+2m+10m+30m+1h+2h+4h+8h = 56555s; ×1.2 = 67866s;
	// 10 attempts × 120s visibility = 1200s; + 3600s margin = 72666s needed;
	// retention = 2 × 72666s = 145332s, rounded up to the minute = 145380s.
	// Custom: (10+60+3600)s × 1.0 = 3670s; 4 attempts × 240s = 960s; + 3600s
	// = 8230s; × 2 = 16460s → 16500s.
	want := map[string]derived{
		"defaults": {10 * time.Second, 20 * time.Second, 120 * time.Second, 145380 * time.Second, 10, 5, 10, 0, 0.2, ""},
		"custom": {30 * time.Second, 40 * time.Second, 242 * time.Second, 16500 * time.Second, 4, 20, 5, 2 * time.Second, 0,
			`{"source":["stripe","generic"],"type":[{"prefix":"invoice."},"charge.refunded"]}`},
		"local":    {10 * time.Second, 20 * time.Second, 120 * time.Second, 145380 * time.Second, 10, 5, 10, 0, 0.2, `{"type":[{"anything-but":["ping","test"]}]}`},
		"no-tests": {10 * time.Second, 20 * time.Second, 120 * time.Second, 145380 * time.Second, 10, 5, 10, 0, 0.2, `{"type":[{"anything-but":{"prefix":"test."}}]}`},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("derived values (-want +got):\n%s", diff)
	}
	for name, d := range got {
		if d.Visibility < 6*d.FunctionTimeout+d.BatchWindow {
			t.Errorf("%s: visibility %s < 6 × function timeout %s + batch window %s", name, d.Visibility, d.FunctionTimeout, d.BatchWindow)
		}
	}

	stripe, _ := c.Source("stripe")
	generic, _ := c.Source("generic")
	gotSrc := []any{stripe.Verify.Tolerance(), stripe.BodyLimit(), generic.BodyLimit(), generic.Params()}
	wantSrc := []any{600 * time.Second, 260096, 65536, provider.Params{
		Tolerance: provider.DefaultTolerance, Header: "X-Signature", Algorithm: "sha512", Encoding: "base64", Prefix: "sha512=",
		Event: provider.Places{IDHeader: "X-Request-Id", TypeField: "event.kind"},
	}}
	if diff := cmp.Diff(wantSrc, gotSrc); diff != "" {
		t.Errorf("source values (-want +got):\n%s", diff)
	}
	gotTop := []any{c.Metrics.SinkName(), c.API.Rate(), c.API.Burst(), c.API.LogRetention(), c.RecordTTL(), c.Alarms.OldestMessageThreshold(), c.Archive.RetentionDays(), c.Archive.Enabled()}
	wantTop := []any{"cloudwatch", 25.5, 50, 90, 45 * 24 * time.Hour, 600 * time.Second, 90, true}
	if diff := cmp.Diff(wantTop, gotTop); diff != "" {
		t.Errorf("top-level values (-want +got):\n%s", diff)
	}
}

// TestVisibilityCoversBatchWindow: the event source mapping may hold a
// message for the whole batching window before the invocation starts, so
// the queue's visibility timeout covers six function timeouts plus the
// window, as AWS advises.
func TestVisibilityCoversBatchWindow(t *testing.T) {
	for _, tt := range []struct {
		timeout, window int
		want            time.Duration
	}{
		{0, 0, 120 * time.Second},
		{0, 300, 420 * time.Second},
		{120, 300, 6*130*time.Second + 300*time.Second},
		{1, 20, 6*11*time.Second + 20*time.Second},
	} {
		d := Destination{Name: "d", URL: "https://d.example.com", TimeoutSeconds: tt.timeout, BatchWindowSeconds: tt.window}
		if got := d.VisibilityTimeout(); got != tt.want {
			t.Errorf("timeout %ds, window %ds: VisibilityTimeout() = %s, want %s", tt.timeout, tt.window, got, tt.want)
		}
		if got := d.VisibilityTimeout(); got < VisibilityFactor*d.FunctionTimeout()+d.BatchWindow() {
			t.Errorf("timeout %ds, window %ds: visibility %s < 6 × %s + %s", tt.timeout, tt.window, got, d.FunctionTimeout(), d.BatchWindow())
		}
	}
}

// TestMaxDelay: the longest delay a destination's schedule may hold, and
// it is never more than SQS's ceiling less what may precede the delay.
func TestMaxDelay(t *testing.T) {
	for _, tt := range []struct {
		timeout, window int
		want            time.Duration
	}{
		{0, 0, 12*time.Hour - 20*time.Second - time.Minute},
		{120, 300, 12*time.Hour - 130*time.Second - 300*time.Second - time.Minute},
	} {
		d := Destination{TimeoutSeconds: tt.timeout, BatchWindowSeconds: tt.window}
		if got := d.MaxDelay(); got != tt.want {
			t.Errorf("timeout %ds, window %ds: MaxDelay() = %s, want %s", tt.timeout, tt.window, got, tt.want)
		}
	}
}

func TestDefaultsOfMinimalConfig(t *testing.T) {
	c, err := Parse([]byte(base))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	s, _ := c.Source("github")
	d, _ := c.Destination("orders")
	got := []any{s.Verify.Tolerance(), s.BodyLimit(), c.Metrics.SinkName(), c.API.Rate(), c.API.Burst(), c.API.LogRetention(),
		c.RecordTTL(), d.Schedule(), d.Attempts(), c.Archive.RetentionDays(), c.Archive.Enabled()}
	want := []any{300 * time.Second, 260096, "emf", 100.0, 200, 30, 30 * 24 * time.Hour,
		[]time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute, time.Hour, 2 * time.Hour, 4 * time.Hour, 8 * time.Hour}, 10, 30, true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestArchiveOff(t *testing.T) {
	c, err := Parse([]byte(`{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "archive": {"days": 0}}`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got := []any{c.Archive.RetentionDays(), c.Archive.Enabled()}; !cmp.Equal(got, []any{0, false}) {
		t.Errorf("archive days 0: RetentionDays, Enabled = %v, want [0 false]", got)
	}
}

func TestRetentionCappedAtSQSMaximum(t *testing.T) {
	// 16 × 11h delays need 16 × 11h + 17 × 120s + 1h = 177h34m: valid, but
	// twice that exceeds 14 days, so retention is capped at 14 days.
	sched := strings.TrimSuffix(strings.Repeat(`"11h",`, 16), ",")
	c, err := Parse([]byte(`{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}],
	  "destinations": [{"name": "d", "url": "https://d.example.com", "retry": {"schedule": [` + sched + `], "jitter": 0}}]}`))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if got, want := c.Destinations[0].Retention(), 14*24*time.Hour; got != want {
		t.Errorf("Retention() = %s, want %s", got, want)
	}
	if got, want := c.Destinations[0].MaxReceiveCount(), 17; got != want {
		t.Errorf("MaxReceiveCount() = %d, want %d", got, want)
	}
}

func TestLoadCDKJSON(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	ok := write("cdk.json", `{"app": "go run ./infra", "context": {"hookfan": `+base+`}}`)
	c, err := LoadCDKJSON(ok)
	if err != nil {
		t.Fatalf("LoadCDKJSON: %v", err)
	}
	if got := len(c.Sources) + len(c.Destinations); got != 3 {
		t.Errorf("loaded %d sources+destinations, want 3", got)
	}
	missing := write("nokey.json", `{"app": "x", "context": {}}`)
	_, err = LoadCDKJSON(missing)
	want := `cdk.json ` + missing + `: no "hookfan" key in context; add the Hookfan configuration there or pass -c hookfanConfig=FILE`
	if err == nil || err.Error() != want {
		t.Errorf("LoadCDKJSON(no key) = %v, want %q", err, want)
	}
	bad := write("bad.json", `{"app": "x", "context": {"hookfan": {"sources": [{"name": "s", "verify": {"kind": "github"}}]}}}`)
	_, err = LoadCDKJSON(bad)
	want = `cdk.json ` + bad + `, context.hookfan: sources[0].verify.secretName: missing; every source needs the name of the Secrets Manager secret that holds its signing secret or token`
	if err == nil || err.Error() != want {
		t.Errorf("LoadCDKJSON(invalid) = %v, want %q", err, want)
	}
	file := write("hookfan.json", base)
	if _, err := LoadFile(file); err != nil {
		t.Errorf("LoadFile: %v", err)
	}
	if _, err := LoadFile(filepath.Join(dir, "absent.json")); err == nil || !strings.HasPrefix(err.Error(), "read config: ") {
		t.Errorf("LoadFile(absent) = %v, want a read error", err)
	}
}

func TestRepoCDKJSONIsValid(t *testing.T) {
	if _, err := LoadCDKJSON("../../cdk.json"); err != nil {
		t.Fatalf("the repository's cdk.json: %v", err)
	}
}

func TestFromValueMatchesParse(t *testing.T) {
	v := map[string]any{
		"sources": []any{map[string]any{"name": "gh", "verify": map[string]any{"kind": "github", "secretName": "x"}}},
	}
	c, err := FromValue(v)
	if err != nil {
		t.Fatalf("FromValue: %v", err)
	}
	if c.Sources[0].Name != "gh" {
		t.Errorf("source name = %q, want gh", c.Sources[0].Name)
	}
	v["extra"] = true
	if _, err := FromValue(v); err == nil || err.Error() != `extra: unknown field; check its spelling against the configuration reference, docs/configuration.md#configuration-reference` {
		t.Errorf("FromValue(extra) = %v", err)
	}
}

func TestEnvRoundTrip(t *testing.T) {
	c, err := Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	srcs, err := DecodeSources("HOOKFAN_SOURCES", EncodeSources(c.Sources))
	if err != nil {
		t.Fatalf("DecodeSources: %v", err)
	}
	if diff := cmp.Diff(c.Sources, srcs); diff != "" {
		t.Errorf("sources round trip (-want +got):\n%s", diff)
	}
	d, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(c.Destinations[0]))
	if err != nil {
		t.Fatalf("DecodeDestination: %v", err)
	}
	if diff := cmp.Diff(c.Destinations[0], d); diff != "" {
		t.Errorf("destination round trip (-want +got):\n%s", diff)
	}
	_, err = DecodeDestination("HOOKFAN_DESTINATION", `{"name": "x", "url": "http://example.com"}`)
	want := `HOOKFAN_DESTINATION: destination.url: "http://example.com" uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)`
	if err == nil || err.Error() != want {
		t.Errorf("DecodeDestination(http) = %v, want %q", err, want)
	}
	_, err = DecodeSources("HOOKFAN_SOURCES", `[{"name": "x", "verify": {"kind": "github", "secretName": "s"}, "secret": "leak"}]`)
	want = `HOOKFAN_SOURCES: sources[0].secret: unknown field; check its spelling against the configuration reference, docs/configuration.md#configuration-reference`
	if err == nil || err.Error() != want {
		t.Errorf("DecodeSources(unknown field) = %v, want %q", err, want)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(`{"sources": [{"name": "x", "verify": {"kind": "hmac", "secretName": "s", "header": "X"}}]}`))
	f.Add([]byte(`{"destinations": [{"retry": {"schedule": ["1ns"], "jitter": 0.99}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := Parse(data)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("empty error message")
			}
			return
		}
		// Every accepted config must produce sane derived values.
		for _, d := range c.Destinations {
			if d.VisibilityTimeout() < VisibilityFactor*d.FunctionTimeout()+d.BatchWindow() || d.Retention() > MaxRetention || d.Retention() < MinRetention || d.MaxReceiveCount() < 1 {
				t.Fatalf("bad derived values for %+v", d)
			}
			if p := d.Filter.FilterPolicy(); p != "" && !strings.HasPrefix(p, "{") {
				t.Fatalf("bad filter policy %q", p)
			}
		}
	})
}

func TestFilterMatches(t *testing.T) {
	tests := []struct {
		name   string
		filter Filter
		match  [][2]string
		miss   [][2]string
	}{
		{"everything", Filter{}, [][2]string{{"stripe", "a"}, {"github", ""}}, nil},
		{"sources", Filter{Sources: []string{"stripe"}}, [][2]string{{"stripe", "x"}}, [][2]string{{"github", "x"}}},
		{"exact and prefix types", Filter{Sources: []string{"stripe"}, Types: []string{"payment_intent.*", "charge.refunded"}},
			[][2]string{{"stripe", "payment_intent.succeeded"}, {"stripe", "payment_intent."}, {"stripe", "charge.refunded"}},
			[][2]string{{"stripe", "charge.refunded.x"}, {"stripe", "payment_intent"}, {"github", "charge.refunded"}}},
		{"exclude exact", Filter{ExcludeTypes: []string{"ping", "test"}}, [][2]string{{"s", "push"}, {"s", "pings"}}, [][2]string{{"s", "ping"}, {"s", "test"}}},
		{"exclude prefix", Filter{ExcludeTypes: []string{"test.*"}}, [][2]string{{"s", "test"}, {"s", "prod.test.x"}}, [][2]string{{"s", "test.a"}}},
	}
	for _, tt := range tests {
		for _, m := range tt.match {
			if !tt.filter.Matches(m[0], m[1]) {
				t.Errorf("%s: %v does not match, want a match", tt.name, m)
			}
		}
		for _, m := range tt.miss {
			if tt.filter.Matches(m[0], m[1]) {
				t.Errorf("%s: %v matches, want none", tt.name, m)
			}
		}
	}
}

// TestDLQAlarmPrecedence: a destination's alarms.dlq wins over the top
// level's, which applies to the rest; neither leaves the alarm on any
// message. An https endpoint alone makes the alarm topic, and with it the
// customer key.
func TestDLQAlarmPrecedence(t *testing.T) {
	c, err := Parse([]byte(`{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}],
	  "topicKey": "aws-managed",
	  "destinations": [{"name": "a", "url": "https://a.example.com", "alarms": {"dlq": {"threshold": 3}}}, {"name": "b", "url": "https://b.example.com"}],
	  "alarms": {"https": ["https://events.example.com/sns"], "dlq": {"threshold": 10, "windowMinutes": 15}}}`))
	if err != nil {
		t.Fatal(err)
	}
	a, okA := c.DLQAlarm(c.Destinations[0])
	b, okB := c.DLQAlarm(c.Destinations[1])
	if !okA || a.Threshold != 3 || a.Window() != 5*time.Minute || !okB || b.Threshold != 10 || b.Window() != 15*time.Minute {
		t.Errorf("a %+v %v (window %s), b %+v %v (window %s); want a's own 3 in 5m, b the top level's 10 in 15m", a, okA, a.Window(), b, okB, b.Window())
	}
	if !c.Alarms.Notified() || !c.CustomerKey() {
		t.Errorf("an https endpoint alone: notified %v, customer key %v; want both", c.Alarms.Notified(), c.CustomerKey())
	}
	c.Alarms.DLQ = nil
	if _, ok := c.DLQAlarm(c.Destinations[1]); ok {
		t.Error("no alarms.dlq anywhere: a threshold, want the alarm on any message")
	}
}
