package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"sync"
)

// emfMaxValues is EMF's limit on values per metric in one document.
const emfMaxValues = 100

// EMF writes CloudWatch Embedded Metric Format documents, one JSON line per
// set of dimension values.
type EMF struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEMF returns a sink writing EMF lines to w (stdout in Lambda).
func NewEMF(w io.Writer) *EMF { return &EMF{w: w} }

type emfGroup struct {
	dims   []Dimension
	order  []string
	units  map[string]Unit
	values map[string][]float64
	ts     int64
}

// Publish writes the points as EMF documents.
func (e *EMF) Publish(_ context.Context, points []Point) error {
	groups := map[string]*emfGroup{}
	var keys []string
	for _, p := range points {
		k := dimKey(p.Dimensions)
		g, ok := groups[k]
		if !ok {
			g = &emfGroup{dims: p.Dimensions, units: map[string]Unit{}, values: map[string][]float64{}, ts: p.Time.UnixMilli()}
			groups[k] = g
			keys = append(keys, k)
		}
		if _, seen := g.values[p.Name]; !seen {
			g.order = append(g.order, p.Name)
			g.units[p.Name] = p.Unit
		}
		g.values[p.Name] = append(g.values[p.Name], p.Value)
	}
	var buf bytes.Buffer
	for _, k := range keys {
		g := groups[k]
		for chunk := 0; ; chunk++ {
			doc, more := g.document(chunk)
			if doc == nil {
				break
			}
			line, err := json.Marshal(doc)
			if err != nil {
				return err
			}
			buf.Write(line)
			buf.WriteByte('\n')
			if !more {
				break
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.w.Write(buf.Bytes())
	return err
}

// document renders the chunk-th slice of up to emfMaxValues values per metric.
func (g *emfGroup) document(chunk int) (map[string]any, bool) {
	type metricDef struct {
		Name string `json:"Name"`
		Unit Unit   `json:"Unit"`
	}
	doc := map[string]any{}
	var defs []metricDef
	more := false
	for _, name := range g.order {
		vals := g.values[name]
		lo := chunk * emfMaxValues
		if lo >= len(vals) {
			continue
		}
		hi := min(lo+emfMaxValues, len(vals))
		if hi < len(vals) {
			more = true
		}
		part := vals[lo:hi]
		if len(part) == 1 {
			doc[name] = part[0]
		} else {
			doc[name] = part
		}
		defs = append(defs, metricDef{Name: name, Unit: g.units[name]})
	}
	if len(defs) == 0 {
		return nil, false
	}
	dimNames := make([]string, len(g.dims))
	for i, d := range g.dims {
		dimNames[i] = d.Name
		doc[d.Name] = d.Value
	}
	doc["_aws"] = map[string]any{
		"Timestamp": g.ts,
		"CloudWatchMetrics": []any{map[string]any{
			"Namespace":  Namespace,
			"Dimensions": [][]string{dimNames},
			"Metrics":    defs,
		}},
	}
	return doc, more
}

func dimKey(dims []Dimension) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.Name + "\x00" + d.Value
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}
