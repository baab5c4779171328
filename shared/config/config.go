// Package config holds Hookfan's one typed configuration: the webhook sources,
// the destinations that subscribe to them, and the few stack-wide settings.
//
// The CDK app, the local stack and the Lambda functions all load and validate
// it through this package, and every value derived from it (SQS redrive and
// retention, visibility timeout, SNS filter policy) is computed here and
// nowhere else.
package config

import (
	"errors"
	"fmt"
)

// Config is the whole Hookfan configuration.
type Config struct {
	Sources      []Source      `json:"sources"`
	Destinations []Destination `json:"destinations"`
	Metrics      Metrics       `json:"metrics"`
	API          API           `json:"api"`
	Dedupe       Dedupe        `json:"dedupe"`
	Alarms       Alarms        `json:"alarms"`
	Archive      Archive       `json:"archive,omitzero"`
	Ingest       Ingest        `json:"ingest,omitzero"`
	// Operators may assume the stack's operator role (Operators).
	Operators Operators `json:"operators,omitzero"`
	// Tracing is "off" (default), "sampled" or "all" (lean.go).
	Tracing string `json:"tracing,omitempty"`
	// Functions sets the functions' memory and system log level.
	Functions Functions `json:"functions,omitzero"`
	// TopicKey is "customer" (default: a customer managed KMS key, $1 a
	// month) or "aws-managed" (SNS's AWS managed key, alias/aws/sns) for
	// the fan-out topic (lean.go).
	TopicKey string `json:"topicKey,omitempty"`
	// Egress gives the lanes that ask for it static public addresses
	// (egress.go).
	Egress Egress `json:"egress,omitzero"`
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
	c.validateIngest(&p)
	c.validateLean(&p)
	c.Operators.validate(&p)
	c.validateEgress(&p)
	c.validateOrdering(&p)
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
