package main

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

func TestSetup(t *testing.T) {
	sources := config.EncodeSources([]config.Source{{Name: "stripe", Verify: config.Verify{Kind: provider.Stripe, SecretName: "hookfan/sources/stripe"}}})
	tests := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"valid, EMF", map[string]string{config.EnvSources: sources, config.EnvTopicARN: "arn:aws:sns:us-east-1:123456789012:t"}, ""},
		{"valid, PutMetricData", map[string]string{config.EnvSources: sources, config.EnvTopicARN: "arn:aws:sns:us-east-1:123456789012:t", config.EnvMetricsSink: "cloudwatch"}, ""},
		{"no sources", map[string]string{config.EnvTopicARN: "arn:aws:sns:us-east-1:123456789012:t"}, config.EnvSources},
		{"invalid source", map[string]string{config.EnvSources: `[{"name":"Bad Name","verify":{"kind":"stripe","secretName":"s"}}]`, config.EnvTopicARN: "arn"}, "sources[0].name"},
		{"no topic", map[string]string{config.EnvSources: sources}, config.EnvTopicARN},
		{"unknown sink", map[string]string{config.EnvSources: sources, config.EnvTopicARN: "arn", config.EnvMetricsSink: "statsd"}, config.EnvMetricsSink},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{config.EnvSources, config.EnvTopicARN, config.EnvMetricsSink} {
				t.Setenv(k, tt.env[k])
			}
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			h, err := setup(context.Background(), slog.New(slog.DiscardHandler))
			switch {
			case tt.wantErr == "" && (err != nil || h == nil):
				t.Fatalf("setup = %v, %v; want a handler", h, err)
			case tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
				t.Fatalf("setup error = %v, want one naming %s", err, tt.wantErr)
			}
		})
	}
}
