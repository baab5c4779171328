package ingest

import (
	"slices"
	"strings"
)

// proxyHeader reads an API Gateway proxy event's headers without regard to
// case. API Gateway keeps the sender's spelling of each name, and a sender
// may spell one name several ways: every spelling is read, in a stable
// order, so a lookup never depends on map iteration. The multi-value map,
// when present, is preferred: it holds every value of a repeated header.
type proxyHeader struct {
	single map[string]string
	multi  map[string][]string
}

// Values returns every value of the header called name. The slice may be
// the event's own: callers only read it.
func (h proxyHeader) Values(name string) []string {
	if len(h.multi) > 0 {
		return values(h.multi, name, func(vs []string) []string { return vs })
	}
	return values(h.single, name, func(v string) []string { return []string{v} })
}

// values gathers the values of name's spellings in m, the spellings in
// sorted order. Header names are ASCII (RFC 9110): a spelling matches
// when it has name's length and folds to it, which for an ASCII name is
// ASCII case-folding; the length test makes most keys cheap to pass over
// (an API Gateway event carries twenty or so headers).
func values[V any](m map[string]V, name string, list func(V) []string) []string {
	var found []string // spellings of name
	var first V
	for k, v := range m {
		if len(k) == len(name) && strings.EqualFold(k, name) {
			if found == nil {
				first = v
			}
			found = append(found, k)
		}
	}
	switch len(found) {
	case 0:
		return nil
	case 1:
		return slices.Clip(list(first))
	}
	slices.Sort(found)
	var out []string
	for _, k := range found {
		out = append(out, list(m[k])...)
	}
	return out
}
