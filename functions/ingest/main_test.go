package main

import (
	"cmp"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/provider"
)

func TestSetup(t *testing.T) {
	sources := config.EncodeSources([]config.Source{{Name: "stripe", Verify: config.Verify{Kind: provider.Stripe, SecretName: "hookfan/sources/stripe"}}})
	github := config.EncodeSources([]config.Source{{Name: "github", Verify: config.Verify{Kind: provider.GitHub, SecretName: "hookfan/sources/github"}}})
	const topic = "arn:aws:sns:us-east-1:123456789012:t"
	tests := []struct {
		name    string
		env     map[string]string
		wantErr []string
	}{
		{"valid, EMF", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: topic}, nil},
		// Every binary links replay protection's store and the payload
		// store. It writes EMF only: the local stack's PutMetricData sink
		// is refused, naming the variable and what to set.
		{"PutMetricData", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: topic, config.EnvMetricsSink: "cloudwatch"}, []string{config.EnvMetricsSink, `"cloudwatch"`, `set "emf"`}},
		{"emf named", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: topic, config.EnvMetricsSink: "emf"}, nil},
		{"replay protection with its table", map[string]string{ingest.EnvSources: github, ingest.EnvTopicARN: topic, ingest.EnvReplayTable: "records"}, nil},
		{"payload bucket", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: topic, config.EnvPayloadBucket: "hookfan-payloads"}, nil},
		{"HTTP API", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: topic, ingest.EnvAPIType: config.APITypeHTTP}, nil},
		{"no sources", map[string]string{ingest.EnvTopicARN: topic}, []string{ingest.EnvSources}},
		{"invalid source", map[string]string{ingest.EnvSources: `[{"name":"Bad Name","verify":{"kind":"stripe","secretName":"s"}}]`, ingest.EnvTopicARN: "arn"}, []string{"sources[0].name"}},
		{"no topic", map[string]string{ingest.EnvSources: sources}, []string{ingest.EnvTopicARN}},
		{"unknown sink", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: "arn", config.EnvMetricsSink: "statsd"}, []string{config.EnvMetricsSink, "statsd"}},
		{"unknown API type", map[string]string{ingest.EnvSources: sources, ingest.EnvTopicARN: "arn", ingest.EnvAPIType: "grpc"}, []string{ingest.EnvAPIType, "grpc"}},
		{"replay protection without its table", map[string]string{ingest.EnvSources: github, ingest.EnvTopicARN: "arn"}, []string{ingest.EnvReplayTable}},
		// Every problem at once.
		{"several", map[string]string{ingest.EnvSources: github, config.EnvMetricsSink: "statsd"}, []string{ingest.EnvTopicARN, ingest.EnvReplayTable, "statsd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, k := range []string{ingest.EnvSources, ingest.EnvTopicARN, config.EnvMetricsSink, ingest.EnvReplayTable, config.EnvPayloadBucket, ingest.EnvAPIType} {
				t.Setenv(k, tt.env[k])
			}
			t.Setenv("AWS_REGION", "us-east-1")
			t.Setenv("AWS_ACCESS_KEY_ID", "test")
			t.Setenv("AWS_SECRET_ACCESS_KEY", "test")
			h, env, err := setup(slog.New(slog.DiscardHandler))
			if len(tt.wantErr) == 0 {
				if err != nil || h == nil {
					t.Fatalf("setup = %v, %v; want a handler", h, err)
				}
				if want := cmp.Or(tt.env[ingest.EnvAPIType], config.APITypeREST); env.APIType != want {
					t.Errorf("API type %q, want %q", env.APIType, want)
				}
				return
			}
			for _, w := range tt.wantErr {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("setup error = %v, want one naming %s", err, w)
				}
			}
		})
	}
}

// TestLogsCarryRequestID runs the function's logger as Lambda does — the
// log format JSON in the environment when the process starts, the request
// id in the context — in a child process, and reads its stdout: one line
// per request, message "ingest" with an outcome, and the request id.
func TestLogsCarryRequestID(t *testing.T) {
	if os.Getenv("HOOKFAN_LOG_CHILD") == "1" {
		sources := config.EncodeSources([]config.Source{{Name: "stripe", Verify: config.Verify{Kind: provider.Stripe, SecretName: "s"}}})
		t.Setenv(ingest.EnvSources, sources)
		t.Setenv(ingest.EnvTopicARN, "arn:aws:sns:us-east-1:123456789012:t")
		t.Setenv(config.EnvMetricsSink, config.SinkEMF)
		h, _, err := setup(lambdaenv.Logger())
		if err != nil {
			t.Fatal(err)
		}
		ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-7f3a"})
		h.Handle(ctx, events.APIGatewayProxyRequest{HTTPMethod: "POST", PathParameters: map[string]string{"source": "nope"}, Body: "{}"})
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogsCarryRequestID$")
	cmd.Env = append(os.Environ(), "HOOKFAN_LOG_CHILD=1", "AWS_LAMBDA_LOG_FORMAT=JSON", "AWS_LAMBDA_LOG_LEVEL=INFO",
		"AWS_REGION=us-east-1", "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	var found bool
	for _, line := range strings.Split(string(out), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil || l["_aws"] != nil {
			continue // the test runner's own lines, and the EMF line
		}
		if l["message"] != "ingest" || l["requestId"] != "req-7f3a" || l["outcome"] != "rejected" || l["code"] != "unknown_source" {
			t.Errorf("log line %s: want message ingest, requestId req-7f3a, outcome rejected, code unknown_source", line)
		}
		found = true
	}
	if !found {
		t.Fatalf("no log line in:\n%s", out)
	}
}

// TestIngestLinksNoJQ: ingest never transforms, so it must not link the jq
// interpreter, whose package init every cold start would pay (about 0.3 ms,
// a tenth of a hello world's init); destination transforms are compiled
// by shared/transform, outside shared/config.
func TestIngestLinksNoJQ(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/itchyny/") || pkg == "github.com/hookfan/hookfan/shared/transform" {
			t.Errorf("ingest links %s", pkg)
		}
	}
}
