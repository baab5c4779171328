package awsconfig

import (
	"compress/gzip"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

func TestLoadHonoursEnvironment(t *testing.T) {
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_ENDPOINT_URL", "http://127.0.0.1:4566")
	t.Setenv("AWS_ACCESS_KEY_ID", "test")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
	t.Setenv("AWS_CONFIG_FILE", "/nonexistent")
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
	cfg, err := Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Region != DefaultRegion {
		t.Errorf("Region = %q, want %q", cfg.Region, DefaultRegion)
	}
	if cfg.BaseEndpoint == nil || *cfg.BaseEndpoint != "http://127.0.0.1:4566" {
		t.Errorf("BaseEndpoint = %v, want the AWS_ENDPOINT_URL value", cfg.BaseEndpoint)
	}
	creds, err := cfg.Credentials.Retrieve(context.Background())
	if err != nil || creds.AccessKeyID != "test" {
		t.Errorf("credentials = %+v, %v; want the environment's", creds, err)
	}

	t.Setenv("AWS_REGION", "eu-west-1")
	cfg, err = Load(context.Background())
	if err != nil || cfg.Region != "eu-west-1" {
		t.Errorf("Region = %q, %v; want eu-west-1", cfg.Region, err)
	}
}

// TestCloudWatchSpeaksQuery proves the client sends the query protocol that
// emulators understand, not the SDK's default RPCv2 CBOR.
func TestCloudWatchSpeaksQuery(t *testing.T) {
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
	_, err := NewCloudWatch(cfg).PutMetricData(context.Background(), &cloudwatch.PutMetricDataInput{
		Namespace:  aws.String("Hookfan"),
		MetricData: []types.MetricDatum{{MetricName: aws.String("IngestAccepted"), Value: aws.Float64(1)}},
	})
	if err != nil {
		t.Fatalf("PutMetricData: %v", err)
	}
	if gotType != "application/x-www-form-urlencoded" || gotForm.Get("Action") != "PutMetricData" || gotForm.Get("Namespace") != "Hookfan" {
		t.Errorf("request content type %q, form %v; want a query-protocol PutMetricData", gotType, gotForm)
	}
}
