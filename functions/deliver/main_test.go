package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery"
)

func setEnv(t *testing.T, skip ...string) {
	t.Helper()
	env := map[string]string{
		"AWS_REGION":            "us-east-1",
		"AWS_ACCESS_KEY_ID":     "test",
		"AWS_SECRET_ACCESS_KEY": "test",
		delivery.EnvDestination: config.EncodeDestination(config.Destination{Name: "orders", URL: "https://orders.example.com/hooks"}),
		delivery.EnvTableName:   "hookfan-deliveries",
		delivery.EnvQueueURL:    "https://sqs.us-east-1.amazonaws.com/123456789012/orders",
		delivery.EnvSecretID:    "hookfan/destinations/orders",
		delivery.EnvRecordDays:  "30",
		config.EnvMetricsSink:   "emf",
	}
	for k, v := range env {
		if slices.Contains(skip, k) {
			v = ""
		}
		t.Setenv(k, v)
	}
}

func TestBuild(t *testing.T) {
	tests := []struct {
		name    string
		unset   []string
		sink    string
		bucket  string
		wantErr []string
	}{
		{name: "complete"},
		// Every binary links the payload store. It writes EMF only: the
		// local stack's PutMetricData sink is refused, naming the variable
		// and what to set.
		{name: "cloudwatch sink", sink: config.SinkCloudWatch, wantErr: []string{config.EnvMetricsSink, `"cloudwatch"`, `set "emf"`}},
		{name: "payload bucket", bucket: "hookfan-payloads"},
		{name: "no destination", unset: []string{delivery.EnvDestination}, wantErr: []string{delivery.EnvDestination}},
		{name: "no table", unset: []string{delivery.EnvTableName}, wantErr: []string{delivery.EnvTableName}},
		{name: "no queue", unset: []string{delivery.EnvQueueURL}, wantErr: []string{delivery.EnvQueueURL}},
		{name: "no secret", unset: []string{delivery.EnvSecretID}, wantErr: []string{delivery.EnvSecretID}},
		{name: "unknown sink", sink: "statsd", wantErr: []string{config.EnvMetricsSink, "statsd"}},
		{name: "no region", unset: []string{"AWS_REGION"}, wantErr: []string{"AWS_REGION"}},
		{name: "no credentials", unset: []string{"AWS_ACCESS_KEY_ID"}, wantErr: []string{"AWS_ACCESS_KEY_ID"}},
		// Every problem at once: the contract's and Lambda's.
		{name: "several", unset: []string{delivery.EnvTableName, delivery.EnvSecretID, "AWS_REGION"}, sink: "statsd",
			wantErr: []string{delivery.EnvTableName, delivery.EnvSecretID, "AWS_REGION", "statsd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.unset...)
			if tt.sink != "" {
				t.Setenv(config.EnvMetricsSink, tt.sink)
			}
			t.Setenv(config.EnvPayloadBucket, tt.bucket)
			h, err := build(slog.New(slog.DiscardHandler))
			checkBuild(t, h, err, tt.wantErr)
		})
	}
}

// checkBuild: a handler when want is empty, else an error naming each of want.
func checkBuild(t *testing.T, h *delivery.Handler, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil || h == nil {
			t.Fatalf("build = %v, %v; want a handler", h, err)
		}
		return
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("build error = %v, want one naming %s", err, w)
		}
	}
}

// TestBuildPausingLane: a destination that pauses needs its queue's ARN
// and the function's name (to find its event source mapping).
func TestBuildPausingLane(t *testing.T) {
	pausing := config.EncodeDestination(config.Destination{Name: "orders", URL: "https://orders.example.com/hooks", Pause: &config.Pause{}})
	for _, tt := range []struct {
		name    string
		unset   []string
		wantErr []string
	}{
		{name: "complete"},
		{name: "no queue ARN", unset: []string{delivery.EnvQueueARN}, wantErr: []string{delivery.EnvQueueARN}},
		{name: "no function name", unset: []string{delivery.EnvFunctionName}, wantErr: []string{delivery.EnvFunctionName}},
		{name: "neither", unset: []string{delivery.EnvQueueARN, delivery.EnvFunctionName}, wantErr: []string{delivery.EnvQueueARN, delivery.EnvFunctionName}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t)
			t.Setenv(delivery.EnvDestination, pausing)
			for k, v := range map[string]string{delivery.EnvQueueARN: "arn:aws:sqs:us-east-1:123456789012:orders", delivery.EnvFunctionName: "hookfan-orders"} {
				if slices.Contains(tt.unset, k) {
					v = ""
				}
				t.Setenv(k, v)
			}
			h, err := build(slog.New(slog.DiscardHandler))
			checkBuild(t, h, err, tt.wantErr)
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
