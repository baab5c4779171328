package ingest_test

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// brokenSink refuses every point.
type brokenSink struct{}

func (brokenSink) Publish(context.Context, []metrics.Point) error {
	return errors.New("write /dev/stdout: broken pipe")
}

// TestMetricsLostIsAWarning: an accepted request whose metrics could not
// be written is still accepted, and its line says so as a warning, which
// functions.logLevel WARN keeps (an accepted request's line is INFO).
func TestMetricsLostIsAWarning(t *testing.T) {
	sources := []config.Source{sourceConfig(t, "hmac-plain")}
	sec := &fakeSecrets{values: map[string][]string{}, fresh: map[string][]string{}, err: map[string]error{}}
	sec.values[sources[0].Verify.SecretName] = []string{secretOf("hmac-plain")}
	logs := &syncBuffer{}
	h, err := ingest.New(ingest.Options{Sources: sources, TopicARN: topicARN, Publisher: &fakePublisher{}, Secrets: sec,
		Metrics: metrics.NewRecorder(brokenSink{}), Replay: replayguard.NewMemory(),
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	s := events.Sample{Kind: "hmac", Name: "m", Body: []byte(`{"id":"m1"}`), Header: http.Header{"Content-Type": {"application/json"}}}
	resp, _ := h.Handle(context.Background(), signSample(t, "hmac-plain", s, time.Now()))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d %s, want 202: lost metrics lose no event", resp.StatusCode, resp.Body)
	}
	if line := logs.String(); !strings.Contains(line, `"level":"WARN"`) || !strings.Contains(line, `"metrics_error":"flush 1 metric points: write /dev/stdout: broken pipe"`) {
		t.Errorf("log %q, want a WARN line with the metrics error", line)
	}
}
