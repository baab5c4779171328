package ingest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/tools/cost"
)

// TestCostLogFiguresHoldTheLines accepts one Stripe event as the deployed
// function does (Lambda's JSON log format with its requestId, the EMF
// sink, an SNS message id) and holds the cost model's IngestLogBytes and
// IngestEMFBytes to the lines written: never below them (the bill would
// be understated), and within a fifth above. A field added to the
// request's line fails here until the model prices it.
func TestCostLogFiguresHoldTheLines(t *testing.T) {
	var logs, emf bytes.Buffer
	body := events.MustLoad("stripe", "payment_intent.succeeded").Body
	newIngestHandler(t, body, true, &logs, &emf, "8f5ae0b4-1c2d-4e5f-9a8b-7c6d5e4f3a2b")()
	if strings.Count(logs.String(), "\n") != 1 || !strings.Contains(logs.String(), `"outcome":"accepted"`) {
		t.Fatalf("want one accepted line, got %q", logs.String())
	}
	if strings.Count(emf.String(), "\n") != 1 {
		t.Fatalf("want one EMF line, got %q", emf.String())
	}
	for _, c := range []struct {
		name   string
		figure cost.Figure
		line   string
	}{
		{"IngestLogBytes", cost.Assumed.IngestLogBytes, logs.String()},
		{"IngestEMFBytes", cost.Assumed.IngestEMFBytes, emf.String()},
	} {
		t.Logf("%s: %d bytes written, the model says %v", c.name, len(c.line), c.figure.Value)
		if err := c.figure.Covers(len(c.line)); err != nil {
			t.Errorf("cost.Assumed.%s: %v (%s)", c.name, err, strings.TrimSpace(c.line))
		}
	}
}
