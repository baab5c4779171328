package cost_test

import (
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
)

// TestFIFOLinesByHand checks the ordered lanes' lines against sums done by
// hand from the FIFO prices.
func TestFIFOLinesByHand(t *testing.T) {
	small := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 1}
	gb := float64(1 << 30)
	topic := cost.FIFOTopicLines(small, 1)
	// A million publishes of 2 KB (body and attributes).
	if got, want := line(t, topic, "SNS FIFO publishes"), 0.30; !near(got, want) {
		t.Errorf("FIFO publishes: %v, want %v", got, want)
	}
	if got, want := line(t, topic, "SNS FIFO published payload"), 1e6*2048/gb*0.017; !near(got, want) {
		t.Errorf("FIFO payload: %v, want %v", got, want)
	}
	// Two key specs: each event is published twice.
	if got, want := cost.Sum(cost.FIFOTopicLines(small, 2)), 2*cost.Sum(topic); !near(got, want) {
		t.Errorf("two key specs: %v, want %v", got, want)
	}
	if got := cost.Sum(cost.FIFOTopicLines(small, 0)); got != 0 {
		t.Errorf("no ordered destination: %v, want 0", got)
	}
	lane := cost.OrderedLaneExtra(small, cost.Defaults())
	if got, want := line(t, lane, "SNS FIFO deliveries to the lane's queue"), 0.01+1e6*2048/gb*0.001; !near(got, want) {
		t.Errorf("FIFO deliveries: %v, want %v", got, want)
	}
	// At a million a month batches hold one message: a send, a receive
	// and a delete per event, at $0.10 per million more than standard.
	if got, want := line(t, lane, "SQS FIFO requests, beyond the standard price"), 3*0.10; !near(got, want) {
		t.Errorf("FIFO SQS: %v, want %v", got, want)
	}
	// A window in the options does not apply to an ordered lane.
	if got := cost.Sum(cost.OrderedLaneExtra(small, cost.Cheapest())); !near(got, cost.Sum(lane)) {
		t.Errorf("cheapest options' window changed the ordered lane: %v, want %v", got, cost.Sum(lane))
	}
}

// TestResourcesCountTheFIFOTopic: an ordered destination adds the FIFO
// topic, and nothing else, to the counts.
func TestResourcesCountTheFIFOTopic(t *testing.T) {
	plain := cost.Reference(2)
	ordered := cost.Reference(2)
	ordered.Destinations[1].Ordering = &config.Ordering{Key: "body:id"}
	a, b := cost.Resources(plain), cost.Resources(ordered)
	a.Topics++
	if a != b {
		t.Errorf("counts with an ordered destination %+v, want the standard ones with one topic more %+v", b, a)
	}
}
