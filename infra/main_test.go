package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

const sample = `{"sources":[{"name":"stripe","verify":{"kind":"stripe","secretName":"hookfan/sources/stripe"}}],
 "destinations":[{"name":"orders","url":"https://orders.example.com/hooks","filter":{"sources":["stripe"]}}]}`

func TestLoadConfig(t *testing.T) {
	defer jsii.Close()
	file := filepath.Join(t.TempDir(), "hookfan.json")
	if err := os.WriteFile(file, []byte(sample), 0o600); err != nil {
		t.Fatal(err)
	}
	want, err := config.Parse([]byte(sample))
	if err != nil {
		t.Fatal(err)
	}
	var value any = map[string]any{
		"sources":      []any{map[string]any{"name": "stripe", "verify": map[string]any{"kind": "stripe", "secretName": "hookfan/sources/stripe"}}},
		"destinations": []any{map[string]any{"name": "orders", "url": "https://orders.example.com/hooks", "filter": map[string]any{"sources": []any{"stripe"}}}},
	}
	tests := []struct {
		name    string
		context map[string]any
		wantErr string
	}{
		{"file named by hookfanConfig", map[string]any{config.ContextFileKey: file}, ""},
		{"hookfan context value", map[string]any{config.ContextKey: value}, ""},
		{"file wins over the context value", map[string]any{config.ContextFileKey: file, config.ContextKey: map[string]any{"bogus": 1}}, ""},
		{"invalid context value", map[string]any{config.ContextKey: map[string]any{"sources": "stripe"}}, "context.hookfan"},
		// The test runs in infra/, which has no cdk.json.
		{"neither, outside the CDK CLI", nil, "no \"hookfan\" or \"hookfanConfig\" context value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := map[string]any{}
			for k, v := range tt.context {
				ctx[k] = v
			}
			app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx, Outdir: jsii.String(t.TempDir())})
			got, err := loadConfig(app)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("got %v, want an error containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Destinations) != 1 || got.Destinations[0].Filter.FilterPolicy() != want.Destinations[0].Filter.FilterPolicy() || !reflect.DeepEqual(got.Sources[0], want.Sources[0]) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}
