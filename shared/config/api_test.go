package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// edgeConfig is a valid configuration with the given api section and
// limits for its github source.
func edgeConfig(api, limits string) string {
	if limits != "" {
		limits = `, "limits": ` + limits
	}
	return `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}},
	  {"name": "github", "verify": {"kind": "github", "secretName": "g"}` + limits + `}],
	  "api": ` + api + `}`
}

func TestParseEdgeInvalid(t *testing.T) {
	tests := []struct {
		name   string
		api    string
		limits string
		want   []string
	}{
		{
			name: "unknown API type",
			api:  `{"type": "websocket"}`,
			want: []string{`api.type: unknown API type "websocket"; use "http" (API Gateway HTTP API, default) or "rest" (REST API: for AWS WAF and IP allow-lists)`},
		},
		{
			name: "WAF on an HTTP API",
			api:  `{"type": "http", "waf": {"enabled": true}}`,
			want: []string{`api.waf.enabled: true with api.type "http" (the default); AWS WAF cannot be associated with an HTTP API: set api.type "rest" (the providers' URLs change unless api.domainName fronts them), or remove api.waf`},
		},
		{
			name:   "allow-list on an HTTP API",
			api:    `{"type": "http"}`,
			limits: `{"allowedIps": ["192.30.252.0/22"]}`,
			want:   []string{`sources[1].limits.allowedIps: set while api.waf.enabled is false; the allow-list is a WAF rule: enable api.waf (api.type "rest"), or remove the list`},
		},
		{
			name:   "allow-list without the WAF",
			api:    `{}`,
			limits: `{"allowedIps": ["192.30.252.0/22"]}`,
			want:   []string{`sources[1].limits.allowedIps: set while api.waf.enabled is false; the allow-list is a WAF rule: enable api.waf (api.type "rest"), or remove the list`},
		},
		{
			name: "WAF rate without the WAF",
			api:  `{"waf": {"rateLimit": 500}}`,
			want: []string{`api.waf.rateLimit: set while api.waf.enabled is false; enable the WAF or remove the limit`},
		},
		{
			name: "WAF rate out of range",
			api:  `{"type": "rest", "waf": {"enabled": true, "rateLimit": 5}}`,
			want: []string{`api.waf.rateLimit: 5 is out of range; use 10 to 2000000000 requests per IP address in five minutes (default 2000)`},
		},
		{
			name:   "bad allow-list entries",
			api:    `{"type": "rest", "waf": {"enabled": true}}`,
			limits: `{"allowedIps": ["192.30.252.1/22", "github.com", "0.0.0.0/0", "::ffff:10.0.0.1", "192.30.252.0/22", "192.30.252.0/22", "fe80::1%eth0"]}`,
			want: []string{
				`sources[1].limits.allowedIps[0]: "192.30.252.1/22" has host bits set; use 192.30.252.0/22`,
				`sources[1].limits.allowedIps[1]: "github.com" is not a CIDR block or an IP address; use one such as 192.30.252.0/22 or 2001:db8::/32`,
				`sources[1].limits.allowedIps[2]: "0.0.0.0/0" allows every address; remove the allow-list instead`,
				`sources[1].limits.allowedIps[3]: "::ffff:10.0.0.1" is an IPv4-mapped IPv6 block; write it as IPv4`,
				`sources[1].limits.allowedIps[5]: 192.30.252.0/22 is listed twice (also allowedIps[4]); list each block once`,
				`sources[1].limits.allowedIps[6]: "fe80::1%eth0" is not a CIDR block or an IP address; use one such as 192.30.252.0/22 or 2001:db8::/32`,
			},
		},
		{
			name:   "empty allow-list",
			api:    `{"type": "rest", "waf": {"enabled": true}}`,
			limits: `{"allowedIps": []}`,
			want:   []string{`sources[1].limits.allowedIps: is empty, which would block every request; list the provider's addresses, or remove it`},
		},
		{
			name:   "negative limits",
			api:    `{"rateLimit": 20}`,
			limits: `{"rateLimit": -1, "burstLimit": -2, "clientErrorAlarm": -3}`,
			want: []string{
				`sources[1].limits.rateLimit: -1 is negative; use requests per second above 0 (default api.rateLimit, 20)`,
				`sources[1].limits.burstLimit: -2 is negative; use a request count above 0 (default api.burstLimit, 200)`,
				`sources[1].limits.clientErrorAlarm: -3 is negative; use a count of 4xx answers in five minutes above 0 (default 50)`,
			},
		},
		{
			name: "domain without a certificate",
			api:  `{"domainName": "hooks.example.com"}`,
			want: []string{`api.domainName: needs a certificate: set api.certificateArn (an ACM certificate for hooks.example.com in the stack's region), or api.hostedZoneId and api.hostedZoneName to create a DNS-validated one`},
		},
		{
			name: "certificate and zone without a domain",
			api:  `{"certificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/0c1f2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f", "hostedZoneId": "Z0123456789ABCDEFGHIJ"}`,
			want: []string{
				`api.certificateArn: set without api.domainName; set the custom domain too, or remove it`,
				`api.hostedZoneId: set without api.domainName; set the custom domain too, or remove it`,
			},
		},
		{
			name: "bad domain, certificate and zone",
			api:  `{"domainName": "https://Hooks.example.com/", "certificateArn": "arn:aws:iam::123456789012:server-certificate/x", "hostedZoneId": "/hostedzone/Z01", "hostedZoneName": "example.com."}`,
			want: []string{
				`api.domainName: "https://Hooks.example.com/" is not a domain name; use a lowercase host name such as hooks.example.com (no scheme, path, trailing dot or wildcard)`,
				`api.certificateArn: "arn:aws:iam::123456789012:server-certificate/x" is not an ACM certificate ARN; use arn:aws:acm:REGION:ACCOUNT:certificate/ID of a certificate in the stack's region`,
				`api.hostedZoneId: "/hostedzone/Z01" is not a Route 53 hosted zone ID; use the ID alone, such as Z0123456789ABCDEFGHIJ`,
				`api.hostedZoneName: "example.com." is not a domain name; use the zone's name without a trailing dot, such as example.com`,
			},
		},
		{
			name: "zone ID without its name",
			api:  `{"domainName": "hooks.example.com", "hostedZoneId": "Z0123456789ABCDEFGHIJ"}`,
			want: []string{`api.hostedZoneName: missing; api.hostedZoneId needs the zone's name too (for example example.com)`},
		},
		{
			name: "zone name without its ID",
			api:  `{"domainName": "hooks.example.com", "hostedZoneName": "example.com"}`,
			want: []string{`api.hostedZoneId: missing; api.hostedZoneName needs the zone's ID too (for example Z0123456789ABCDEFGHIJ)`},
		},
		{
			name: "domain outside its zone",
			api:  `{"domainName": "hooks.example.org", "hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"}`,
			want: []string{`api.domainName: "hooks.example.org" is not in the hosted zone "example.com"; use a name under it or the zone that holds it`},
		},
		{
			name: "a look-alike zone suffix",
			api:  `{"domainName": "hooks.badexample.com", "hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"}`,
			want: []string{`api.domainName: "hooks.badexample.com" is not in the hosted zone "example.com"; use a name under it or the zone that holds it`},
		},
		{
			name: "unknown field in the WAF",
			api:  `{"type": "rest", "waf": {"enabled": true, "managedRules": false}}`,
			want: []string{`api.waf.managedRules: unknown field; check its spelling against the configuration reference, docs/configuration.md#configuration-reference`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(edgeConfig(tt.api, tt.limits)))
			if err == nil {
				t.Fatalf("Parse accepted an invalid config: %+v", c.API)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseEdgeValid(t *testing.T) {
	tests := []struct {
		name      string
		api       string
		limits    string
		kind      string
		rate      [2]float64 // stripe's, github's
		burst     [2]int
		alarm     int // github's
		wafRate   int
		v4, v6    []string
		hasDomain bool
		hasZone   bool
	}{
		{
			name: "defaults", api: `{}`, kind: "http",
			rate: [2]float64{100, 100}, burst: [2]int{200, 200}, alarm: 50, wafRate: 2000,
		},
		{
			name: "HTTP API with a stage default and one source's limits", api: `{"type": "http", "rateLimit": 30, "burstLimit": 60}`,
			limits: `{"rateLimit": 5, "burstLimit": 10, "clientErrorAlarm": 7}`, kind: "http",
			rate: [2]float64{30, 5}, burst: [2]int{60, 10}, alarm: 7, wafRate: 2000,
		},
		{
			name: "WAF with an allow-list of both families", api: `{"type": "rest", "waf": {"enabled": true, "rateLimit": 100}}`,
			limits: `{"allowedIps": ["192.30.252.0/22", "2a0a:a440::/29", "140.82.112.0/20", "203.0.113.7"]}`, kind: "rest",
			rate: [2]float64{100, 100}, burst: [2]int{200, 200}, alarm: 50, wafRate: 100,
			v4: []string{"140.82.112.0/20", "192.30.252.0/22", "203.0.113.7/32"}, v6: []string{"2a0a:a440::/29"},
		},
		{
			name: "domain with a certificate", api: `{"domainName": "hooks.example.com", "certificateArn": "arn:aws:acm:eu-west-1:123456789012:certificate/0c1f2d3e-4a5b-6c7d-8e9f-0a1b2c3d4e5f"}`,
			kind: "http", rate: [2]float64{100, 100}, burst: [2]int{200, 200}, alarm: 50, wafRate: 2000, hasDomain: true,
		},
		{
			name: "domain at the apex of its zone", api: `{"type": "http", "domainName": "example.com", "hostedZoneId": "Z0123456789ABCDEFGHIJ", "hostedZoneName": "example.com"}`,
			kind: "http", rate: [2]float64{100, 100}, burst: [2]int{200, 200}, alarm: 50, wafRate: 2000, hasDomain: true, hasZone: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(edgeConfig(tt.api, tt.limits)))
			if err != nil {
				t.Fatal(err)
			}
			type derived struct {
				Kind               string
				Rate               [2]float64
				Burst              [2]int
				Alarm, WAFRate     int
				V4, V6             []string
				HasDomain, HasZone bool
			}
			v4, v6 := c.Sources[1].Limits.AllowedBlocks()
			got := derived{
				Kind:      c.API.Kind(),
				Rate:      [2]float64{c.Sources[0].Limits.Rate(c.API), c.Sources[1].Limits.Rate(c.API)},
				Burst:     [2]int{c.Sources[0].Limits.Burst(c.API), c.Sources[1].Limits.Burst(c.API)},
				Alarm:     c.Sources[1].Limits.ClientErrorThreshold(),
				WAFRate:   c.API.WAF.Rate(),
				V4:        v4,
				V6:        v6,
				HasDomain: c.API.HasDomain(),
				HasZone:   c.API.HasHostedZone(),
			}
			want := derived{tt.kind, tt.rate, tt.burst, tt.alarm, tt.wafRate, tt.v4, tt.v6, tt.hasDomain, tt.hasZone}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("derived (-want +got):\n%s", diff)
			}
		})
	}
}

// TestIngestSourcesDropLimits: ingest's environment carries no limits (the
// API enforces them), and the configuration itself is left alone.
func TestIngestSourcesDropLimits(t *testing.T) {
	c, err := Parse([]byte(edgeConfig(`{"type": "rest", "waf": {"enabled": true}}`, `{"rateLimit": 5, "allowedIps": ["192.30.252.0/22"]}`)))
	if err != nil {
		t.Fatal(err)
	}
	enc := EncodeSources(c.Sources)
	if strings.Contains(enc, "limits") || strings.Contains(enc, "192.30.252.0") {
		t.Errorf("the encoded sources carry the limits: %s", enc)
	}
	got, err := DecodeSources("HOOKFAN_SOURCES", enc)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(IngestSources(c.Sources), got); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	if c.Sources[1].Limits.RateLimit != 5 {
		t.Errorf("IngestSources changed the configuration: %+v", c.Sources[1].Limits)
	}
}

// FuzzParseAllowedIP: whatever ParseAllowedIP accepts is a canonical block
// that reads back as itself, never the whole address space, and never an
// IPv4-mapped IPv6 block.
func FuzzParseAllowedIP(f *testing.F) {
	for _, s := range []string{"192.30.252.0/22", "203.0.113.7", "2a0a:a440::/29", "::1", "0.0.0.0/0", "10.0.0.1/8", "::ffff:10.0.0.1", "fe80::1%eth0", "1.2.3.4/33", " 1.2.3.4", "01.2.3.4"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseAllowedIP(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconvQuote(s)) {
				t.Errorf("error %q does not quote the entry", err)
			}
			return
		}
		if p.Bits() == 0 || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" {
			t.Errorf("%q accepted as %s", s, p)
		}
		again, err := ParseAllowedIP(p.String())
		if err != nil || again != p {
			t.Errorf("%q → %s reads back as %v, %v", s, p, again, err)
		}
	})
}

func strconvQuote(s string) string { return fmt.Sprintf("%q", s) }
