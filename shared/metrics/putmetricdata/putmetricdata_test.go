package putmetricdata

import (
	"compress/gzip"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/metrics"
)

type fakeCW struct {
	inputs []*cloudwatch.PutMetricDataInput
	err    error
}

func (f *fakeCW) PutMetricData(_ context.Context, in *cloudwatch.PutMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error) {
	f.inputs = append(f.inputs, in)
	return &cloudwatch.PutMetricDataOutput{}, f.err
}

func TestSink(t *testing.T) {
	cw := &fakeCW{}
	sink := New(cw)
	points := make([]metrics.Point, 501)
	for i := range points {
		points[i] = metrics.Point{Name: metrics.DeliverySucceeded, Unit: metrics.Count, Value: 1, Time: time.UnixMilli(1_700_000_000_123),
			Dimensions: []metrics.Dimension{{Name: metrics.DimDestination, Value: "orders"}}}
	}
	if err := sink.Publish(context.Background(), points); err != nil {
		t.Fatal(err)
	}
	if len(cw.inputs) != 2 || len(cw.inputs[0].MetricData) != 500 || len(cw.inputs[1].MetricData) != 1 {
		t.Fatalf("PutMetricData calls: %d", len(cw.inputs))
	}
	d := cw.inputs[1].MetricData[0]
	got := []string{*cw.inputs[1].Namespace, *d.MetricName, string(d.Unit), *d.Dimensions[0].Name, *d.Dimensions[0].Value, d.Timestamp.UTC().Format(time.RFC3339Nano)}
	if diff := cmp.Diff([]string{"Hookfan", "DeliverySucceeded", "Count", "Destination", "orders", "2023-11-14T22:13:20.123Z"}, got); diff != "" {
		t.Error(diff)
	}
	cw.err = errors.New("throttled")
	r := metrics.NewRecorder(sink)
	r.Count(metrics.DeliveryFailed)
	if err := r.Flush(context.Background()); err == nil || err.Error() != "flush 1 metric points: put metric data: throttled" {
		t.Errorf("Flush error = %v", err)
	}
}

// TestClientSpeaksQuery proves the client sends the query protocol that
// emulators understand, not the SDK's default RPCv2 CBOR.
func TestClientSpeaksQuery(t *testing.T) {
	var gotType string
	var gotForm url.Values
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotType = r.Header.Get("Content-Type")
		var rd io.Reader = r.Body
		if r.Header.Get("Content-Encoding") == "gzip" { // PutMetricData bodies are compressed
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				t.Errorf("gzip: %v", err)
				return
			}
			rd = zr
		}
		body, _ := io.ReadAll(rd)
		gotForm, _ = url.ParseQuery(string(body))
		w.Header().Set("Content-Type", "text/xml")
		io.WriteString(w, `<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></PutMetricDataResponse>`)
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}}
	err := New(NewClient(cfg)).Publish(context.Background(), []metrics.Point{{Name: metrics.IngestAccepted, Unit: metrics.Count, Value: 1, Time: time.Now()}})
	if err != nil {
		t.Fatalf("PutMetricData: %v", err)
	}
	if gotType != "application/x-www-form-urlencoded" || gotForm.Get("Action") != "PutMetricData" || gotForm.Get("Namespace") != "Hookfan" {
		t.Errorf("request content type %q, form %v; want a query-protocol PutMetricData", gotType, gotForm)
	}
}
