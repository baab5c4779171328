package delivery

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEnvRoundTripOrdered: an ordered lane's contract is its destination
// with its ordering key, read back as rendered: no variable repeats that
// the lane is ordered.
func TestEnvRoundTripOrdered(t *testing.T) {
	cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks", "ordering": {"key": "body:data.object.id"}}`)
	want := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue.fifo", QueueARN: "arn:aws:sqs:us-east-1:1:queue.fifo", SecretID: "orders-secret"})
	want.QueueARN = ""
	rendered := want.Render()
	for k := range rendered {
		if strings.HasPrefix(k, "HOOKFAN_ORDERED") {
			t.Errorf("%s rendered: the destination says it is ordered", k)
		}
	}
	got, err := ReadEnv(func(k string) string { return rendered[k] })
	if err != nil {
		t.Fatalf("ReadEnv(Render()): %v", err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("round trip (-rendered +read):\n%s", diff)
	}
	if !got.Destination.Ordered() {
		t.Error("the destination read back is not ordered")
	}
	// A variable a stack before this contract rendered is ignored, whatever
	// its value: the destination decides.
	rendered["HOOKFAN_ORDERED"] = "false"
	if again, err := ReadEnv(func(k string) string { return rendered[k] }); err != nil || !again.Destination.Ordered() {
		t.Errorf("ReadEnv with a stale HOOKFAN_ORDERED = %v (ordered %t), want the destination's ordering", err, again.Destination.Ordered())
	}
}
