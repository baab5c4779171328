package metrics

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func fixedRecorder(sink Sink) *Recorder {
	r := NewRecorder(sink)
	r.now = func() time.Time { return time.UnixMilli(1_700_000_000_123) }
	return r
}

func TestEMFOutput(t *testing.T) {
	var buf bytes.Buffer
	r := fixedRecorder(NewEMF(&buf))
	src := Dimension{DimSource, "stripe"}
	r.Count(IngestAccepted, src)
	r.Count(IngestAccepted, src)
	r.Count(IngestRejected, src, Dimension{DimReason, "signature_invalid"})
	r.Add(DeliveryLatency, Milliseconds, 12.5, Dimension{DimDestination, "orders"})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	want := []string{
		`{"IngestAccepted":[1,1],"Source":"stripe","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Source"]],"Metrics":[{"Name":"IngestAccepted","Unit":"Count"}],"Namespace":"Hookfan"}],"Timestamp":1700000000123}}`,
		`{"IngestRejected":1,"Reason":"signature_invalid","Source":"stripe","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Source","Reason"]],"Metrics":[{"Name":"IngestRejected","Unit":"Count"}],"Namespace":"Hookfan"}],"Timestamp":1700000000123}}`,
		`{"DeliveryLatency":12.5,"Destination":"orders","_aws":{"CloudWatchMetrics":[{"Dimensions":[["Destination"]],"Metrics":[{"Name":"DeliveryLatency","Unit":"Milliseconds"}],"Namespace":"Hookfan"}],"Timestamp":1700000000123}}`,
	}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), buf.String())
	}
	for i, l := range lines {
		var got, wantDoc any
		if err := json.Unmarshal([]byte(l), &got); err != nil {
			t.Fatalf("line %d is not JSON: %s", i, l)
		}
		_ = json.Unmarshal([]byte(want[i]), &wantDoc)
		if diff := cmp.Diff(wantDoc, got); diff != "" {
			t.Errorf("document %d (-want +got):\n%s", i, diff)
		}
	}
	buf.Reset()
	if err := r.Flush(context.Background()); err != nil || buf.Len() != 0 {
		t.Errorf("second Flush wrote %q, %v; want nothing", buf.String(), err)
	}
}

func TestEMFSplitsAtHundredValues(t *testing.T) {
	var buf bytes.Buffer
	r := fixedRecorder(NewEMF(&buf))
	for i := range 250 {
		r.Add(EventAge, Milliseconds, float64(i), Dimension{DimDestination, "d"})
	}
	r.Count(DeliverySucceeded, Dimension{DimDestination, "d"})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	var total int
	for _, l := range lines {
		var doc map[string]any
		_ = json.Unmarshal([]byte(l), &doc)
		switch v := doc[EventAge].(type) {
		case []any:
			total += len(v)
		case float64:
			total++
		}
	}
	if len(lines) != 3 || total != 250 {
		t.Errorf("got %d lines holding %d EventAge values; want 3 lines, 250 values", len(lines), total)
	}
}

func TestEMFRefusesWhatJSONCannotHold(t *testing.T) {
	for name, add := range map[string]func(r *Recorder){
		"NaN":                       func(r *Recorder) { r.Add(EventAge, Milliseconds, math.NaN(), Dimension{DimDestination, "d"}) },
		"infinity":                  func(r *Recorder) { r.Add(EventAge, Milliseconds, math.Inf(1), Dimension{DimDestination, "d"}) },
		"dimension named as metric": func(r *Recorder) { r.Count(IngestAccepted, Dimension{IngestAccepted, "x"}) },
		"dimension named _aws":      func(r *Recorder) { r.Count(IngestAccepted, Dimension{"_aws", "x"}) },
	} {
		var buf bytes.Buffer
		r := fixedRecorder(NewEMF(&buf))
		add(r)
		if err := r.Flush(context.Background()); err == nil {
			t.Errorf("%s: Flush = nil error, wrote %q", name, buf.String())
		}
	}
}

// TestEMFEscapes: names and values that need escaping still make valid
// documents.
func TestEMFEscapes(t *testing.T) {
	var buf bytes.Buffer
	r := fixedRecorder(NewEMF(&buf))
	r.Add(`we"ird\name`, Count, 1e-7, Dimension{"Dim<&>", "tab\there ünï \x00"})
	if err := r.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	line := bytes.TrimSpace(buf.Bytes())
	var doc map[string]any
	_ = json.Unmarshal(line, &doc)
	if doc[`we"ird\name`] != 1e-7 || doc["Dim<&>"] != "tab\there ünï \x00" {
		t.Errorf("document %s", line)
	}
}

// TestCheckFunctionSink: a function's environment names EMF or nothing;
// the local stack's "cloudwatch" and unknown sinks are refused, each
// saying what to set.
func TestCheckFunctionSink(t *testing.T) {
	for _, name := range []string{"", "emf"} {
		if err := CheckFunctionSink(name); err != nil {
			t.Errorf("CheckFunctionSink(%q) = %v", name, err)
		}
	}
	for _, tt := range []struct{ name, want string }{
		{"cloudwatch", `metrics sink "cloudwatch" is the local stack's, in its own process; a function writes Embedded Metric Format lines only: set "emf"`},
		{"statsd", `unknown metrics sink "statsd"; a function writes "emf" only`},
		{"EMF", `unknown metrics sink "EMF"; a function writes "emf" only`},
	} {
		if err := CheckFunctionSink(tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("CheckFunctionSink(%q) = %v, want %s", tt.name, err, tt.want)
		}
	}
}
