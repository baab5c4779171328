package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
)

func setEnv(t *testing.T, skip string) {
	t.Helper()
	env := map[string]string{
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     "test",
		"AWS_SECRET_ACCESS_KEY": "test",
		config.EnvDestination:   config.EncodeDestination(config.Destination{Name: "orders", URL: "https://orders.example.com/hooks"}),
		config.EnvTableName:     "hookfan-deliveries",
		config.EnvQueueURL:      "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
		config.EnvSecretID:      "hookfan/destinations/orders",
		config.EnvRecordDays:    "30",
		config.EnvMetricsSink:   "emf",
	}
	for k, v := range env {
		if k == skip {
			v = ""
		}
		t.Setenv(k, v)
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		unset   string
		sink    string
		bucket  string
		wantErr string
	}{
		{name: "complete"},
		// Built without lambdaenv.CloudWatchBuildTag (make unit runs both
		// builds), the function refuses the sink, naming the tag.
		{name: "cloudwatch sink", sink: config.SinkCloudWatch, wantErr: cloudWatchSinkErr()},
		{name: "no destination", unset: config.EnvDestination, wantErr: config.EnvDestination},
		{name: "no table", unset: config.EnvTableName, wantErr: config.EnvTableName},
		{name: "no queue", unset: config.EnvQueueURL, wantErr: config.EnvQueueURL},
		{name: "no secret", unset: config.EnvSecretID, wantErr: config.EnvSecretID},
		{name: "unknown sink", sink: "statsd", wantErr: config.EnvMetricsSink},
		// Built with lambdaenv.NoPayloadsBuildTag (make unit runs that
		// build too), the function refuses a payload bucket, naming the tag.
		{name: "payload bucket", bucket: "hookfan-payloads", wantErr: featureErr(lambdaenv.PayloadsLinked, lambdaenv.NoPayloadsBuildTag)},
		{name: "no region", unset: "AWS_REGION", wantErr: "AWS_REGION"},
		{name: "no credentials", unset: "AWS_ACCESS_KEY_ID", wantErr: "AWS_ACCESS_KEY_ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.unset)
			if tt.sink != "" {
				t.Setenv(config.EnvMetricsSink, tt.sink)
			}
			t.Setenv(config.EnvPayloadBucket, tt.bucket)
			var logs bytes.Buffer
			h, err := build(context.Background(), slog.New(slog.NewJSONHandler(&logs, nil)))
			if tt.wantErr == "" {
				if err != nil || h == nil {
					t.Fatalf("build = %v, %v; want a handler", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("build error = %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

// TestBuildPausingLane: a destination that pauses needs its queue's ARN
// and the function's name (to find its event source mapping).
func TestBuildPausingLane(t *testing.T) {
	pausing := config.EncodeDestination(config.Destination{Name: "orders", URL: "https://orders.example.com/hooks", Pause: &config.Pause{}})
	for _, tt := range []struct {
		name, unset, wantErr string
	}{
		// Built with lambdaenv.NoPauseBuildTag (make unit runs that build
		// too), the function refuses a pausing destination, naming the tag.
		{name: "complete", wantErr: featureErr(pauseLinked, lambdaenv.NoPauseBuildTag)},
		{name: "no queue ARN", unset: config.EnvQueueARN, wantErr: config.EnvQueueARN},
		{name: "no function name", unset: "AWS_LAMBDA_FUNCTION_NAME", wantErr: "AWS_LAMBDA_FUNCTION_NAME"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, "")
			t.Setenv(config.EnvDestination, pausing)
			for k, v := range map[string]string{config.EnvQueueARN: "arn:aws:sqs:us-east-1:123456789012:orders", "AWS_LAMBDA_FUNCTION_NAME": "hookfan-orders"} {
				if k == tt.unset {
					v = ""
				}
				t.Setenv(k, v)
			}
			h, err := build(context.Background(), slog.New(slog.NewJSONHandler(&bytes.Buffer{}, nil)))
			if tt.wantErr == "" {
				if err != nil || h == nil {
					t.Fatalf("build = %v, %v; want a handler", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("build error = %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}

// TestLoggerCarriesRequestID runs the function's logger as Lambda does —
// the log format JSON in the environment when the process starts, the
// request id in the context — in a child process, and reads its stdout.
func TestLoggerCarriesRequestID(t *testing.T) {
	if os.Getenv("HOOKFAN_LOG_CHILD") == "1" {
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-9c1d"})
		lambdaenv.Logger().InfoContext(ctx, delivery.LogMessage, "outcome", "delivered", "latency_ms", int64(12))
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLoggerCarriesRequestID$")
	cmd.Env = append(os.Environ(), "HOOKFAN_LOG_CHILD=1", "AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_LOG_LEVEL=INFO")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var found bool
	for _, line := range strings.Split(string(out), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil {
			continue // the test runner's own lines
		}
		if l["message"] != "deliver" || l["requestId"] != "req-9c1d" || l["outcome"] != "delivered" || l["level"] != "INFO" {
			t.Errorf("log line %s: want message deliver, requestId req-9c1d, outcome delivered, level INFO", line)
		}
		found = true
	}
	if !found {
		t.Fatalf("no log line in:\n%s", out)
	}
}

// cloudWatchSinkErr is what the error for metrics.sink "cloudwatch" must
// name: the build tag when this build lacks the sink, nothing otherwise.
func cloudWatchSinkErr() string {
	if lambdaenv.PutMetricDataLinked {
		return ""
	}
	return lambdaenv.CloudWatchBuildTag
}

// featureErr is what the error for a configuration needing a feature must
// name: the build tag that left the feature out of this build, nothing
// when the build links it.
func featureErr(linked bool, tag string) string {
	if linked {
		return ""
	}
	return tag
}
