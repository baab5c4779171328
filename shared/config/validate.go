package config

import (
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/provider"
)

// logRetentionDays are the values CloudWatch Logs accepts.
var logRetentionDays = []int{1, 3, 5, 7, 14, 30, 60, 90, 120, 150, 180, 365, 400, 545, 731, 1096, 1827, 2192, 2557, 2922, 3288, 3653}

// problems collects validation errors, each naming the field path, the bad
// value and what would be valid.
type problems []error

func (p *problems) add(field, format string, args ...any) {
	*p = append(*p, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
}

// Validate checks the whole configuration and reports every problem at once.
func (c *Config) Validate() error {
	var p problems
	if len(c.Sources) == 0 {
		p.add("sources", "no sources; add at least one, e.g. {\"name\": \"stripe\", \"verify\": {\"kind\": \"stripe\", \"secretName\": \"hookfan/sources/stripe\"}}")
	}
	sourceNames := map[string]int{}
	for i := range c.Sources {
		c.Sources[i].validate(&p, fmt.Sprintf("sources[%d]", i), sourceNames, i, c.API)
	}
	c.validateSourceSecrets(&p)
	destNames := map[string]int{}
	for i := range c.Destinations {
		c.Destinations[i].validate(&p, fmt.Sprintf("destinations[%d]", i), destNames, i, sourceNames)
	}
	c.Metrics.validate(&p)
	c.API.validate(&p)
	c.validateEdge(&p)
	c.Alarms.validate(&p)
	c.validateDedupe(&p)
	c.Archive.validate(&p)
	c.validateLean(&p)
	return errors.Join(p...)
}

func validName(p *problems, field, name, what string, seen map[string]int, index int) {
	if !isName(name) {
		p.add(field, "%q is not a valid %s name; use 1 to 64 lowercase letters, digits or hyphens", name, what)
		return
	}
	if first, dup := seen[name]; dup {
		p.add(field, "duplicate %s name %q (also used by %ss[%d]); give each %s a unique name", what, name, what, first, what)
		return
	}
	seen[name] = index
}

func validSecretName(p *problems, field, name string) {
	if !isSecretName(name) {
		p.add(field, "%q is not a valid Secrets Manager name or ARN; use letters, digits and /_+=.@- (at most 512)", name)
	}
}

func (s *Source) validate(p *problems, at string, seen map[string]int, index int, api API) {
	validName(p, at+".name", s.Name, "source", seen, index)
	v := &s.Verify
	kind := at + ".verify"
	k, known := provider.Lookup(v.Kind)
	if !known {
		p.add(kind+".kind", "unknown verification kind %q; use one of %s", v.Kind, strings.Join(provider.Names(nil), ", "))
	}
	if v.SecretName == "" {
		p.add(kind+".secretName", "missing; every source needs the name of the Secrets Manager secret that holds its signing secret or token")
	} else {
		validSecretName(p, kind+".secretName", v.SecretName)
	}
	switch {
	case v.ToleranceSeconds != 0 && !k.Timestamped:
		p.add(kind+".toleranceSeconds", "set for kind %q, which carries no timestamp; remove it (it applies to %s)", v.Kind, kindList(func(k provider.Kind) bool { return k.Timestamped }))
	case v.ToleranceSeconds < 0 || v.ToleranceSeconds > MaxToleranceSeconds:
		p.add(kind+".toleranceSeconds", "%d is out of range; use 1 to %d seconds (default %d)", v.ToleranceSeconds, MaxToleranceSeconds, DefaultToleranceSeconds)
	}
	named := func(k provider.Kind) bool { return k.HeaderCarries != "" }
	switch {
	case named(k) && v.Header == "":
		p.add(kind+".header", "missing; kind %q needs the name of the request header that carries the %s", v.Kind, k.HeaderCarries)
	case named(k) && !isHeaderName(v.Header):
		p.add(kind+".header", "%q is not a valid HTTP header name", v.Header)
	case !named(k) && v.Header != "":
		p.add(kind+".header", "set for kind %q, whose header is fixed; remove it (it applies to %s)", v.Kind, kindList(named))
	}
	setting := func(field, value string, takes func(provider.Kind) bool, allowed []string) {
		switch {
		case value == "":
		case !takes(k):
			p.add(kind+"."+field, "set for kind %q; remove it (it applies to %s only)", v.Kind, kindList(takes))
		case len(allowed) > 0 && !slices.Contains(allowed, value):
			p.add(kind+"."+field, "%q is not supported; use one of %s", value, strings.Join(allowed, ", "))
		}
	}
	setting("algorithm", v.Algorithm, func(k provider.Kind) bool { return len(k.Algorithms) > 0 }, k.Algorithms)
	setting("encoding", v.Encoding, func(k provider.Kind) bool { return len(k.Encodings) > 0 }, k.Encodings)
	setting("prefix", v.Prefix, func(k provider.Kind) bool { return k.Prefix }, nil)
	if ceiling := api.MaxBodyBytes(); s.MaxBodyBytes < 0 || s.MaxBodyBytes > ceiling {
		p.add(at+".maxBodyBytes", "%d is out of range; use 1 to %d (the largest body an API Gateway %s API hands to Lambda within its 6 MB payload; bodies over %d travel through S3), or omit it for %d (one SNS message)",
			s.MaxBodyBytes, ceiling, api.Kind(), MaxBodyBytesCeiling, MaxBodyBytesCeiling)
	}
	s.Event.validate(p, at+".event", v.Kind, k.Places)
	s.ReplayProtection.validate(p, at+".replayProtection", v.Kind, k, known)
}

// kindList names the kinds for which keep is true, for a message: "a, b
// and c".
func kindList(keep func(provider.Kind) bool) string {
	names := provider.Names(keep)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func (e *EventFields) validate(p *problems, at, kind string, places bool) {
	if *e == (EventFields{}) {
		return
	}
	if !places {
		p.add(at, "set for kind %q, whose event id and type come from the provider's own headers or body; remove it (it applies to %s)", kind, kindList(func(k provider.Kind) bool { return k.Places }))
		return
	}
	pair := func(name, header, field string) {
		if header != "" && field != "" {
			p.add(at, "both %sHeader and %sField are set; keep one", name, name)
		}
		if header != "" && !isHeaderName(header) {
			p.add(at+"."+name+"Header", "%q is not a valid HTTP header name", header)
		}
		if field != "" && !isFieldPath(field) {
			p.add(at+"."+name+"Field", "%q is not a valid JSON field path; use dot-separated names such as \"data.id\"", field)
		}
	}
	pair("id", e.IDHeader, e.IDField)
	pair("type", e.TypeHeader, e.TypeField)
}

func (d *Destination) validate(p *problems, at string, seen map[string]int, index int, sources map[string]int) {
	validName(p, at+".name", d.Name, "destination", seen, index)
	d.validateURL(p, at)
	d.Filter.validate(p, at+".filter", sources)
	d.validateHeaders(p, at+".headers")
	d.Retry.validate(p, at+".retry")
	if d.TimeoutSeconds != 0 && (d.TimeoutSeconds < MinTimeoutSeconds || d.TimeoutSeconds > MaxTimeoutSeconds) {
		p.add(at+".timeoutSeconds", "%d is out of range; use %d to %d seconds (default %d)", d.TimeoutSeconds, MinTimeoutSeconds, MaxTimeoutSeconds, DefaultTimeoutSeconds)
	}
	if d.MaxConcurrency != 0 && (d.MaxConcurrency < MinMaxConcurrency || d.MaxConcurrency > MaxMaxConcurrency) {
		p.add(at+".maxConcurrency", "%d is out of range; the SQS event source mapping accepts %d to %d (default %d)", d.MaxConcurrency, MinMaxConcurrency, MaxMaxConcurrency, DefaultMaxConcurrency)
	}
	if d.BatchSize < 0 || d.BatchSize > MaxBatchSize {
		p.add(at+".batchSize", "%d is out of range; use 1 to %d (default %d)", d.BatchSize, MaxBatchSize, DefaultBatchSize)
	}
	if d.BatchWindowSeconds < 0 || d.BatchWindowSeconds > MaxBatchWindowSeconds {
		p.add(at+".batchWindowSeconds", "%d is out of range; use 0 to %d seconds", d.BatchWindowSeconds, MaxBatchWindowSeconds)
	}
	if d.SecretName != "" {
		validSecretName(p, at+".secretName", d.SecretName)
	}
	if d.TimeoutSeconds >= 0 && d.TimeoutSeconds <= MaxTimeoutSeconds && d.BatchWindowSeconds >= 0 && d.BatchWindowSeconds <= MaxBatchWindowSeconds {
		longest := d.MaxDelay()
		for i, delay := range d.Retry.Schedule {
			if delay.D() > longest && delay.D() <= MaxVisibility {
				p.add(fmt.Sprintf("%s.retry.schedule[%d]", at, i), "%s cannot be honoured: SQS hides a message at most %s from its receive, which can precede this delay by the function timeout (%s), the batch window (%s) and a %s margin; use at most %s",
					delay.D(), MaxVisibility, d.FunctionTimeout(), d.BatchWindow(), VisibilityCapMargin, longest)
			}
		}
	}
	if d.Retry.valid() && d.TimeoutSeconds >= 0 {
		if need := d.retentionNeeded(); need > MaxRetention {
			p.add(at+".retry.schedule", "needs %s of queue retention (delays with jitter plus one visibility timeout per attempt plus %s), more than SQS's maximum of %s; shorten the schedule", roundUp(need, time.Hour), RetentionMargin, MaxRetention)
		}
	}
	if d.Pause != nil {
		d.Pause.validate(p, at+".pause", d)
	}
}

func (d *Destination) validateURL(p *problems, at string) {
	switch {
	case d.URL != "" && d.URLSecretName != "":
		p.add(at, "both url and urlSecretName are set; keep one (urlSecretName when the URL carries a token in its path or query)")
		return
	case d.URLSecretName != "":
		validSecretName(p, at+".urlSecretName", d.URLSecretName)
		return
	}
	at += ".url"
	u, ok := parseAbsolute(d.URL)
	if !ok {
		p.add(at, "%q is not an absolute URL; use https://host/path (or urlSecretName, a secret holding it)", d.URL)
		return
	}
	subject := fmt.Sprintf("%q", d.URL)
	if u.User != nil {
		subject = fmt.Sprintf("%q", redactUser(u))
	}
	for _, msg := range urlProblems(u, d.AllowPrivateNetworks, subject) {
		p.add(at, "%s", msg)
	}
	d.validateURLQuery(p, at, u)
}

func redactUser(u *url.URL) string {
	c := *u
	c.User = url.User("REDACTED")
	return c.String()
}

func (f *Filter) validate(p *problems, at string, sources map[string]int) {
	seen := map[string]bool{}
	for i, s := range f.Sources {
		field := fmt.Sprintf("%s.sources[%d]", at, i)
		if _, ok := sources[s]; !ok {
			p.add(field, "%q is not a configured source; use one of the names in sources[]", s)
		}
		if seen[s] {
			p.add(field, "%q is listed twice; list each source once", s)
		}
		seen[s] = true
	}
	if len(f.Types) > 0 && len(f.ExcludeTypes) > 0 {
		p.add(at, "both types and excludeTypes are set; SNS cannot combine them on one attribute, keep one")
	}
	checkTypes := func(name string, list []string) {
		for i, t := range list {
			field := fmt.Sprintf("%s.%s[%d]", at, name, i)
			switch {
			case t == "" || t == "*":
				p.add(field, "%q matches nothing useful; use an exact type or a prefix such as \"invoice.*\" (omit the list to receive every type)", t)
			case strings.Contains(strings.TrimSuffix(t, "*"), "*"):
				p.add(field, "%q has a \"*\" before its end; only a trailing \"*\" (prefix match) is supported", t)
			default:
				if i := strings.IndexFunc(t, notInTypePattern); i >= 0 {
					r, _ := utf8.DecodeRuneInString(t[i:])
					p.add(field, "%q holds %q, which a type pattern does not interpret: a pattern is an exact type or a prefix ending in \"*\", never a regular expression, so this matches no event; list each type (\"charge.refunded\", \"charge.failed\") or a prefix (\"charge.*\")", t, string(r))
				}
			}
		}
	}
	checkTypes("types", f.Types)
	checkTypes("excludeTypes", f.ExcludeTypes)
	prefixes := 0
	for _, t := range f.ExcludeTypes {
		if strings.HasSuffix(t, "*") {
			prefixes++
		}
	}
	if prefixes > 0 && len(f.ExcludeTypes) > 1 {
		p.add(at+".excludeTypes", "%q mixes a prefix with other values; SNS anything-but takes either exact values or a single prefix", f.ExcludeTypes)
	}
	combos := max(len(f.Sources), 1) * max(len(f.Types), len(f.ExcludeTypes), 1)
	if combos > MaxFilterCombinations {
		p.add(at, "%d sources × types combinations; SNS allows at most %d per filter policy, use prefixes or split the destination", combos, MaxFilterCombinations)
	}
	if len(f.Body) > 0 {
		if _, err := bodyfilter.Compile(f.Body); err != nil {
			var ps bodyfilter.Problems
			if !errors.As(err, &ps) {
				p.add(at+".body", "%v", err)
			}
			for _, prob := range ps {
				p.add(at+"."+prob.Path, "%s", prob.Msg)
			}
		}
	}
}

// notInTypePattern reports the characters a type pattern cannot hold:
// those of regular expressions and glob classes (a pattern is matched
// exactly, or as a prefix before its trailing "*"), white space and
// control characters, which no event type carries.
func notInTypePattern(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || strings.ContainsRune(`^$()[]{}|\?+`, r)
}

func (r *Retry) valid() bool {
	for _, d := range r.Schedule {
		if d <= 0 || d.D() > MaxVisibility {
			return false
		}
	}
	return r.Jitter == nil || (*r.Jitter >= 0 && *r.Jitter < 1)
}

func (r *Retry) validate(p *problems, at string) {
	if r.Schedule != nil && len(r.Schedule) == 0 {
		p.add(at+".schedule", "is empty; list at least one delay, or omit it for the default (%s)", formatSchedule(DefaultSchedule))
	}
	if len(r.Schedule) > MaxScheduleLength {
		p.add(at+".schedule", "has %d delays; use at most %d", len(r.Schedule), MaxScheduleLength)
	}
	for i, d := range r.Schedule {
		if d <= 0 || d.D() > MaxVisibility {
			p.add(fmt.Sprintf("%s.schedule[%d]", at, i), "%s is out of range; each delay must be more than 0 and at most %s (SQS's longest visibility timeout)", d.D(), MaxVisibility)
		}
	}
	if r.Jitter != nil && (*r.Jitter < 0 || *r.Jitter >= 1) {
		p.add(at+".jitter", "%g is out of range; use 0 (none) up to but not including 1 (default %g)", *r.Jitter, DefaultJitter)
	}
}

func (m *Metrics) validate(p *problems) {
	if m.Sink != "" && m.Sink != SinkEMF && m.Sink != SinkCloudWatch {
		p.add("metrics.sink", "unknown sink %q; use %q (Embedded Metric Format, default) or %q (PutMetricData)", m.Sink, SinkEMF, SinkCloudWatch)
	}
}

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

func (a *Alarms) validate(p *problems) {
	if a.Email != "" && (!strings.Contains(a.Email, "@") || strings.ContainsAny(a.Email, " \t\r\n")) {
		p.add("alarms.email", "%q is not an email address", a.Email)
	}
	if a.OldestMessageSeconds != 0 && a.OldestMessageSeconds < 60 {
		p.add("alarms.oldestMessageSeconds", "%d is too small; use at least 60 seconds (default %d)", a.OldestMessageSeconds, DefaultOldestMessageAlarmSeconds)
	}
}

func (c *Config) validateDedupe(p *problems) {
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	if days < 0 || days > MaxRecordDays {
		p.add("dedupe.recordDays", "%d is out of range; use 1 to %d (default %d)", c.Dedupe.RecordDays, MaxRecordDays, DefaultRecordDays)
		return
	}
	longest := time.Duration(0)
	for i := range c.Destinations {
		d := &c.Destinations[i]
		if d.Retry.valid() && d.TimeoutSeconds >= 0 {
			longest = max(longest, min(d.Retention(), MaxRetention))
		}
	}
	need := int(roundUp(longest+DLQRetention, 24*time.Hour) / (24 * time.Hour))
	if days < need {
		p.add("dedupe.recordDays", "%d days is shorter than the longest queue retention plus the DLQ's %d days; use at least %d so a redriven message is still deduplicated", days, int(DLQRetention.Hours()/24), need)
	}
}

func (a *Archive) validate(p *problems) {
	if a.Days != nil && (*a.Days < 0 || *a.Days > MaxArchiveDays) {
		p.add("archive.days", "%d is out of range; use 1 to %d days, or 0 to turn the archive off (default %d)", *a.Days, MaxArchiveDays, DefaultArchiveDays)
	}
}

func formatSchedule(s []Duration) string {
	parts := make([]string, len(s))
	for i, d := range s {
		parts[i] = d.D().String()
	}
	return strings.Join(parts, ", ")
}
