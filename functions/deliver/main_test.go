package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
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
		wantErr string
	}{
		{name: "complete"},
		{name: "cloudwatch sink", sink: config.SinkCloudWatch},
		{name: "no destination", unset: config.EnvDestination, wantErr: config.EnvDestination},
		{name: "no table", unset: config.EnvTableName, wantErr: config.EnvTableName},
		{name: "no queue", unset: config.EnvQueueURL, wantErr: config.EnvQueueURL},
		{name: "no secret", unset: config.EnvSecretID, wantErr: config.EnvSecretID},
		{name: "unknown sink", sink: "statsd", wantErr: config.EnvMetricsSink},
		{name: "no region", unset: "AWS_REGION", wantErr: "AWS_REGION"},
		{name: "no credentials", unset: "AWS_ACCESS_KEY_ID", wantErr: "AWS_ACCESS_KEY_ID"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			setEnv(t, tt.unset)
			if tt.sink != "" {
				t.Setenv(config.EnvMetricsSink, tt.sink)
			}
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
