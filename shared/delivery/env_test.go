package delivery

import (
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/secrets"
)

func contractConfig(t *testing.T, dest string) *config.Config {
	t.Helper()
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [` + dest + `], "dedupe": {"recordDays": 40}, "metrics": {"sink": "emf"}}`))
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestEnvRoundTrip: what Render writes, ReadEnv reads back, for a lane
// that pauses and one that does not.
func TestEnvRoundTrip(t *testing.T) {
	for _, dest := range []string{
		`{"name": "orders", "url": "https://orders.example.com/hooks"}`,
		`{"name": "orders", "url": "https://orders.example.com/hooks", "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"},
		  "headers": [{"name": "Authorization", "secretName": "orders/token"}]}`,
		`{"name": "orders", "url": "https://orders.example.com/hooks", "auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1"}},
		  "transform": "{text: .type}"}`,
	} {
		cfg := contractConfig(t, dest)
		d := cfg.Destinations[0]
		want := LaneEnv(cfg, d, LaneResources{Table: "records", QueueURL: "https://sqs/queue", QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "orders-secret", PayloadBucket: "payloads", ArchiveBucket: "archive"})
		if want.Pauses() {
			want.Tracing = config.TracingSampled // rendered only when tracing is on
		}
		rendered := want.Render()
		if want.Pauses() {
			want.FunctionName = "hookfan-orders" // set by Lambda, not rendered
			rendered[EnvFunctionName] = want.FunctionName
		} else {
			if _, ok := rendered[EnvQueueARN]; ok {
				t.Errorf("%s rendered for a lane that does not pause", EnvQueueARN)
			}
			want.QueueARN = ""
		}
		got, err := ReadEnv(func(k string) string { return rendered[k] })
		if err != nil {
			t.Fatalf("ReadEnv(Render()): %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("round trip (-rendered +read):\n%s", diff)
		}
		if got.RecordDays != 40 || got.MetricsSink != config.SinkEMF {
			t.Errorf("record days %d, sink %q; want the config's 40 and emf", got.RecordDays, got.MetricsSink)
		}
	}
}

// TestReadEnvEveryProblem: every problem at once, each naming the
// variable and, for a bad value, the value.
func TestReadEnvEveryProblem(t *testing.T) {
	env := map[string]string{
		EnvDestination:        `{"name": "orders", "url": "https://orders.example.com/hooks", "pause": {}}`,
		EnvRecordDays:         "forever",
		config.EnvMetricsSink: "statsd",
	}
	_, err := ReadEnv(func(k string) string { return env[k] })
	if err == nil {
		t.Fatal("ReadEnv accepted an incomplete environment")
	}
	for _, want := range []string{EnvTableName, EnvQueueURL, EnvSecretID, EnvQueueARN, EnvFunctionName,
		EnvRecordDays, `"forever"`, config.EnvMetricsSink, `"statsd"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not name %s", err, want)
		}
	}
	if _, err := ReadEnv(func(string) string { return "" }); err == nil || !strings.Contains(err.Error(), EnvDestination) {
		t.Errorf("ReadEnv of nothing = %v, want an error naming %s", err, EnvDestination)
	}
}

// TestAssemble: a handler from a complete contract and clients; an error
// naming what is missing otherwise.
func TestAssemble(t *testing.T) {
	cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks", "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"}}`)
	env := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "orders-secret", PayloadBucket: "payloads", ArchiveBucket: "archive"})
	complete := func() Clients {
		return Clients{Store: dedupe.NewMemory(), SQS: sqs.New(sqs.Options{Region: "us-east-1"}),
			Secrets:  secrets.NewCache(secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})),
			Payloads: payload.NewMemory("payloads"), Lanes: pausing.NewMemory(), Switch: &pausing.MemorySwitch{},
			Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler)}
	}
	if h, err := Assemble(env, complete()); err != nil || h.lane == nil || h.requeue == nil || h.shape.payloads == nil || h.ttl != 40*24*time.Hour {
		t.Fatalf("Assemble = %+v, %v; want a handler with the lane, the requeue, the payloads and 40 days of records", h, err)
	}
	signed := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks", "auth": {"sigv4": {"service": "lambda", "region": "eu-west-1"}}}`)
	senv := LaneEnv(signed, signed.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "orders-secret"})
	if _, err := Assemble(senv, complete()); err == nil || !strings.Contains(err.Error(), "no AWS credentials") {
		t.Errorf("Assemble of a signed destination without credentials = %v, want an error naming the credentials", err)
	}
	sc := complete()
	sc.Credentials = credentials.NewStaticCredentialsProvider("AKID", "SECRET", "")
	if h, err := Assemble(senv, sc); err != nil || !h.sender.(*https.Sender).SignsSigV4() {
		t.Errorf("Assemble of a signed destination = %v, want a handler that signs", err)
	}
	c := complete()
	c.Payloads, c.Switch, c.Metrics = nil, nil, nil
	_, err := Assemble(env, c)
	for _, want := range []string{"payload", "event source mapping", "metrics"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Assemble without payloads, switch and metrics = %v, want an error naming the %s", err, want)
		}
	}
}

// TestAssemblePacedLane: a destination with rateLimit gets its pacer (the
// bucket run one token short of its burst) and the requeue client its
// deferrals need; without a pacing store it is refused; an unpaced one
// builds no pacer.
func TestAssemblePacedLane(t *testing.T) {
	cfg := contractConfig(t, `{"name": "slack", "url": "https://hooks.example.com/x", "rateLimit": {"perSecond": 5}}`)
	env := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "slack-secret"})
	c := Clients{Store: dedupe.NewMemory(), SQS: sqs.New(sqs.Options{Region: "us-east-1"}),
		Secrets: secrets.NewCache(secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})),
		Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler)}
	if _, err := Assemble(env, c); err == nil || !strings.Contains(err.Error(), "rateLimit but no pacing store") {
		t.Errorf("Assemble without a pacing store = %v, want it refused", err)
	}
	c.Pace = pacing.NewMemory()
	h, err := Assemble(env, c)
	if err != nil || h.pacer == nil || h.requeue == nil {
		t.Fatalf("Assemble = %+v, %v; want a pacer and a requeue client", h, err)
	}
	if got := h.pacer.Effective(); got != 5 {
		t.Errorf("effective rate %v, want 5", got)
	}
	plain := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks"}`)
	penv := LaneEnv(plain, plain.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "orders-secret"})
	if h, err := Assemble(penv, c); err != nil || h.pacer != nil {
		t.Errorf("an unpaced lane: pacer %v, %v; want none", h.pacer, err)
	}
}
