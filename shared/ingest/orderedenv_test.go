package ingest_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
)

// TestEnvRoundTripOrdered: the FIFO topic and the ordering routes travel
// with an ordered destination, and not without one.
func TestEnvRoundTripOrdered(t *testing.T) {
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [{"name": "orders", "url": "https://orders.example.com/hooks", "ordering": {"key": "body:data.object.id"}},
	    {"name": "all", "url": "https://all.example.com/hooks"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := ingest.FunctionEnv(cfg, ingest.Resources{TopicARN: "arn:aws:sns:us-east-1:1:events", OrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo"})
	rendered := want.Render()
	if rendered[ingest.EnvOrderedTopicARN] == "" || rendered[ingest.EnvOrderingRoutes] != `[{"key":"body:data.object.id"}]` {
		t.Errorf("rendered %v, want the FIFO topic and one route", rendered)
	}
	got, err := ingest.ReadEnv(func(k string) string { return rendered[k] })
	if err != nil {
		t.Fatalf("ReadEnv(Render()): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-rendered +read):\n%s", diff)
	}
	cfg.Destinations = cfg.Destinations[1:]
	plain := ingest.FunctionEnv(cfg, ingest.Resources{TopicARN: "arn:aws:sns:us-east-1:1:events", OrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo"})
	if r := plain.Render(); r[ingest.EnvOrderedTopicARN] != "" || r[ingest.EnvOrderingRoutes] != "" {
		t.Errorf("rendered %v without an ordered destination", r)
	}
	for _, bad := range []map[string]string{
		{ingest.EnvOrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo"},
		{ingest.EnvOrderingRoutes: `[{"key":"body:id"}]`},
		{ingest.EnvOrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo", ingest.EnvOrderingRoutes: `[{"key":"id"}]`},
	} {
		env := plain.Render()
		for k, v := range bad {
			env[k] = v
		}
		if _, err := ingest.ReadEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), ingest.EnvOrderingRoutes) {
			t.Errorf("ReadEnv(%v) = %v, want an error naming %s", bad, err, ingest.EnvOrderingRoutes)
		}
	}
}
