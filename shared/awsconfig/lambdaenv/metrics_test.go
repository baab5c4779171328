package lambdaenv

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// TestMetricsSink runs in both builds (make unit runs this package with
// and without CloudWatchBuildTag): EMF always; PutMetricData, against a
// stub CloudWatch endpoint, only with the tag, and otherwise an error that
// names the tag and the other sink.
func TestMetricsSink(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "text/xml")
		w.Write([]byte(`<PutMetricDataResponse xmlns="http://monitoring.amazonaws.com/doc/2010-08-01/"><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></PutMetricDataResponse>`))
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}}
	point := []metrics.Point{{Name: metrics.IngestAccepted, Unit: metrics.Count, Value: 1, Time: time.Now()}}

	for _, name := range []string{"", config.SinkEMF} {
		var buf bytes.Buffer
		sink, err := MetricsSink(cfg, name, &buf)
		if err != nil {
			t.Fatalf("MetricsSink(%q): %v", name, err)
		}
		if err := sink.Publish(context.Background(), point); err != nil || metrics.ValidateEMF(bytes.TrimSpace(buf.Bytes())) != nil {
			t.Errorf("MetricsSink(%q) wrote %q (%v), want one EMF line", name, buf.String(), err)
		}
	}

	sink, err := MetricsSink(cfg, config.SinkCloudWatch, nil)
	if !PutMetricDataLinked {
		want := `metrics sink "cloudwatch": this binary was built without the PutMetricData sink; build it with -tags hookfan.cloudwatch (the stack's builder does when metrics.sink is "cloudwatch") or set metrics.sink to "emf"`
		if err == nil || err.Error() != want {
			t.Errorf("MetricsSink(cloudwatch) without the tag = %v, %v; want the error %q", sink, err, want)
		}
	} else {
		if err != nil {
			t.Fatalf("MetricsSink(cloudwatch) with the tag: %v", err)
		}
		if err := sink.Publish(context.Background(), point); err != nil || calls.Load() != 1 {
			t.Errorf("Publish = %v after %d CloudWatch calls, want one call", err, calls.Load())
		}
	}

	if _, err := MetricsSink(cfg, "statsd", nil); err == nil || !strings.Contains(err.Error(), "statsd") {
		t.Errorf("MetricsSink(statsd) = %v, want an error naming it", err)
	}
}

// TestFunctionsLinkCloudWatchOnlyWithTheTag keeps the CloudWatch client,
// whose package initialisation costs every cold start about 0.7 ms, out of
// the functions built without CloudWatchBuildTag (the EMF sink needs no
// client), and checks that the tag does link it.
func TestFunctionsLinkCloudWatchOnlyWithTheTag(t *testing.T) {
	const cloudwatch = "github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	for _, fn := range []string{"ingest", "deliver"} {
		for _, tags := range []string{"lambda.norpc", "lambda.norpc," + CloudWatchBuildTag} {
			out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/hookfan/hookfan/functions/"+fn).Output()
			if err != nil {
				t.Fatalf("go list -tags %s: %v", tags, err)
			}
			want := strings.Contains(tags, CloudWatchBuildTag)
			if got := slices.Contains(strings.Fields(string(out)), cloudwatch); got != want {
				t.Errorf("%s built with -tags %s links %s: %v, want %v", fn, tags, cloudwatch, got, want)
			}
		}
	}
}
