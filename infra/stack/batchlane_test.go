package stack_test

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// batchedDests are TestBatchedLanes's lanes (in lanesConfig), with the
// batch size and window each lane's mapping must have.
var batchedDests = []struct {
	spec string
	want batchWant
}{
	{`{"name": "wide", "url": "https://w.example.com/hooks", "timeoutSeconds": 30, "batch": {"maxEvents": 500, "windowSeconds": 20, "maxBytes": 2097152}}`, batchWant{500, 20}},
	{`{"name": "small", "url": "https://s.example.com/hooks", "batch": {"maxEvents": 10}}`, batchWant{10, 0}},
	{`{"name": "most", "url": "https://m.example.com/hooks", "batch": {"maxEvents": 10000, "windowSeconds": 300}}`, batchWant{10000, 300}},
	{`{"name": "batch-queue", "type": "sqs", "target": "arn:aws:sqs:us-east-1:210987654321:orders", "batch": {"maxEvents": 100, "windowSeconds": 5}}`, batchWant{100, 5}},
	{`{"name": "batch-bus", "type": "eventbridge", "target": "arn:aws:events:us-east-1:210987654321:event-bus/orders", "batch": {"maxEvents": 50, "windowSeconds": 2}}`, batchWant{50, 2}},
	{`{"name": "ordered", "url": "https://o.example.com/hooks", "ordering": {"key": "body:id"}, "batch": {"maxEvents": 10}}`, batchWant{10, 0}},
	{`{"name": "batch-plain", "url": "https://p.example.com/hooks"}`, batchWant{config.DefaultBatchSize, 0}},
}

type batchWant struct{ size, window float64 }

// TestBatchedLanes: a batched lane's event source mapping takes
// batch.maxEvents as its BatchSize and batch.windowSeconds as its
// MaximumBatchingWindowInSeconds (none when 0, as on an ordered lane),
// whatever the destination's type; its queue's visibility timeout still
// spans six function timeouts and the window; and an https lane passes
// every check an unbatched one does. The overview graphs the batches.
func TestBatchedLanes(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	_, parent := templateOf(t, h.Stack)
	_, db := only(t, parent, "AWS::CloudWatch::Dashboard")
	body := joined(db.Properties["DashboardBody"])
	for _, m := range []string{metrics.DeliveryBatches, metrics.DeliveryBatchSize} {
		if !strings.Contains(body, `MetricName=\"`+m+`\"`) {
			t.Errorf("the overview does not search %s", m)
		}
	}
	for _, bd := range batchedDests {
		i := laneIndex(t, cfg, namesOf(t, []string{bd.spec})[0])
		d := cfg.Destinations[i]
		_, res := templateOf(t, h.LaneStacks[i])
		if d.Signs() { // checkLane checks https lanes (target_test.go the others)
			checkLane(t, d, cfg, res, false)
		}
		w := bd.want
		_, m := only(t, res, "AWS::Lambda::EventSourceMapping")
		window, hasWindow := m.Properties["MaximumBatchingWindowInSeconds"]
		if got := num(m.Properties["BatchSize"]); got != w.size || hasWindow != (w.window > 0) || hasWindow && num(window) != w.window {
			t.Errorf("%s: mapping BatchSize %v window %v, want %v and %v", d.Name, m.Properties["BatchSize"], window, w.size, w.window)
		}
		_, fn := only(t, res, "AWS::Lambda::Function")
		timeout := num(fn.Properties["Timeout"])
		for id, q := range ofType(res, "AWS::SQS::Queue") {
			vis, ok := q.Properties["VisibilityTimeout"]
			if !ok {
				continue // the DLQs
			}
			if num(vis) < config.VisibilityFactor*timeout+w.window {
				t.Errorf("%s: queue %s visibility %v s, under %d × the function's %v s + the %v s window", d.Name, id, num(vis), config.VisibilityFactor, timeout, w.window)
			}
		}
	}
}
