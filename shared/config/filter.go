package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/bodyfilter"
)

// MaxFilterCombinations is SNS's limit on the product of the value counts
// across the keys of one filter policy.
const MaxFilterCombinations = 150

// Filter selects the events a destination receives. Empty means all.
type Filter struct {
	// Sources are exact source names.
	Sources []string `json:"sources,omitempty"`
	// Types are exact event types, or prefixes written with a trailing "*"
	// ("payment_intent.*").
	Types []string `json:"types,omitempty"`
	// ExcludeTypes receives every type but these (SNS anything-but): exact
	// types, or a single prefix with a trailing "*". Exclusive with Types.
	ExcludeTypes []string `json:"excludeTypes,omitempty"`
	// Body filters on fields of a JSON body, in SNS's filter-policy syntax
	// (shared/bodyfilter): exact strings and numbers, prefix, numeric
	// comparisons and ranges, exists, anything-but; keys nest.
	Body BodyFilter `json:"body,omitempty"`
}

// BodyFilter is a body filter policy as JSON, kept compact so that a
// destination's configuration reads back unchanged from the function's
// environment.
type BodyFilter []byte

// UnmarshalJSON keeps the policy compacted; null means none.
func (b *BodyFilter) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = nil
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, data); err != nil {
		return err
	}
	*b = out.Bytes()
	return nil
}

// MarshalJSON writes the policy as it is.
func (b BodyFilter) MarshalJSON() ([]byte, error) {
	if len(b) == 0 {
		return []byte("null"), nil
	}
	return b, nil
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
