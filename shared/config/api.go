package config

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// API types accepted in api.type.
const (
	APITypeREST = "rest"
	APITypeHTTP = "http"
)

// APITypes lists the API types, the default first.
var APITypes = []string{APITypeHTTP, APITypeREST}

// The API stage's defaults.
const (
	DefaultRateLimit  = 100
	DefaultBurstLimit = 200

	DefaultLogRetentionDays = 30
)

// Edge limits and defaults.
const (
	// DefaultWAFRateLimit is the web ACL's per-IP limit: requests per five
	// minutes.
	DefaultWAFRateLimit = 2000
	// MinWAFRateLimit and MaxWAFRateLimit are what AWS WAF accepts for a
	// rate-based rule.
	MinWAFRateLimit = 10
	MaxWAFRateLimit = 2_000_000_000
	// WAFRateWindowSeconds is the window the per-IP limit counts over.
	WAFRateWindowSeconds = 300

	// DefaultClientErrorAlarm is how many 4xx answers on one source's route
	// in ClientErrorAlarmPeriodSeconds raise its alarm.
	DefaultClientErrorAlarm       = 50
	ClientErrorAlarmPeriodSeconds = 300

	// MaxAllowedIPs is AWS WAF's limit on the addresses of one IP set (one
	// per source and address family).
	MaxAllowedIPs = 10000
)

// The largest bodies an API type hands to the ingest function.
const (
	// MaxLambdaPayloadBytes is Lambda's limit on a synchronous invocation's
	// request payload (6 MB: 6,291,456 bytes), which holds API Gateway's
	// whole event, the body inside it.
	MaxLambdaPayloadBytes = 6 * 1024 * 1024
	// LambdaEventReserveBytes is kept for the event's other fields. API
	// Gateway bounds the request line and headers together at 10,240 bytes;
	// the REST proxy event carries the headers twice (headers and
	// multiValueHeaders) and the path up to four times, each JSON-escaped
	// (at most 6 bytes per byte), plus the request context: under 250 KB.
	LambdaEventReserveBytes = 256 * 1024
	// MaxBodyBytesREST is the largest body a REST API delivers to the ingest
	// function: with binary media types */* the body is base64 in the event
	// (4 bytes per 3), so (6 MiB - 256 KiB) / 4 × 3 = 4,521,984 bytes.
	MaxBodyBytesREST = (MaxLambdaPayloadBytes - LambdaEventReserveBytes) / 4 * 3
	// MaxBodyBytesHTTP is the largest body an HTTP API delivers whatever its
	// bytes: an HTTP API passes a body whose content type it takes for text
	// as a JSON string, where a control character takes 6 bytes (\u0001), so
	// (6 MiB - 256 KiB) / 6 = 1,004,885 bytes.
	MaxBodyBytesHTTP = (MaxLambdaPayloadBytes - LambdaEventReserveBytes) / 6
)

// API holds the front door's settings: the API type, its stage throttling
// and access logs, the optional WAF and the optional custom domain.
type API struct {
	// Type is "http" (default: API Gateway HTTP API) or "rest" (API Gateway
	// REST API: what AWS WAF and IP allow-lists need). Changing it changes
	// the providers' URLs unless a custom domain fronts them.
	Type string `json:"type,omitempty"`
	// RateLimit and BurstLimit are the stage default: they throttle requests
	// to unknown sources and are each source's default (sources[].limits).
	RateLimit        float64 `json:"rateLimit,omitempty"`
	BurstLimit       int     `json:"burstLimit,omitempty"`
	LogRetentionDays int     `json:"logRetentionDays,omitempty"`
	// DetailedMetrics publishes each route's metrics (count, 4xx, 5xx,
	// latencies: five custom metrics a source, $1.50 a month), which each
	// source's ClientErrorsAlarm and ServerErrorsAlarm read (without them
	// one ServerErrorsAlarm reads the stage's 5xx). Default true.
	DetailedMetrics *bool `json:"detailedMetrics,omitempty"`
	// WAF associates a web ACL with the REST stage.
	WAF WAF `json:"waf,omitzero"`
	// DomainName is a custom domain for the API (regional), so a recreated
	// API keeps its URLs. It needs CertificateArn, or HostedZoneID and
	// HostedZoneName to create a DNS-validated certificate.
	DomainName     string `json:"domainName,omitempty"`
	CertificateArn string `json:"certificateArn,omitempty"`
	// HostedZoneID and HostedZoneName name the Route 53 public zone holding
	// DomainName: the stack creates the alias record there (and the
	// certificate, when CertificateArn is empty).
	HostedZoneID   string `json:"hostedZoneId,omitempty"`
	HostedZoneName string `json:"hostedZoneName,omitempty"`
}

// Detailed reports whether the API publishes per-route metrics.
func (a API) Detailed() bool { return a.DetailedMetrics == nil || *a.DetailedMetrics }

// WAF configures the web ACL in front of a REST API.
type WAF struct {
	// Enabled creates a regional web ACL associated with the stage.
	Enabled bool `json:"enabled,omitempty"`
	// RateLimit is how many requests one IP address may send in five
	// minutes before the web ACL blocks it. Default 2000.
	RateLimit int `json:"rateLimit,omitempty"`
}

// SourceLimits are one source's limits at the API.
type SourceLimits struct {
	// RateLimit and BurstLimit throttle this source's route; default the
	// stage's api.rateLimit and api.burstLimit, in a bucket of its own.
	RateLimit  float64 `json:"rateLimit,omitempty"`
	BurstLimit int     `json:"burstLimit,omitempty"`
	// ClientErrorAlarm is how many 4xx answers (throttling included) on
	// this source's route in five minutes raise its alarm. Default 50.
	ClientErrorAlarm int `json:"clientErrorAlarm,omitempty"`
	// AllowedIPs, when set, are the only addresses (CIDR blocks or single
	// addresses, IPv4 or IPv6) the web ACL lets reach this source's route.
	// Needs api.waf.enabled.
	AllowedIPs []string `json:"allowedIps,omitempty"`
}

// Kind is the API type in force.
func (a API) Kind() string {
	if a.Type == "" {
		return APITypeHTTP
	}
	return a.Type
}

// Rate is the stage's steady-state request rate limit.
func (a API) Rate() float64 {
	if a.RateLimit == 0 {
		return DefaultRateLimit
	}
	return a.RateLimit
}

// Burst is the stage's burst limit.
func (a API) Burst() int {
	if a.BurstLimit == 0 {
		return DefaultBurstLimit
	}
	return a.BurstLimit
}

// LogRetention is the access log retention in days.
func (a API) LogRetention() int {
	if a.LogRetentionDays == 0 {
		return DefaultLogRetentionDays
	}
	return a.LogRetentionDays
}

// MaxBodyBytes is the largest body this API type hands to the ingest
// function (MaxBodyBytesREST or MaxBodyBytesHTTP): the ceiling of
// sources[].maxBodyBytes.
func (a API) MaxBodyBytes() int {
	if a.Kind() == APITypeHTTP {
		return MaxBodyBytesHTTP
	}
	return MaxBodyBytesREST
}

// HasDomain reports whether a custom domain is configured.
func (a API) HasDomain() bool { return a.DomainName != "" }

// HasHostedZone reports whether the stack manages the domain's DNS record.
func (a API) HasHostedZone() bool { return a.HostedZoneID != "" }

// Rate is the web ACL's per-IP limit in force (requests per five minutes).
func (w WAF) Rate() int {
	if w.RateLimit == 0 {
		return DefaultWAFRateLimit
	}
	return w.RateLimit
}

// Rate is the source route's steady-state rate limit.
func (l SourceLimits) Rate(a API) float64 {
	if l.RateLimit == 0 {
		return a.Rate()
	}
	return l.RateLimit
}

// Burst is the source route's burst limit.
func (l SourceLimits) Burst(a API) int {
	if l.BurstLimit == 0 {
		return a.Burst()
	}
	return l.BurstLimit
}

// ClientErrorThreshold is the 4xx count in five minutes that raises the
// source's alarm.
func (l SourceLimits) ClientErrorThreshold() int {
	if l.ClientErrorAlarm == 0 {
		return DefaultClientErrorAlarm
	}
	return l.ClientErrorAlarm
}

// AllowedBlocks returns the allow-list as canonical CIDR blocks, IPv4 and
// IPv6 apart (an AWS WAF IP set holds one family), each sorted. The list is
// expected to be validated.
func (l SourceLimits) AllowedBlocks() (v4, v6 []string) {
	for _, s := range l.AllowedIPs {
		p, err := ParseAllowedIP(s)
		if err != nil {
			continue
		}
		if p.Addr().Is4() {
			v4 = append(v4, p.String())
		} else {
			v6 = append(v6, p.String())
		}
	}
	slices.Sort(v4)
	slices.Sort(v6)
	return v4, v6
}

// logRetentionDays are the values CloudWatch Logs accepts.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

func (a *API) validate(p *problems) {
	if a.RateLimit < 0 {
		p.add("api.rateLimit", "%g is negative; use requests per second above 0 (default %d)", a.RateLimit, DefaultRateLimit)
	}
	if a.BurstLimit < 0 {
		p.add("api.burstLimit", "%d is negative; use a request count above 0 (default %d)", a.BurstLimit, DefaultBurstLimit)
	}
	if a.LogRetentionDays != 0 && !slices.Contains(logRetentionDays, a.LogRetentionDays) {
		p.add("api.logRetentionDays", "%d is not a CloudWatch Logs retention; use one of %v", a.LogRetentionDays, logRetentionDays)
	}
}

// The API section's patterns are compiled on first use: every function
// imports this package, and compiling them (the bounded repetitions expand)
// would cost each cold start about half a millisecond for checks only the
// CDK app runs.
var (
	domainPattern   = lazyPattern(`^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]([a-z0-9-]{0,61}[a-z0-9])?$`)
	certARNPattern  = lazyPattern(`^arn:aws[a-z-]*:acm:[a-z0-9-]+:[0-9]{12}:certificate/[A-Za-z0-9-]{1,64}$`)
	zoneIDPattern   = lazyPattern(`^Z[A-Z0-9]{1,31}$`)
	maxDomainLength = 253
)

func lazyPattern(expr string) func() *regexp.Regexp {
	return sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(expr) })
}

// validateEdge checks the API section and every source's limits: the
// combinations an API type cannot serve are refused here, before anything
// is synthesized.
func (c *Config) validateEdge(p *problems) {
	a := &c.API
	if a.Type != "" && !slices.Contains(APITypes, a.Type) {
		p.add("api.type", "unknown API type %q; use %q (API Gateway HTTP API, default) or %q (REST API: for AWS WAF and IP allow-lists)", a.Type, APITypeHTTP, APITypeREST)
	}
	if a.WAF.Enabled && a.Kind() == APITypeHTTP {
		p.add("api.waf.enabled", "true with api.type %q (the default); AWS WAF cannot be associated with an HTTP API: set api.type %q (the providers' URLs change unless api.domainName fronts them), or remove api.waf", APITypeHTTP, APITypeREST)
	}
	switch w := a.WAF.RateLimit; {
	case w == 0:
	case !a.WAF.Enabled:
		p.add("api.waf.rateLimit", "set while api.waf.enabled is false; enable the WAF or remove the limit")
	case w < MinWAFRateLimit || w > MaxWAFRateLimit:
		p.add("api.waf.rateLimit", "%d is out of range; use %d to %d requests per IP address in five minutes (default %d)", w, MinWAFRateLimit, MaxWAFRateLimit, DefaultWAFRateLimit)
	}
	a.validateDomain(p)
	for i := range c.Sources {
		c.Sources[i].Limits.validate(p, fmt.Sprintf("sources[%d].limits", i), a)
	}
}

func (a *API) validateDomain(p *problems) {
	if a.DomainName == "" {
		for _, f := range []struct{ name, value string }{{"certificateArn", a.CertificateArn}, {"hostedZoneId", a.HostedZoneID}, {"hostedZoneName", a.HostedZoneName}} {
			if f.value != "" {
				p.add("api."+f.name, "set without api.domainName; set the custom domain too, or remove it")
			}
		}
		return
	}
	if !validDomain(a.DomainName) {
		p.add("api.domainName", "%q is not a domain name; use a lowercase host name such as hooks.example.com (no scheme, path, trailing dot or wildcard)", a.DomainName)
	}
	if a.CertificateArn != "" && !certARNPattern().MatchString(a.CertificateArn) {
		p.add("api.certificateArn", "%q is not an ACM certificate ARN; use arn:aws:acm:REGION:ACCOUNT:certificate/ID of a certificate in the stack's region", a.CertificateArn)
	}
	zone := a.HostedZoneID != "" || a.HostedZoneName != ""
	switch {
	case a.CertificateArn == "" && !zone:
		p.add("api.domainName", "needs a certificate: set api.certificateArn (an ACM certificate for %s in the stack's region), or api.hostedZoneId and api.hostedZoneName to create a DNS-validated one", a.DomainName)
	case a.HostedZoneID != "" && a.HostedZoneName == "":
		p.add("api.hostedZoneName", "missing; api.hostedZoneId needs the zone's name too (for example example.com)")
	case a.HostedZoneID == "" && a.HostedZoneName != "":
		p.add("api.hostedZoneId", "missing; api.hostedZoneName needs the zone's ID too (for example Z0123456789ABCDEFGHIJ)")
	}
	if a.HostedZoneID != "" && !zoneIDPattern().MatchString(a.HostedZoneID) {
		p.add("api.hostedZoneId", "%q is not a Route 53 hosted zone ID; use the ID alone, such as Z0123456789ABCDEFGHIJ", a.HostedZoneID)
	}
	if a.HostedZoneName != "" {
		switch {
		case !validDomain(a.HostedZoneName):
			p.add("api.hostedZoneName", "%q is not a domain name; use the zone's name without a trailing dot, such as example.com", a.HostedZoneName)
		case a.DomainName != a.HostedZoneName && !strings.HasSuffix(a.DomainName, "."+a.HostedZoneName):
			p.add("api.domainName", "%q is not in the hosted zone %q; use a name under it or the zone that holds it", a.DomainName, a.HostedZoneName)
		}
	}
}

func validDomain(s string) bool {
	return len(s) <= maxDomainLength && domainPattern().MatchString(s)
}

func (l *SourceLimits) validate(p *problems, at string, a *API) {
	if l.RateLimit < 0 {
		p.add(at+".rateLimit", "%g is negative; use requests per second above 0 (default api.rateLimit, %g)", l.RateLimit, a.Rate())
	}
	if l.BurstLimit < 0 {
		p.add(at+".burstLimit", "%d is negative; use a request count above 0 (default api.burstLimit, %d)", l.BurstLimit, a.Burst())
	}
	if l.ClientErrorAlarm < 0 {
		p.add(at+".clientErrorAlarm", "%d is negative; use a count of 4xx answers in five minutes above 0 (default %d)", l.ClientErrorAlarm, DefaultClientErrorAlarm)
	}
	if l.AllowedIPs == nil {
		return
	}
	if !a.WAF.Enabled {
		p.add(at+".allowedIps", "set while api.waf.enabled is false; the allow-list is a WAF rule: enable api.waf (api.type %q), or remove the list", APITypeREST)
	}
	if len(l.AllowedIPs) == 0 {
		p.add(at+".allowedIps", "is empty, which would block every request; list the provider's addresses, or remove it")
	}
	seen := map[netip.Prefix]int{}
	families := map[bool]int{}
	for i, s := range l.AllowedIPs {
		field := fmt.Sprintf("%s.allowedIps[%d]", at, i)
		prefix, err := ParseAllowedIP(s)
		if err != nil {
			p.add(field, "%v", err)
			continue
		}
		if first, dup := seen[prefix]; dup {
			p.add(field, "%s is listed twice (also allowedIps[%d]); list each block once", prefix, first)
			continue
		}
		seen[prefix] = i
		families[prefix.Addr().Is4()]++
	}
	for v4, n := range families {
		if n > MaxAllowedIPs {
			p.add(at+".allowedIps", "has %d %s blocks; an AWS WAF IP set holds at most %d", n, map[bool]string{true: "IPv4", false: "IPv6"}[v4], MaxAllowedIPs)
		}
	}
}

// ParseAllowedIP reads one allowedIps entry: a CIDR block with no host bits
// set, or a single address (a /32 or /128 block).
func ParseAllowedIP(s string) (netip.Prefix, error) {
	var prefix netip.Prefix
	if strings.Contains(s, "/") {
		pr, err := netip.ParsePrefix(s)
		if err != nil {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR block or an IP address; use one such as 192.30.252.0/22 or 2001:db8::/32", s)
		}
		prefix = pr
	} else {
		addr, err := netip.ParseAddr(s)
		if err != nil || addr.Zone() != "" {
			return netip.Prefix{}, fmt.Errorf("%q is not a CIDR block or an IP address; use one such as 192.30.252.0/22 or 2001:db8::/32", s)
		}
		prefix = netip.PrefixFrom(addr, addr.BitLen())
	}
	if prefix.Addr().Is4In6() {
		return netip.Prefix{}, fmt.Errorf("%q is an IPv4-mapped IPv6 block; write it as IPv4", s)
	}
	if prefix.Bits() == 0 {
		return netip.Prefix{}, fmt.Errorf("%q allows every address; remove the allow-list instead", s)
	}
	if m := prefix.Masked(); m != prefix {
		return netip.Prefix{}, fmt.Errorf("%q has host bits set; use %s", s, m)
	}
	return prefix, nil
}
