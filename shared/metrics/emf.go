package metrics

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// emfMaxValues is EMF's limit on values per metric in one document.
const emfMaxValues = 100

// EMF writes CloudWatch Embedded Metric Format documents, one JSON line per
// set of dimension values (and per emfMaxValues values of a metric).
type EMF struct {
	mu sync.Mutex
	w  io.Writer
}

// NewEMF returns a sink writing EMF lines to w (stdout in Lambda).
func NewEMF(w io.Writer) *EMF { return &EMF{w: w} }

// emfGroup is the points of one set of dimension values.
type emfGroup struct {
	dims    []Dimension
	metrics []emfMetric // in order of first appearance
	ts      int64       // of the group's first point, epoch milliseconds
}

type emfMetric struct {
	name   string
	unit   Unit
	values []float64
}

// Publish writes the points as EMF documents, in one write.
func (e *EMF) Publish(_ context.Context, points []Point) error {
	var groups []*emfGroup
	for _, p := range points {
		i := slices.IndexFunc(groups, func(g *emfGroup) bool { return slices.Equal(g.dims, p.Dimensions) })
		if i < 0 {
			i = len(groups)
			groups = append(groups, &emfGroup{dims: p.Dimensions, ts: p.Time.UnixMilli()})
		}
		g := groups[i]
		j := slices.IndexFunc(g.metrics, func(m emfMetric) bool { return m.name == p.Name })
		if j < 0 {
			j = len(g.metrics)
			g.metrics = append(g.metrics, emfMetric{name: p.Name, unit: p.Unit})
		}
		g.metrics[j].values = append(g.metrics[j].values, p.Value)
	}
	buf := make([]byte, 0, 512*len(groups))
	for _, g := range groups {
		for lo := 0; ; lo += emfMaxValues {
			var more bool
			var err error
			if buf, more, err = g.appendDocument(buf, lo); err != nil {
				return err
			}
			if !more {
				break
			}
		}
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_, err := e.w.Write(buf)
	return err
}

// appendDocument appends, as one line, the document holding each metric's
// values from index lo (up to emfMaxValues of them); more reports that
// some metric has values past them. The shape is fixed:
//
//	{"_aws":{"Timestamp":…,"CloudWatchMetrics":[{"Namespace":"Hookfan","Dimensions":[[…]],"Metrics":[{"Name":…,"Unit":…}…]}]},"<dimension>":"<value>"…,"<metric>":<value or [values]>…}
func (g *emfGroup) appendDocument(b []byte, lo int) (_ []byte, more bool, err error) {
	names := []string{"_aws"} // the document's members so far
	var list []emfMetric
	for _, m := range g.metrics {
		if lo < len(m.values) {
			hi := min(lo+emfMaxValues, len(m.values))
			more = more || hi < len(m.values)
			list = append(list, emfMetric{name: m.name, unit: m.unit, values: m.values[lo:hi]})
		}
	}
	b = append(b, `{"_aws":{"Timestamp":`...)
	b = strconv.AppendInt(b, g.ts, 10)
	b = append(b, `,"CloudWatchMetrics":[{"Namespace":`...)
	b = appendString(b, Namespace)
	b = append(b, `,"Dimensions":[[`...)
	for i, d := range g.dims {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendString(b, d.Name)
	}
	b = append(b, `]],"Metrics":[`...)
	for i, m := range list {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"Name":`...)
		b = appendString(b, m.name)
		b = append(b, `,"Unit":`...)
		b = appendString(b, string(m.unit))
		b = append(b, '}')
	}
	b = append(b, `]}]}`...)
	for _, d := range g.dims {
		if slices.Contains(names, d.Name) {
			return nil, false, fmt.Errorf("emf: dimension %q is named like another member of its document", d.Name)
		}
		names = append(names, d.Name)
		b = append(b, ',')
		b = appendString(b, d.Name)
		b = append(b, ':')
		b = appendString(b, d.Value)
	}
	for _, m := range list {
		if slices.Contains(names, m.name) {
			return nil, false, fmt.Errorf("emf: metric %q is named like another member of its document", m.name)
		}
		names = append(names, m.name)
		b = append(b, ',')
		b = appendString(b, m.name)
		b = append(b, ':')
		if len(m.values) > 1 {
			b = append(b, '[')
		}
		for i, v := range m.values {
			if math.IsInf(v, 0) || math.IsNaN(v) {
				return nil, false, fmt.Errorf("emf: metric %q has the value %v, which JSON cannot hold", m.name, v)
			}
			if i > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendFloat(b, v, 'g', -1, 64)
		}
		if len(m.values) > 1 {
			b = append(b, ']')
		}
	}
	return append(b, "}\n"...), more, nil
}

// appendString appends s as a JSON string (invalid UTF-8 replaced).
func appendString(b []byte, s string) []byte {
	b, _ = jsontext.AppendQuote(b, s)
	return b
}
