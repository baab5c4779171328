package config

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/provider"
)

// MaxScheduleLength bounds a retry schedule.
const MaxScheduleLength = 50

// MaxRecordDays bounds dedupe.recordDays.
const MaxRecordDays = 3650

// Tolerance is the accepted clock skew for timestamped kinds.
func (v Verify) Tolerance() time.Duration {
	if v.ToleranceSeconds == 0 {
		return provider.DefaultTolerance
	}
	return time.Duration(v.ToleranceSeconds) * time.Second
}

// Params is what this verify block says to its kind.
func (v Verify) Params() provider.Params {
	return provider.Params{Tolerance: v.Tolerance(), Header: v.Header, Algorithm: v.Algorithm, Encoding: v.Encoding, Prefix: v.Prefix}
}

// Params is what this source's configuration says to its kind.
func (s Source) Params() provider.Params {
	p := s.Verify.Params()
	p.Event = s.Event.Places()
	return p
}

// Places is the event block as the kinds read it.
func (e EventFields) Places() provider.Places {
	return provider.Places{IDHeader: e.IDHeader, IDField: e.IDField, TypeHeader: e.TypeHeader, TypeField: e.TypeField}
}

// BodyLimit is the largest body this source accepts.
func (s Source) BodyLimit() int {
	if s.MaxBodyBytes == 0 {
		return MaxBodyBytesCeiling
	}
	return s.MaxBodyBytes
}

// Timeout is the whole-request deadline of one delivery.
func (d Destination) Timeout() time.Duration {
	if d.TimeoutSeconds == 0 {
		return DefaultTimeoutSeconds * time.Second
	}
	return time.Duration(d.TimeoutSeconds) * time.Second
}

// Concurrency is the event source mapping's MaximumConcurrency.
func (d Destination) Concurrency() int {
	if d.MaxConcurrency == 0 {
		return DefaultMaxConcurrency
	}
	return d.MaxConcurrency
}

// Batch is the event source mapping's batch size.
func (d Destination) Batch() int {
	if d.BatchSize == 0 {
		return DefaultBatchSize
	}
	return d.BatchSize
}

// BatchWindow is the event source mapping's maximum batching window.
func (d Destination) BatchWindow() time.Duration {
	return time.Duration(d.BatchWindowSeconds) * time.Second
}

// Schedule is the retry schedule in force: the delays before each retry.
func (d Destination) Schedule() []time.Duration {
	src := d.Retry.Schedule
	if len(src) == 0 {
		src = DefaultSchedule
	}
	out := make([]time.Duration, len(src))
	for i, v := range src {
		out[i] = v.D()
	}
	return out
}

// Jitter is the retry jitter fraction in force.
func (d Destination) Jitter() float64 {
	if d.Retry.Jitter == nil {
		return DefaultJitter
	}
	return *d.Retry.Jitter
}

// RecordTTL is how long a delivery record is kept.
func (c *Config) RecordTTL() time.Duration {
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// RetentionDays is how many days an archived event is kept; 0 means the
// archive is off.
func (a Archive) RetentionDays() int {
	if a.Days == nil {
		return DefaultArchiveDays
	}
	return *a.Days
}

// Enabled reports whether accepted events are archived.
func (a Archive) Enabled() bool { return a.RetentionDays() > 0 }

// Sink is the metrics sink in force.
func (m Metrics) SinkName() string {
	if m.Sink == "" {
		return SinkEMF
	}
	return m.Sink
}

// OldestMessageThreshold is the queue-age alarm threshold.
func (a Alarms) OldestMessageThreshold() time.Duration {
	if a.OldestMessageSeconds == 0 {
		return DefaultOldestMessageAlarmSeconds * time.Second
	}
	return time.Duration(a.OldestMessageSeconds) * time.Second
}

// FilterPolicy is the SNS subscription filter policy (MessageAttributes
// scope) for the destination's filter, or "" when it receives everything.
// Keys are "source" and "type"; a trailing "*" becomes a prefix match and
// excludeTypes becomes anything-but.
func (f Filter) FilterPolicy() string {
	policy := map[string][]any{}
	for _, s := range f.Sources {
		policy["source"] = append(policy["source"], s)
	}
	for _, t := range f.Types {
		if p, ok := strings.CutSuffix(t, "*"); ok {
			policy["type"] = append(policy["type"], map[string]string{"prefix": p})
		} else {
			policy["type"] = append(policy["type"], t)
		}
	}
	if len(f.ExcludeTypes) == 1 && strings.HasSuffix(f.ExcludeTypes[0], "*") {
		policy["type"] = []any{map[string]any{"anything-but": map[string]string{"prefix": strings.TrimSuffix(f.ExcludeTypes[0], "*")}}}
	} else if len(f.ExcludeTypes) > 0 {
		policy["type"] = []any{map[string]any{"anything-but": f.ExcludeTypes}}
	}
	if len(policy) == 0 {
		return ""
	}
	b, err := json.Marshal(policy)
	if err != nil {
		panic(err) // only strings, slices and maps: cannot fail
	}
	return string(b)
}

// Matches reports whether an event of source and type passes the filter,
// as SNS evaluates the filter policy FilterPolicy renders: the source is
// one of Sources (or there are none), and the type matches one of Types
// exactly or by prefix, or none of ExcludeTypes.
func (f Filter) Matches(source, typ string) bool {
	if len(f.Sources) > 0 && !slices.Contains(f.Sources, source) {
		return false
	}
	matchesOne := func(list []string) bool {
		for _, t := range list {
			if p, ok := strings.CutSuffix(t, "*"); ok && strings.HasPrefix(typ, p) || t == typ {
				return true
			}
		}
		return false
	}
	switch {
	case len(f.Types) > 0:
		return matchesOne(f.Types)
	case len(f.ExcludeTypes) > 0:
		return !matchesOne(f.ExcludeTypes)
	}
	return true
}

// Filter policy scopes of an SNS subscription.
const (
	ScopeAttributes = "MessageAttributes"
	ScopeBody       = "MessageBody"
)

// SubscriptionFilter is the filter policy SNS applies to a destination's
// subscription and its scope ("" when the subscription takes every event).
//
// A policy has one scope. Source and type are message attributes, so a
// destination filtering on them gets the MessageAttributes policy and its
// body filter is checked by the deliver function alone. A destination with
// only a body filter gets SNS's MessageBody filtering when that can never
// drop an event the deliver function would accept: every condition is one
// whose meaning SNS documents in full and the function shares (exact
// strings and prefixes: bodyfilter.Filter.SNSSafe), and no event reaches
// SNS as a reference to S3 (no source takes large payloads), whose body SNS
// would read instead of the event's. A body SNS cannot parse (one published
// as base64, a form-encoded one) matches no body filter on either side. The
// deliver function checks the body filter in every case.
func (c *Config) SubscriptionFilter(d Destination) (policy, scope string) {
	f := d.Filter
	bodyOnly := len(f.Body) > 0 && len(f.Sources) == 0 && len(f.Types) == 0 && len(f.ExcludeTypes) == 0
	if bodyOnly && !c.LargePayloads() {
		if bf, err := bodyfilter.Compile(f.Body); err == nil && bf.SNSSafe() {
			return string(f.Body), ScopeBody
		}
	}
	if p := f.FilterPolicy(); p != "" {
		return p, ScopeAttributes
	}
	return "", ""
}

// Source finds a source by name.
func (c *Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Destination finds a destination by name.
func (c *Config) Destination(name string) (Destination, bool) {
	for _, d := range c.Destinations {
		if d.Name == name {
			return d, true
		}
	}
	return Destination{}, false
}
