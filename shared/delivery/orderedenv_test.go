package delivery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

// TestEnvRoundTripOrdered: an ordered lane's function reads Ordered
// back, and a mismatch with its destination is refused.
func TestEnvRoundTripOrdered(t *testing.T) {
	cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks", "ordering": {"key": "body:data.object.id"}}`)
	want := LaneEnv(cfg, cfg.Destinations[0], "records", "https://sqs/queue.fifo", "arn:aws:sqs:us-east-1:1:queue.fifo", "orders-secret", "", "")
	want.QueueARN = ""
	rendered := want.Render()
	if rendered[config.EnvOrdered] != "true" {
		t.Fatalf("%s = %q, want true", config.EnvOrdered, rendered[config.EnvOrdered])
	}
	got, err := ReadEnv(func(k string) string { return rendered[k] })
	if err != nil {
		t.Fatalf("ReadEnv(Render()): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-rendered +read):\n%s", diff)
	}
	for _, v := range []string{"yes", ""} {
		env := want.Render()
		env[config.EnvOrdered] = v
		if _, err := ReadEnv(func(k string) string { return env[k] }); err == nil || !strings.Contains(err.Error(), config.EnvOrdered) {
			t.Errorf("%s = %q: ReadEnv = %v, want an error naming it", config.EnvOrdered, v, err)
		}
	}
}
