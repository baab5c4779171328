package cost_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/tools/cost"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// TestBatchedLaneByHand checks a batched lane's lines against sums done
// by hand: 100 M events of 1 KB to one destination with maxEvents 100 and
// a 5 s window.
func TestBatchedLaneByHand(t *testing.T) {
	sc := cost.Scenario{Events: 1e8, BodyKB: 1, Destinations: 1}
	o := cost.Batched(cost.Defaults(), cost.BatchConfig{MaxEvents: 100, WindowSeconds: 5})
	// 38.58 events a second over five pollers, 5 s each: 38 a batch.
	if got := cost.Batch(sc, o); got != 38 {
		t.Fatalf("batch %v, want 38", got)
	}
	invocations := 1e8 / 38
	v := cost.Variable(sc, o)
	// SNS's send of each event; per batch four receives and four deletes
	// of up to ten messages (10 KB: one chunk each).
	if got, want := line(t, v, "SQS requests"), (1e8+2*4*invocations)*0.40/1e6; !near(got, want) {
		t.Errorf("SQS %v, want %v", got, want)
	}
	// Its POSTs come 1.015 a second, so the connection stays open: 38 ×
	// 0.268 ms of CPU at a 13.8th of a vCPU (140.7 ms); waited: the claims
	// (38 at once, 5 ms), the subscriber (100 ms), the records (38 at
	// once, 5 ms).
	if got := cost.DeliverMs(sc, o); got != 251 {
		t.Errorf("deliver billed %v ms, want 251", got)
	}
	if got, want := line(t, v, "Lambda deliver: requests and GB-s"), invocations*0.20/1e6+invocations*0.251*0.125*0.0000133334; !near(got, want) {
		t.Errorf("Lambda deliver %v, want %v", got, want)
	}
	// Each body with its item's bytes; one request's overhead and the
	// envelope per POST.
	if got, want := line(t, v, "Data transfer out to subscribers"), (1e8*(1024+180)+invocations*(700+60))/(1<<30)*0.09; !near(got, want) {
		t.Errorf("data out %v, want %v", got, want)
	}
	// Records stay per event: the lease's two writes each.
	if got := line(t, v, "DynamoDB: claim and finish writes"); !near(got, 2*1e8*0.625/1e6) {
		t.Errorf("records %v", got)
	}
}

// TestBatchSavesWhereBatchesFill: at 100 M every priced batch saves
// against one POST per event; where the window fills no batch (1 M, up to
// 20 s) it costs exactly what it adds per event more: the envelope's
// bytes out, the batch id in the record kept and in the attempt's line.
func TestBatchSavesWhereBatchesFill(t *testing.T) {
	def := cost.Defaults()
	p, a, b := cost.Prices, cost.Assumed, cost.BatchAssumed
	for _, bc := range cost.BatchConfigs {
		if saving, share := cost.BatchSaving(1e8, bc); saving <= 0 || share <= 0 || share >= 1 {
			t.Errorf("%+v at 100 M: saving %v (%v of the lane)", bc, saving, share)
		}
		sc := cost.Scenario{Events: 1e6, BodyKB: 1, Destinations: 1}
		if cost.Batch(sc, cost.Batched(def, bc)) > 1 {
			continue
		}
		saving, _ := cost.BatchSaving(1e6, bc)
		const gb = 1 << 30
		extra := 1e6 * ((b.ItemBytes.Value+b.EnvelopeBytes.Value)/gb*p.DataOut.USD +
			b.RecordBytes.Value/gb*(p.DynamoStorage.USD+p.PITR.USD)*a.RecordDays.Value/30 + b.LogBytes.Value/gb*p.LogsIngest.USD)
		if !near(-saving, extra) {
			t.Errorf("%+v at 1 M, one event a POST: costs %v more, want %v", bc, -saving, extra)
		}
	}
}

// TestBatchOptionsOf: a batched destination's maxEvents and window are
// the options the bill follows; one without batch has none.
func TestBatchOptionsOf(t *testing.T) {
	cfg := cost.Reference(1)
	if o := cost.OptionsOf(cfg); o.BatchEvents != 0 || o.BatchWindow != 0 {
		t.Errorf("unbatched: %+v", o)
	}
	cfg.Destinations[0].Batch = &config.Batch{MaxEvents: 250, Window: 7 * time.Second}
	if o := cost.OptionsOf(cfg); o.BatchEvents != 250 || o.BatchWindow != 7 {
		t.Errorf("batched: events %d window %v, want 250 and 7", o.BatchEvents, o.BatchWindow)
	}
}

// TestBatchFiguresHoldTheEnvelope: ItemBytes covers what the envelope
// (sender.BatchItem) adds around a Stripe event's data, with the comma
// between items, and EnvelopeBytes the envelope's own bytes and the count
// header.
func TestBatchFiguresHoldTheEnvelope(t *testing.T) {
	body := []byte(`{"id":"evt_3QxJ8bLkdIwHu7ix0Zq1AbCd","object":"event","pad":"` + strings.Repeat("x", 900) + `"}`)
	d := sender.Delivery{ID: "evt_3QxJ8bLkdIwHu7ix0Zq1AbCd", Source: "stripe", Type: "payment_intent.succeeded", ContentType: "application/json",
		Body: body, ReceivedAt: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC)}
	item, err := sender.BatchItem(d)
	if err != nil {
		t.Fatal(err)
	}
	added := len(item) - len(body) + 1
	if err := cost.BatchAssumed.ItemBytes.Covers(added); err != nil {
		t.Errorf("ItemBytes: %v", err)
	}
	header := len("hookfan-batch-size: 10000\r\n")
	if got := sender.BatchOverhead + header; cost.BatchAssumed.EnvelopeBytes.Value < float64(got) {
		t.Errorf("EnvelopeBytes %v is under the envelope and its header, %d", cost.BatchAssumed.EnvelopeBytes.Value, got)
	}
}
