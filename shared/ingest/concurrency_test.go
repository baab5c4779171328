package ingest_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// TestConcurrentBase64Requests sends base64 bodies with distinct ids and
// types from several goroutines through one handler (run with -race):
// every published message and every log line must carry its own request's
// id and type.
func TestConcurrentBase64Requests(t *testing.T) {
	const workers, perWorker = 4, 60
	r := newRig(t, []config.Source{sourceConfig(t, "stripe")})
	log := &syncBuffer{}
	h, err := ingest.New(ingest.Options{
		Sources: []config.Source{sourceConfig(t, "stripe")}, TopicARN: topicARN, Publisher: r.pub, Secrets: r.sec,
		Metrics: metrics.NewRecorder(r.met), Logger: slog.New(slog.NewJSONHandler(log, nil)), Now: func() time.Time { return r.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	typeOf := func(providerID string) string { return "test." + providerID + ".done" }
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range perWorker {
				s := events.MustLoad("stripe", "payment_intent.succeeded")
				// Bodies of different lengths, so buffers are reused at
				// several sizes.
				pid := fmt.Sprintf("evt_%d_%d", w, i)
				s.Body = fmt.Appendf(nil, `{"id":%q,"object":"event","data":{"object":{"pad":%q}},"type":%q}`,
					pid, strings.Repeat("x", (w*perWorker+i)%97), typeOf(pid))
				req := signSample(t, "stripe", s, r.now)
				req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(s.Body), true
				resp, err := h.Handle(context.Background(), req)
				if err != nil || resp.StatusCode != 202 {
					t.Errorf("%s: %d %s %v", pid, resp.StatusCode, resp.Body, err)
				}
			}
		})
	}
	wg.Wait()

	published := r.pub.published()
	if len(published) != workers*perWorker {
		t.Fatalf("%d messages published, want %d", len(published), workers*perWorker)
	}
	for _, in := range published {
		var body struct{ ID, Type string }
		if err := json.Unmarshal([]byte(*in.Message), &body); err != nil {
			t.Fatalf("message %q: %v", *in.Message, err)
		}
		if attr(in, "type") != body.Type || attr(in, "id") != wantID("stripe", body.ID) {
			t.Errorf("message for %s carries type %q, id %q", body.ID, attr(in, "type"), attr(in, "id"))
		}
	}
	lines := log.lines(t)
	if len(lines) != workers*perWorker {
		t.Fatalf("%d log lines, want %d", len(lines), workers*perWorker)
	}
	for _, l := range lines {
		pid, _ := l["provider_event_id"].(string)
		if l["type"] != typeOf(pid) || l["id"] != wantID("stripe", pid) {
			t.Errorf("log line for %s: type %v, id %v", pid, l["type"], l["id"])
		}
	}
}
