package rie

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/metrics"
)

// emfLines is what the functions' own sink writes for points.
func emfLines(t testing.TB, points ...metrics.Point) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := metrics.NewEMF(&buf).Publish(context.Background(), points); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

var at = time.UnixMilli(1_700_000_000_123).UTC()

// TestParseEMFReadsOurSink: every line the functions' EMF sink writes
// parses back to its points: names, units, dimensions in order, values,
// the time to the millisecond, several values of a metric as one datum.
func TestParseEMFReadsOurSink(t *testing.T) {
	dest := []metrics.Dimension{{Name: metrics.DimDestination, Value: "orders"}}
	lines := emfLines(t,
		metrics.Point{Name: metrics.IngestRejected, Unit: metrics.Count, Value: 1, Time: at,
			Dimensions: []metrics.Dimension{{Name: metrics.DimSource, Value: "stripe"}, {Name: metrics.DimReason, Value: "bad_signature"}}},
		metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 12.5, Time: at, Dimensions: dest},
		metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 40, Time: at, Dimensions: dest},
		metrics.Point{Name: metrics.LaneEffectiveRate, Unit: metrics.CountPerSecond, Value: 2.5, Time: at, Dimensions: dest},
		metrics.Point{Name: metrics.DeliveryBatches, Unit: metrics.Count, Value: 3, Time: at},
	)
	var got []Datum
	for line := range bytes.Lines(lines) {
		data, isEMF, err := ParseEMF(line)
		if !isEMF || err != nil {
			t.Fatalf("ParseEMF(%s) = EMF %v, %v", line, isEMF, err)
		}
		got = append(got, data...)
	}
	want := []Datum{
		{Namespace: "Hookfan", Name: metrics.IngestRejected, Unit: cwtypes.StandardUnitCount, Values: []float64{1}, Time: at,
			Dimensions: []metrics.Dimension{{Name: "Source", Value: "stripe"}, {Name: "Reason", Value: "bad_signature"}}},
		{Namespace: "Hookfan", Name: metrics.DeliveryLatency, Unit: cwtypes.StandardUnitMilliseconds, Values: []float64{12.5, 40}, Time: at, Dimensions: dest},
		{Namespace: "Hookfan", Name: metrics.LaneEffectiveRate, Unit: cwtypes.StandardUnitCountSecond, Values: []float64{2.5}, Time: at, Dimensions: dest},
		{Namespace: "Hookfan", Name: metrics.DeliveryBatches, Unit: cwtypes.StandardUnitCount, Values: []float64{3}, Time: at, Dimensions: []metrics.Dimension{}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
}

// TestParseEMFReadsOurSinkAtItsEdges: the sink's documents stay valid EMF
// where it has to work for it: names and values that JSON must escape come
// back unchanged, and 250 values of one metric, split into documents of at
// most 100, come back whole.
func TestParseEMFReadsOurSinkAtItsEdges(t *testing.T) {
	odd := []metrics.Dimension{{Name: "Dim<&>", Value: "tab\there ünï \x00"}}
	points := []metrics.Point{{Name: `we"ird\name`, Unit: metrics.Count, Value: 1e-7, Time: at, Dimensions: odd}}
	dest := []metrics.Dimension{{Name: metrics.DimDestination, Value: "d"}}
	for i := range 250 {
		points = append(points, metrics.Point{Name: metrics.EventAge, Unit: metrics.Milliseconds, Value: float64(i), Time: at, Dimensions: dest})
	}
	var escaped []Datum
	var ages []float64
	docs := 0
	for line := range bytes.Lines(emfLines(t, points...)) {
		data, isEMF, err := ParseEMF(line)
		if !isEMF || err != nil {
			t.Fatalf("ParseEMF(%s) = EMF %v, %v", line, isEMF, err)
		}
		docs++
		for _, d := range data {
			if d.Name == metrics.EventAge {
				ages = append(ages, d.Values...)
			} else {
				escaped = append(escaped, d)
			}
		}
	}
	want := []Datum{{Namespace: "Hookfan", Name: `we"ird\name`, Unit: cwtypes.StandardUnitCount, Values: []float64{1e-7}, Time: at, Dimensions: odd}}
	if diff := cmp.Diff(want, escaped); diff != "" {
		t.Errorf("escaped datum (-want +got):\n%s", diff)
	}
	if len(ages) != 250 || docs != 4 {
		t.Errorf("%d EventAge values in %d documents; want 250 in 4 (1 + 100 + 100 + 50)", len(ages), docs)
	}
	slices.Sort(ages)
	for i, v := range ages {
		if v != float64(i) {
			t.Fatalf("EventAge values %v; want 0 to 249 once each", ages)
		}
	}
}

// TestParseEMFTheSpecification: what the EMF specification allows beyond
// our own sink's shape: several directives and dimension sets (one datum
// per metric and set), a metric without a unit, high resolution.
func TestParseEMFTheSpecification(t *testing.T) {
	line := `{"_aws":{"Timestamp":1700000000123,"CloudWatchMetrics":[
	  {"Namespace":"A","Dimensions":[["Service"],["Service","Op"]],"Metrics":[{"Name":"Time","Unit":"Milliseconds","StorageResolution":1},{"Name":"Hits"}]},
	  {"Namespace":"B","Dimensions":[[]],"Metrics":[{"Name":"Hits","StorageResolution":60}]}]},
	  "Service":"api","Op":"get","Time":[1,2],"Hits":7,"Other":{"x":[1]}}`
	got, isEMF, err := ParseEMF([]byte(strings.ReplaceAll(line, "\n", "")))
	if !isEMF || err != nil {
		t.Fatalf("ParseEMF = EMF %v, %v", isEMF, err)
	}
	svc, op := metrics.Dimension{Name: "Service", Value: "api"}, metrics.Dimension{Name: "Op", Value: "get"}
	want := []Datum{
		{Namespace: "A", Name: "Time", Unit: "Milliseconds", Resolution: 1, Dimensions: []metrics.Dimension{svc}, Values: []float64{1, 2}, Time: at},
		{Namespace: "A", Name: "Time", Unit: "Milliseconds", Resolution: 1, Dimensions: []metrics.Dimension{svc, op}, Values: []float64{1, 2}, Time: at},
		{Namespace: "A", Name: "Hits", Dimensions: []metrics.Dimension{svc}, Values: []float64{7}, Time: at},
		{Namespace: "A", Name: "Hits", Dimensions: []metrics.Dimension{svc, op}, Values: []float64{7}, Time: at},
		{Namespace: "B", Name: "Hits", Dimensions: []metrics.Dimension{}, Values: []float64{7}, Time: at},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parsed (-want +got):\n%s", diff)
	}
}

// TestParseEMFNotEMF: ordinary log lines are not EMF, and no error.
func TestParseEMFNotEMF(t *testing.T) {
	for _, line := range []string{"", "START RequestId: 1 Version: $LATEST", `{"level":"INFO","msg":"ingest"}`, `[1,2]`, `{"aws":`, `"_aws":1`} {
		if data, isEMF, err := ParseEMF([]byte(line)); isEMF || err != nil || data != nil {
			t.Errorf("ParseEMF(%q) = %v, EMF %v, %v; want not EMF", line, data, isEMF, err)
		}
	}
}

// TestParseEMFRefuses: a document with "_aws" that CloudWatch Logs would
// extract nothing from is an error saying why.
func TestParseEMFRefuses(t *testing.T) {
	const dir = `"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D"]],"Metrics":[{"Name":"M","Unit":"Count"}]}]`
	for _, tt := range []struct{ line, want string }{
		{`{"_aws":[]}`, `"_aws"`},
		{`{"_aws":{` + dir + `},"D":"x","M":1}`, `"_aws.Timestamp" missing`},
		{`{"_aws":{"Timestamp":1.5,` + dir + `},"D":"x","M":1}`, "whole number"},
		{`{"_aws":{"Timestamp":"1",` + dir + `},"D":"x","M":1}`, "whole number"},
		{`{"_aws":{"Timestamp":null,` + dir + `},"D":"x","M":1}`, `"_aws.Timestamp" missing`},
		{`{"_aws":{"Timestamp":+1,` + dir + `},"D":"x","M":1}`, "not a JSON object"},
		{`{"_aws":{"Timestamp":1,"CloudWatch`, "not a JSON object"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[]}}`, "missing or empty"},
		{`{"_aws":{"Timestamp":1}}`, "missing or empty"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`, "Namespace"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"` + strings.Repeat("n", 256) + `","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":1}`, "Namespace"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`, "no dimension set"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Metrics":[{"Name":"M"}]}]},"M":1}`, "no dimension set"},
		{`{"_aws":{"Timestamp":1,` + dir + `},"M":1}`, `dimension "D" is not a non-empty string member`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":3,"M":1}`, `dimension "D" is not a non-empty string member`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":null,"M":1}`, `dimension "D" is not a non-empty string member`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"","M":1}`, `dimension "D" is not a non-empty string member`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":null}`, `metric "M" is not a number`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":[1,null]}`, `metric "M" is not a number`},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["D","D"]],"Metrics":[{"Name":"M"}]}]},"D":"x","M":1}`, "twice"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[]}]}}`, "0 metrics"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Unit":"Count"}]}]}}`, "without a Name"},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x"}`, `metric "M" has no member`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":"1"}`, `metric "M" is not a number`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":[]}`, `metric "M" is not a number`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":[1,"2"]}`, `metric "M" is not a number`},
		{`{"_aws":{"Timestamp":1,` + dir + `},"D":"x","M":1e300}`, "outside CloudWatch's"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M","Unit":"Parsecs"}]}]},"M":1}`, `unit "Parsecs"`},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M","StorageResolution":5}]}]},"M":1}`, "StorageResolution 5"},
	} {
		data, isEMF, err := ParseEMF([]byte(tt.line))
		if !isEMF || err == nil || !strings.Contains(err.Error(), tt.want) || data != nil {
			t.Errorf("ParseEMF(%s) = %v, EMF %v, %v; want an error containing %q", tt.line, data, isEMF, err, tt.want)
		}
	}
	// More than the specification's 100 values of a metric, 100 metrics
	// of a directive, 30 dimensions of a set.
	values := "[" + strings.Repeat("1,", 100) + "1]"
	var metricsList, members, dims []string
	for i := range 101 {
		metricsList = append(metricsList, `{"Name":"M`+string(rune('A'+i%26))+strings.Repeat("x", i/26)+`"}`)
		members = append(members, `"M`+string(rune('A'+i%26))+strings.Repeat("x", i/26)+`":1`)
	}
	for i := range 31 {
		dims = append(dims, `"D`+strings.Repeat("x", i)+`"`)
	}
	for _, tt := range []struct{ line, want string }{
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[{"Name":"M"}]}]},"M":` + values + `}`, "not a number or an array of 1 to 100"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[]],"Metrics":[` + strings.Join(metricsList, ",") + `]}]},` + strings.Join(members, ",") + `}`, "101 metrics"},
		{`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[[` + strings.Join(dims, ",") + `]],"Metrics":[{"Name":"M"}]}]},"M":1}`, "31 names"},
	} {
		if _, _, err := ParseEMF([]byte(tt.line)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseEMF(%.80s…) = %v; want an error containing %q", tt.line, err, tt.want)
		}
	}
}

// fakeCW records PutMetricData calls; err fails them.
type fakeCW struct {
	mu     sync.Mutex
	inputs []*cloudwatch.PutMetricDataInput
	err    error
}

func (f *fakeCW) PutMetricData(_ context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.inputs = append(f.inputs, in)
	return &cloudwatch.PutMetricDataOutput{}, f.err
}

func (f *fakeCW) calls() []*cloudwatch.PutMetricDataInput {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.inputs)
}

// TestForwarder: lines split across writes, ordinary lines skipped, one
// call per EMF line and namespace, one value as Value and several as
// Values; a last line without its newline is read at Close.
func TestForwarder(t *testing.T) {
	cw := &fakeCW{}
	f := NewForwarder(cw)
	dest := []metrics.Dimension{{Name: "Destination", Value: "orders"}}
	line := emfLines(t,
		metrics.Point{Name: metrics.DeliverySucceeded, Unit: metrics.Count, Value: 1, Time: at, Dimensions: dest},
		metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 5, Time: at, Dimensions: dest},
		metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 7, Time: at, Dimensions: dest})
	out := append([]byte("START RequestId: 1\n{\"msg\":\"deliver\"}\n"), line...)
	out = append(out, bytes.TrimSuffix(line, []byte("\n"))...)
	for i := 0; i < len(out); i += 7 { // in pieces, as a pipe hands them over
		if n, err := f.Write(out[i:min(i+7, len(out))]); err != nil || n != min(7, len(out)-i) {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	calls := cw.calls()
	if len(calls) != 2 || f.Put() != 4 {
		t.Fatalf("%d calls, %d put; want two calls of 2 data", len(calls), f.Put())
	}
	in := calls[0]
	got := []string{*in.Namespace, *in.MetricData[0].MetricName, string(in.MetricData[0].Unit), *in.MetricData[0].Dimensions[0].Name,
		*in.MetricData[0].Dimensions[0].Value, in.MetricData[0].Timestamp.UTC().Format(time.RFC3339Nano), *in.MetricData[1].MetricName}
	if diff := cmp.Diff([]string{"Hookfan", "DeliverySucceeded", "Count", "Destination", "orders", "2023-11-14T22:13:20.123Z", "DeliveryLatency"}, got); diff != "" {
		t.Errorf("call (-want +got):\n%s", diff)
	}
	if v := in.MetricData[0].Value; v == nil || *v != 1 || in.MetricData[0].Values != nil {
		t.Errorf("one value: Value %v, Values %v; want Value 1", v, in.MetricData[0].Values)
	}
	if d := in.MetricData[1]; d.Value != nil || !cmp.Equal(d.Values, []float64{5, 7}) || d.Counts != nil {
		t.Errorf("two values: Value %v, Values %v, Counts %v; want Values [5 7]", d.Value, d.Values, d.Counts)
	}
}

// TestForwarderSaysWhatItCouldNotForward: an invalid EMF document, a
// failed call, an overlong line and output after Close are kept for Err;
// the writer never fails.
func TestForwarderSaysWhatItCouldNotForward(t *testing.T) {
	cw := &fakeCW{err: errors.New("connection refused")}
	f := NewForwarder(cw)
	for _, p := range [][]byte{
		[]byte(`{"_aws":{"Timestamp":1}}` + "\n"),
		emfLines(t, metrics.Point{Name: metrics.IngestAccepted, Unit: metrics.Count, Value: 1, Time: at}),
		bytes.Repeat([]byte("x"), maxLine+1), []byte("\n"),
	} {
		if n, err := f.Write(p); n != len(p) || err != nil {
			t.Fatalf("Write = %d, %v", n, err)
		}
	}
	err := f.Close()
	if n, werr := f.Write([]byte("late\n")); n != 5 || werr != nil {
		t.Fatalf("Write after Close = %d, %v", n, werr)
	}
	if f.Put() != 0 || len(cw.calls()) != 1 {
		t.Errorf("%d put in %d calls; want the one failed call", f.Put(), len(cw.calls()))
	}
	for _, want := range []string{"invalid EMF line", "missing or empty", "put 1 metrics of namespace Hookfan: connection refused", "longer than 1048576 bytes"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Close = %v; want it to say %q", err, want)
		}
	}
	if err := f.Err(); err == nil || !strings.Contains(err.Error(), "5 bytes written after Close") {
		t.Errorf("Err = %v; want the write after Close", err)
	}
}

// TestMetricDatumHighResolution: StorageResolution 1 travels; the default
// is left to CloudWatch.
func TestMetricDatumHighResolution(t *testing.T) {
	if d := metricDatum(Datum{Name: "M", Values: []float64{1}, Resolution: 1}); aws.ToInt32(d.StorageResolution) != 1 {
		t.Errorf("StorageResolution %v, want 1", d.StorageResolution)
	}
	if d := metricDatum(Datum{Name: "M", Values: []float64{1}}); d.StorageResolution != nil {
		t.Errorf("StorageResolution %v, want none", *d.StorageResolution)
	}
}

// FuzzParseEMF: any line parses without panicking; what it accepts is a
// JSON object whose members hold each datum's metric and dimension values,
// and every datum is one PutMetricData takes (namespace, 1 to 100 values
// in range, at most 30 dimensions). Seeds: our sink's lines and the
// specification's shapes.
func FuzzParseEMF(f *testing.F) {
	f.Add(emfLines(f, metrics.Point{Name: metrics.IngestAccepted, Unit: metrics.Count, Value: 1, Time: at, Dimensions: []metrics.Dimension{{Name: "Source", Value: "stripe"}}}))
	f.Add(emfLines(f, metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 3.25, Time: at},
		metrics.Point{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 4, Time: at}))
	f.Add([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"A","Dimensions":[["S"],["S","O"]],"Metrics":[{"Name":"T","Unit":"Seconds","StorageResolution":1},{"Name":"H"}]}]},"S":"x","O":"y","T":[1,2],"H":7}`))
	f.Add([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[],"Metrics":[{"Name":"M"}]}]},"M":1}`))
	f.Add([]byte(`{"_aws":{"Timestamp":1,"CloudWatchMetrics":[{"Namespace":"N","Dimensions":[["_aws"]],"Metrics":[{"Name":"_aws"}]}]}}`))
	f.Add([]byte(`{"level":"INFO","msg":"ingest"}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		data, isEMF, err := ParseEMF(line)
		if !isEMF || err != nil {
			if data != nil {
				t.Fatalf("data %v with EMF %v, %v", data, isEMF, err)
			}
			return
		}
		var doc map[string]json.RawMessage
		if jerr := json.Unmarshal(line, &doc); jerr != nil || doc["_aws"] == nil {
			t.Fatalf("ParseEMF accepted %q, not a JSON object with \"_aws\": %v", line, jerr)
		}
		if len(data) == 0 {
			t.Fatalf("ParseEMF accepted %q with no datum", line)
		}
		for _, d := range data {
			if _, ok := doc[d.Name]; !ok {
				t.Fatalf("datum %+v: %q has no member in %q", d, d.Name, line)
			}
			for _, dim := range d.Dimensions {
				var v string
				if json.Unmarshal(doc[dim.Name], &v) != nil || v != dim.Value {
					t.Fatalf("datum %+v: dimension %q is not the member %s", d, dim.Name, doc[dim.Name])
				}
			}
			if n := len(d.Namespace); n < 1 || n > 255 || d.Name == "" || len(d.Values) < 1 || len(d.Values) > 100 || len(d.Dimensions) > 30 {
				t.Fatalf("datum %+v out of PutMetricData's bounds", d)
			}
			for _, v := range d.Values {
				if math.IsNaN(v) || math.Abs(v) > 0x1p360 {
					t.Fatalf("datum %+v holds %g", d, v)
				}
			}
		}
	})
}
