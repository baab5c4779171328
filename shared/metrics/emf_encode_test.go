package metrics

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// mapDocument is the reference rendering of one EMF chunk: the document as a
// map, for encoding/json. appendDocument must produce exactly its encoding.
func (g *emfGroup) mapDocument(chunk int) (map[string]any, bool) {
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

func TestAppendDocumentMatchesEncodingJSON(t *testing.T) {
	names := []string{"IngestAccepted", "DeliveryLatency", "Source", "a<b>&c", "ünï", "tab\there", "quote\"d", "_aws2", "Z"}
	values := []float64{0, 1, -1, 12.5, 1e-7, -3e-9, 1e21, 123456789012345678, 0.1, 5e-324, math.MaxFloat64,
		math.Copysign(0, -1), 4200, -4200, 1<<53 - 1, 1 << 53, -(1<<53 - 1), -(1 << 53), 1<<53 + 2, 1e20, -1e20}
	rng := rand.New(rand.NewPCG(1, 2))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for i := range 2000 {
		g := &emfGroup{units: map[string]Unit{}, values: map[string][]float64{}, ts: rng.Int64N(2e12)}
		for range rng.IntN(4) {
			g.dims = append(g.dims, Dimension{Name: pick(names), Value: pick(names)})
		}
		for range 1 + rng.IntN(3) {
			name := pick(names)
			if _, seen := g.values[name]; !seen {
				g.order = append(g.order, name)
				g.units[name] = []Unit{Count, Milliseconds}[rng.IntN(2)]
			}
			n := 1 + rng.IntN(3)
			if rng.IntN(10) == 0 {
				n = 99 + rng.IntN(110)
			}
			for range n {
				g.values[name] = append(g.values[name], values[rng.IntN(len(values))])
			}
		}
		for chunk := 0; chunk < 4; chunk++ {
			doc, wantMore := g.mapDocument(chunk)
			got, ok, more, err := g.appendDocument(nil, chunk)
			if err != nil {
				t.Fatalf("case %d chunk %d: %v", i, chunk, err)
			}
			if ok != (doc != nil) || more != wantMore {
				t.Fatalf("case %d chunk %d: ok %v more %v, want %v %v", i, chunk, ok, more, doc != nil, wantMore)
			}
			if !ok {
				break
			}
			want, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Fatalf("case %d chunk %d:\n got %s\nwant %s", i, chunk, got, want)
			}
		}
	}
}

func TestAppendDocumentRejectsNaN(t *testing.T) {
	g := &emfGroup{order: []string{"m"}, units: map[string]Unit{"m": Count}, values: map[string][]float64{"m": {math.NaN()}}}
	if _, _, _, err := g.appendDocument(nil, 0); err == nil {
		t.Error("NaN encoded; want an error as encoding/json gives")
	}
}

func BenchmarkEMFPublish(b *testing.B) {
	r := NewRecorder(NewEMF(discard{}))
	b.ReportAllocs()
	for b.Loop() {
		r.Count(IngestAccepted, Dimension{DimSource, "stripe"})
		if err := r.Flush(b.Context()); err != nil {
			b.Fatal(err)
		}
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// TestAppendPointMatchesAppendDocument checks the one-point fast path
// against the general rendering, names that collide included (the fast
// path declines those, and Publish renders them the general way).
func TestAppendPointMatchesAppendDocument(t *testing.T) {
	names := []string{"IngestAccepted", "Source", "Reason", "_aws", "a<b>&c", "ünï", "tab\there", "quote\"d", "Z", "z"}
	values := []float64{0, 1, -1, 12.5, 1e-7, 1e21, 0.1, 5e-324, math.MaxFloat64, math.Copysign(0, -1), 1<<53 - 1, 1 << 53, -(1 << 53), 1e20}
	rng := rand.New(rand.NewPCG(3, 4))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	declined := 0
	for i := range 5000 {
		p := Point{Name: pick(names), Unit: []Unit{Count, Milliseconds}[rng.IntN(2)], Value: values[rng.IntN(len(values))],
			Time: time.UnixMilli(rng.Int64N(2e12))}
		for range rng.IntN(4) {
			p.Dimensions = append(p.Dimensions, Dimension{Name: pick(names), Value: pick(names)})
		}
		g := &emfGroup{dims: p.Dimensions, order: []string{p.Name}, units: map[string]Unit{p.Name: p.Unit},
			values: map[string][]float64{p.Name: {p.Value}}, ts: p.Time.UnixMilli()}
		want, _, _, err := g.appendDocument(nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, _, ok, err := appendPoint(nil, &p)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			declined++
		} else if string(got) != string(want) {
			t.Fatalf("case %d %+v:\n got %s\nwant %s", i, p, got, want)
		}
		var buf bytes.Buffer
		if err := NewEMF(&buf).Publish(t.Context(), []Point{p}); err != nil {
			t.Fatal(err)
		}
		if buf.String() != string(want)+"\n" {
			t.Fatalf("case %d: Publish wrote %q, want %q", i, buf.String(), want)
		}
	}
	if declined == 0 || declined == 5000 {
		t.Errorf("fast path declined %d of 5000 points; the test should exercise both paths", declined)
	}
}

// TestPublishReusesLastLine publishes points that often repeat a metric
// and dimensions with another value and time, through one sink: every line
// must still be the general rendering.
func TestPublishReusesLastLine(t *testing.T) {
	names := []string{"IngestAccepted", "Source", "zeta", "_aws"}
	values := []float64{0, 1, 12.5, 1e-7, 1e21, math.Inf(1)}
	rng := rand.New(rand.NewPCG(7, 8))
	var buf bytes.Buffer
	e := NewEMF(&buf)
	dims := [][]Dimension{nil, {{"Source", "stripe"}}, {{"Source", "stripe"}, {"Reason", "x"}}, {{"zeta", "z"}}, {{"Source", "other"}}}
	for i := range 3000 {
		p := Point{Name: names[rng.IntN(len(names))], Unit: Count, Value: values[rng.IntN(len(values))],
			Time: time.UnixMilli(rng.Int64N(2e12)), Dimensions: dims[rng.IntN(len(dims))]}
		g := &emfGroup{dims: p.Dimensions, order: []string{p.Name}, units: map[string]Unit{p.Name: p.Unit},
			values: map[string][]float64{p.Name: {p.Value}}, ts: p.Time.UnixMilli()}
		want, _, _, wantErr := g.appendDocument(nil, 0)
		buf.Reset()
		err := e.Publish(t.Context(), []Point{p})
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("case %d %+v: error %v, want %v", i, p, err, wantErr)
		}
		if err == nil && buf.String() != string(want)+"\n" {
			t.Fatalf("case %d %+v:\n got %s\nwant %s", i, p, buf.String(), want)
		}
	}
}
