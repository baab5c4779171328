package ingest_test

import (
	"io"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/replayguard"
)

func envConfig(t *testing.T, api string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"sources": [
	    {"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}, "limits": {"rateLimit": 10, "burstLimit": 20}},
	    {"name": "github", "verify": {"kind": "github", "secretName": "g"}}
	  ],
	  "destinations": [{"name": "orders", "url": "https://orders.example.com/hooks"}],
	  "api": {"type": "` + api + `"}, "metrics": {"sink": "emf"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestEnvRoundTrip: what Render writes, ReadEnv reads back; the sources
// travel without their limits, and GOGC is ingest.GCPercent.
func TestEnvRoundTrip(t *testing.T) {
	for _, api := range []string{config.APITypeREST, config.APITypeHTTP} {
		want := ingest.FunctionEnv(envConfig(t, api), ingest.Resources{TopicARN: "arn:aws:sns:us-east-1:1:events", PayloadBucket: "payloads", ArchiveBucket: "archive", ReplayTable: "records"})
		rendered := want.Render()
		if rendered[ingest.EnvGOGC] != strconv.Itoa(ingest.GCPercent) {
			t.Errorf("GOGC = %q, want %d", rendered[ingest.EnvGOGC], ingest.GCPercent)
		}
		got, err := ingest.ReadEnv(func(k string) string { return rendered[k] })
		if err != nil {
			t.Fatalf("ReadEnv(Render()): %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip (-rendered +read):\n%s", diff)
		}
		if got.APIType != api || got.ReplayTable != "records" || !cmp.Equal(got.Sources[0].Limits, config.SourceLimits{}) {
			t.Errorf("read %+v, want API type %s, the replay table (github has replay protection), no limits", got, api)
		}
	}
}

// TestReadEnvEveryProblem: every problem at once, each naming the
// variable and, for a bad value, the value.
func TestReadEnvEveryProblem(t *testing.T) {
	env := map[string]string{
		ingest.EnvSources:     config.EncodeSources(envConfig(t, config.APITypeREST).Sources),
		ingest.EnvAPIType:     "grpc",
		config.EnvMetricsSink: "statsd",
	}
	_, err := ingest.ReadEnv(func(k string) string { return env[k] })
	for _, want := range []string{ingest.EnvTopicARN, ingest.EnvAPIType, `"grpc"`, config.EnvMetricsSink, `"statsd"`, ingest.EnvReplayTable} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("error %v does not name %s", err, want)
		}
	}
}

// TestAssemble: a handler from a complete contract and clients; an error
// naming what is missing otherwise.
func TestAssemble(t *testing.T) {
	env := ingest.FunctionEnv(envConfig(t, config.APITypeREST), ingest.Resources{TopicARN: "arn:aws:sns:us-east-1:1:events", PayloadBucket: "payloads", ArchiveBucket: "archive", ReplayTable: "records"})
	c := ingest.Clients{Publisher: &fakePublisher{}, Secrets: &fakeSecrets{}, Payloads: payload.NewMemory("payloads"),
		Replay: replayguard.NewMemory(), Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler)}
	if h, err := ingest.Assemble(env, c); err != nil || h == nil {
		t.Fatalf("Assemble = %v, %v; want a handler", h, err)
	}
	c.Payloads, c.Replay, c.Metrics = nil, nil, nil
	_, err := ingest.Assemble(env, c)
	for _, want := range []string{"payload", "replay", "metrics"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Assemble without payloads, replay store and metrics = %v, want an error naming the %s", err, want)
		}
	}
}
