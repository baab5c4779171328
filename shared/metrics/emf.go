package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
)

// emfMaxValues is EMF's limit on values per metric in one document.
const emfMaxValues = 100

// EMF writes CloudWatch Embedded Metric Format documents, one JSON line per
// set of dimension values.
type EMF struct {
	mu   sync.Mutex
	w    io.Writer
	buf  []byte    // the lines being written, reused under mu
	last pointLine // the last one-point document, under mu
}

// pointLine is a one-point document with where its value and timestamp
// are, so that the next point of the same metric and dimensions (ingest
// counts one such point per request) is written by changing only those.
type pointLine struct {
	name      string
	unit      Unit
	dims      []Dimension
	line      []byte
	value, ts [2]int // where they are in line: [start, end)
}

// matches reports whether p differs from the line's point at most in its
// value and time.
func (l *pointLine) matches(p *Point) bool {
	return l.line != nil && p.Name == l.name && p.Unit == l.unit && slices.Equal(p.Dimensions, l.dims)
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
	if len(points) == 1 {
		// The common case (ingest flushes one point per request): no
		// grouping needed.
		if done, err := e.publishPoint(&points[0]); done {
			return err
		}
	}
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
			line, ok, more, err := g.appendDocument(buf.AvailableBuffer(), chunk)
			if err != nil {
				return err
			}
			if !ok {
				break
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

// appendDocument appends the chunk-th slice of up to emfMaxValues values per
// metric as one JSON line (without the newline); ok is false when the chunk
// holds no value. The output is exactly what encoding/json makes of the
// document as a map (keys sorted, HTML-safe escaping), written without
// reflection: this runs once per invocation on the hot path.
func (g *emfGroup) appendDocument(b []byte, chunk int) (out []byte, ok, more bool, err error) {
	type member struct {
		key    string
		metric []float64 // the metric's values in this chunk, or nil
		dim    string    // the dimension's value when metric is nil
		aws    bool
	}
	var stack [16]member
	var nameStack [16]string
	members, names := stack[:0], nameStack[:0]
	lo := chunk * emfMaxValues
	for _, name := range g.order {
		vals := g.values[name]
		if lo >= len(vals) {
			continue
		}
		hi := min(lo+emfMaxValues, len(vals))
		if hi < len(vals) {
			more = true
		}
		members = append(members, member{key: name, metric: vals[lo:hi]})
		names = append(names, name)
	}
	if len(names) == 0 {
		return b, false, false, nil
	}
	for _, d := range g.dims {
		i := slices.IndexFunc(members, func(m member) bool { return m.key == d.Name })
		if i >= 0 { // a later member of the same name replaces the earlier one
			members[i] = member{key: d.Name, dim: d.Value}
		} else {
			members = append(members, member{key: d.Name, dim: d.Value})
		}
	}
	members = append(members, member{key: "_aws", aws: true})
	slices.SortFunc(members, func(x, y member) int { return strings.Compare(x.key, y.key) })

	b = append(b, '{')
	for i, m := range members {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, m.key)
		b = append(b, ':')
		switch {
		case m.aws:
			b = append(b, `{"CloudWatchMetrics":[{"Dimensions":[[`...)
			for j, d := range g.dims {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, d.Name)
			}
			b = append(b, `]],"Metrics":[`...)
			for j, name := range names {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(b, `{"Name":`...)
				b = appendJSONString(b, name)
				b = append(b, `,"Unit":`...)
				b = appendJSONString(b, string(g.units[name]))
				b = append(b, '}')
			}
			b = append(b, `],"Namespace":`...)
			b = appendJSONString(b, Namespace)
			b = append(b, `}],"Timestamp":`...)
			b = strconv.AppendInt(b, g.ts, 10)
			b = append(b, '}')
		case m.metric != nil:
			if len(m.metric) == 1 {
				if b, err = appendJSONFloat(b, m.metric[0]); err != nil {
					return nil, false, false, err
				}
				continue
			}
			b = append(b, '[')
			for j, v := range m.metric {
				if j > 0 {
					b = append(b, ',')
				}
				if b, err = appendJSONFloat(b, v); err != nil {
					return nil, false, false, err
				}
			}
			b = append(b, ']')
		default:
			b = appendJSONString(b, m.dim)
		}
	}
	return append(b, '}'), true, more, nil
}

// publishPoint writes the document of one point, reusing e's buffer;
// done is false when appendPoint declines the point.
func (e *EMF) publishPoint(p *Point) (done bool, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if l := &e.last; l.matches(p) && !math.IsInf(p.Value, 0) && !math.IsNaN(p.Value) {
		e.buf = append(l.splice(e.buf[:0], p), '\n')
		_, err = e.w.Write(e.buf)
		return true, err
	}
	line, at, ok, err := appendPoint(e.buf[:0], p)
	if err != nil || !ok {
		return err != nil, err
	}
	e.last = pointLine{name: p.Name, unit: p.Unit, dims: append(e.last.dims[:0], p.Dimensions...),
		line: append(e.last.line[:0], line...), value: at.value, ts: at.ts}
	e.buf = append(line, '\n')
	_, err = e.w.Write(e.buf)
	return true, err
}

// splice appends l's document with p's value and timestamp in place of
// its own: appendPoint's output for p.
func (l *pointLine) splice(b []byte, p *Point) []byte {
	appendValue := func(b []byte) []byte { b, _ = appendJSONFloat(b, p.Value); return b } // finite: no error
	appendTS := func(b []byte) []byte { return strconv.AppendInt(b, p.Time.UnixMilli(), 10) }
	first, second := l.value, l.ts
	appendFirst, appendSecond := appendValue, appendTS
	if l.ts[0] < l.value[0] {
		first, second = second, first
		appendFirst, appendSecond = appendSecond, appendFirst
	}
	b = append(b, l.line[:first[0]]...)
	b = appendFirst(b)
	b = append(b, l.line[first[1]:second[0]]...)
	b = appendSecond(b)
	return append(b, l.line[second[1]:]...)
}

// appendPoint appends the document of a group holding only p, exactly as
// appendDocument renders it, without building the group. ok is false when
// names collide (a dimension named like the metric, "_aws" or another
// dimension, or more than maxPointDims dimensions): appendDocument's rules
// for those are left to it. at tells where the value and the timestamp are.
func appendPoint(b []byte, p *Point) (out []byte, at pointHoles, ok bool, err error) {
	const maxPointDims = 8
	dims := p.Dimensions
	if len(dims) > maxPointDims || p.Name == "_aws" {
		return b, at, false, nil
	}
	start := len(b)
	// The members, by key: the metric (-1), the dimensions (their index)
	// and "_aws" (len(dims)), sorted as encoding/json sorts a map's keys.
	var orderBuf [maxPointDims + 2]int
	order := append(orderBuf[:0], -1)
	for i, d := range dims {
		if d.Name == p.Name || d.Name == "_aws" || slices.ContainsFunc(dims[:i], func(o Dimension) bool { return o.Name == d.Name }) {
			return b, at, false, nil
		}
		order = append(order, i)
	}
	order = append(order, len(dims))
	key := func(m int) string {
		switch {
		case m < 0:
			return p.Name
		case m < len(dims):
			return dims[m].Name
		}
		return "_aws"
	}
	for i := 1; i < len(order); i++ { // insertion sort: a handful of keys
		for j := i; j > 0 && key(order[j]) < key(order[j-1]); j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	b = append(b, '{')
	for i, m := range order {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, key(m))
		b = append(b, ':')
		switch {
		case m < 0:
			at.value[0] = len(b) - start
			if b, err = appendJSONFloat(b, p.Value); err != nil {
				return nil, at, false, err
			}
			at.value[1] = len(b) - start
		case m < len(dims):
			b = appendJSONString(b, dims[m].Value)
		default:
			b = append(b, `{"CloudWatchMetrics":[{"Dimensions":[[`...)
			for j, d := range dims {
				if j > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, d.Name)
			}
			b = append(b, `]],"Metrics":[{"Name":`...)
			b = appendJSONString(b, p.Name)
			b = append(b, `,"Unit":`...)
			b = appendJSONString(b, string(p.Unit))
			b = append(b, `}],"Namespace":`...)
			b = appendJSONString(b, Namespace)
			b = append(b, `}],"Timestamp":`...)
			at.ts[0] = len(b) - start
			b = strconv.AppendInt(b, p.Time.UnixMilli(), 10)
			at.ts[1] = len(b) - start
			b = append(b, '}')
		}
	}
	return append(b, '}'), at, true, nil
}

// pointHoles tells where appendPoint wrote the value and the timestamp,
// from the document's start: [start, end).
type pointHoles struct{ value, ts [2]int }

// appendJSONString appends s as encoding/json would: directly when every
// byte is printable ASCII that needs no escape, through encoding/json
// otherwise.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// appendJSONFloat appends f as encoding/json encodes a float64.
func appendJSONFloat(b []byte, f float64) ([]byte, error) {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return nil, fmt.Errorf("json: unsupported value: %s", strconv.FormatFloat(f, 'g', -1, 64))
	}
	abs := math.Abs(f)
	if abs < 1<<53 && f == math.Trunc(f) && (f != 0 || !math.Signbit(f)) {
		// A whole number below 2^53 (counts, milliseconds): its shortest
		// form is the integer, written without the float formatter.
		// Negative zero is left to it ("-0").
		return strconv.AppendInt(b, int64(f), 10), nil
	}
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, nil
}

func dimKey(dims []Dimension) string {
	parts := make([]string, len(dims))
	for i, d := range dims {
		parts[i] = d.Name + "\x00" + d.Value
	}
	sort.Strings(parts)
	return strings.Join(parts, "\x01")
}
