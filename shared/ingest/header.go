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

// Values returns every value of the header called name.
func (h proxyHeader) Values(name string) []string {
	var spellings [2]string
	names := spellings[:0]
	if len(h.multi) > 0 {
		for k := range h.multi {
			if strings.EqualFold(k, name) {
				names = append(names, k)
			}
		}
	} else {
		for k := range h.single {
			if strings.EqualFold(k, name) {
				names = append(names, k)
			}
		}
	}
	if len(names) > 1 {
		slices.Sort(names)
	}
	var out []string
	for _, k := range names {
		if len(h.multi) > 0 {
			out = append(out, h.multi[k]...)
		} else {
			out = append(out, h.single[k])
		}
	}
	return out
}
