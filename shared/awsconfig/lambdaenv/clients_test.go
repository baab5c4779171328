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

// TestMetricsSink: EMF lines for "" and "emf"; PutMetricData, against a
// stub CloudWatch endpoint, for "cloudwatch" (every binary links it); an
// error naming any other sink.
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
	if err != nil {
		t.Fatalf("MetricsSink(cloudwatch): %v", err)
	}
	if err := sink.Publish(context.Background(), point); err != nil || calls.Load() != 1 {
		t.Errorf("Publish = %v after %d CloudWatch calls, want one call", err, calls.Load())
	}

	if _, err := MetricsSink(cfg, "statsd", nil); err == nil || !strings.Contains(err.Error(), "statsd") {
		t.Errorf("MetricsSink(statsd) = %v, want an error naming it", err)
	}
}

// TestFunctionsLinkEveryClient: one binary per function serves every
// configuration, whatever build tags it is built with: ingest links S3
// (large payloads), DynamoDB (replay protection) and CloudWatch (the
// PutMetricData sink), deliver S3, Lambda (pausing lanes) and CloudWatch.
func TestFunctionsLinkEveryClient(t *testing.T) {
	const sdk = "github.com/aws/aws-sdk-go-v2/service/"
	for _, tt := range []struct {
		function string
		want     []string
	}{
		{"ingest", []string{"sns", "secretsmanager", "s3", "dynamodb", "cloudwatch"}},
		{"deliver", []string{"dynamodb", "sqs", "secretsmanager", "s3", "lambda", "cloudwatch"}},
	} {
		for _, tags := range []string{"lambda.norpc", "lambda.norpc,hookfan.nopayloads,hookfan.nopause,hookfan.noreplay,hookfan.cloudwatch"} {
			out, err := exec.Command("go", "list", "-deps", "-tags", tags, "github.com/hookfan/hookfan/functions/"+tt.function).Output()
			if err != nil {
				t.Fatalf("go list -tags %s: %v", tags, err)
			}
			linked := strings.Fields(string(out))
			for _, svc := range tt.want {
				if !slices.Contains(linked, sdk+svc) {
					t.Errorf("%s built with -tags %s does not link %s%s", tt.function, tags, sdk, svc)
				}
			}
		}
	}
}
