package config

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

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

func (m *Metrics) validate(p *problems) {
	if m.Sink != "" && m.Sink != SinkEMF && m.Sink != SinkCloudWatch {
		p.add("metrics.sink", "unknown sink %q; use %q (Embedded Metric Format, default) or %q (PutMetricData)", m.Sink, SinkEMF, SinkCloudWatch)
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
