package ingest

import "strings"

// proxyHeader reads an API Gateway proxy event's headers without regard to
// case. API Gateway keeps the sender's spelling of each name, and a sender
// may spell one name several ways; all spellings are read, in a stable order,
// so a lookup never depends on map iteration. The multi-value map, when
// present, is preferred: it holds every value of a repeated header.
type proxyHeader struct {
	single map[string]string
	multi  map[string][]string
	// index holds the multi-value map's entries once a lookup has read
	// them, so that the request's later lookups scan it instead of
	// iterating the map again. It is reset with reset.
	index   []headerEntry
	indexed bool
}

type headerEntry struct {
	name   string
	values []string
}

// reset points h at another request's headers, keeping the index's memory.
func (h *proxyHeader) reset(single map[string]string, multi map[string][]string) {
	clear(h.index)
	*h = proxyHeader{single: single, multi: multi, index: h.index[:0]}
}

// Values returns every value of the header called name.
func (h *proxyHeader) Values(name string) []string {
	if len(h.multi) > 0 {
		return h.multiValues(name)
	}
	var keys [4]string
	matched := keys[:0]
	for k := range h.single {
		if len(k) == len(name) && strings.EqualFold(k, name) {
			matched = append(matched, k)
		}
	}
	if len(matched) == 0 {
		return nil
	}
	sortStrings(matched)
	out := make([]string, len(matched))
	for i, k := range matched {
		out[i] = h.single[k]
	}
	return out
}

func (h *proxyHeader) multiValues(name string) []string {
	if !h.indexed {
		for k, vs := range h.multi {
			h.index = append(h.index, headerEntry{k, vs})
		}
		h.indexed = true
	}
	var keys [4]string
	var only []string // the values of the one spelling, the common case
	matched := keys[:0]
	for _, e := range h.index {
		if len(e.name) == len(name) && strings.EqualFold(e.name, name) {
			matched = append(matched, e.name)
			only = e.values
		}
	}
	switch len(matched) {
	case 0:
		return nil
	case 1:
		return only
	}
	sortStrings(matched)
	var out []string
	for _, k := range matched {
		out = append(out, h.multi[k]...)
	}
	return out
}

// sortStrings is an insertion sort for the few spellings of one name.
func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}
