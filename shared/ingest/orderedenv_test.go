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
	want := ingest.FunctionEnv(cfg, "arn:aws:sns:us-east-1:1:events", "", "", "").WithOrdering(cfg, "arn:aws:sns:us-east-1:1:events.fifo")
	rendered := want.Render()
	if rendered[config.EnvOrderedTopicARN] == "" || rendered[config.EnvOrderingRoutes] != `[{"key":"body:data.object.id"}]` {
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
	plain := ingest.FunctionEnv(cfg, "arn:aws:sns:us-east-1:1:events", "", "", "").WithOrdering(cfg, "arn:aws:sns:us-east-1:1:events.fifo")
	if r := plain.Render(); r[config.EnvOrderedTopicARN] != "" || r[config.EnvOrderingRoutes] != "" {
		t.Errorf("rendered %v without an ordered destination", r)
	}
	for _, bad := range []map[string]string{
		{config.EnvOrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo"},
		{config.EnvOrderingRoutes: `[{"key":"body:id"}]`},
		{config.EnvOrderedTopicARN: "arn:aws:sns:us-east-1:1:events.fifo", config.EnvOrderingRoutes: `[{"key":"id"}]`},
	} {
		env := plain.Render()
		for k, v := range bad {
			env[k] = v
		}
		if _, err := ingest.ReadEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), config.EnvOrderingRoutes) {
			t.Errorf("ReadEnv(%v) = %v, want an error naming %s", bad, err, config.EnvOrderingRoutes)
		}
	}
}
