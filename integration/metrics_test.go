//go:build integration

package integration

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/rie"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

func randomName(prefix string) string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

// TestPutMetricDataSink: with the "cloudwatch" sink the functions' metrics
// are read back from the emulator's CloudWatch.
func TestPutMetricDataSink(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	name := randomName("metrics-")
	e := startEnv(t, []string{destJSON(name, rc, "")}, map[string]*receiver{name: rc},
		func(o *devstack.Options) { o.Config.Metrics.Sink = config.SinkCloudWatch })
	start := time.Now().Add(-time.Minute)
	for i := range 3 {
		e.send("stripe", "stripe", "payment_intent.succeeded", "evt_metrics_"+name+string(rune('a'+i)), nil)
	}
	waitFor(t, 20*time.Second, "3 deliveries", func() bool { return len(rc.ids()) == 3 })
	sum := func(metric, dim, value string) float64 {
		out, err := clients.CloudWatch.GetMetricStatistics(context.Background(), &cloudwatch.GetMetricStatisticsInput{
			Namespace: aws.String(metrics.Namespace), MetricName: aws.String(metric),
			Dimensions: []cwtypes.Dimension{{Name: aws.String(dim), Value: aws.String(value)}},
			StartTime:  aws.Time(start), EndTime: aws.Time(time.Now().Add(time.Minute)),
			Period: aws.Int32(60), Statistics: []cwtypes.Statistic{cwtypes.StatisticSum},
		})
		if err != nil {
			t.Fatalf("GetMetricStatistics %s: %v", metric, err)
		}
		var total float64
		for _, dp := range out.Datapoints {
			total += aws.ToFloat64(dp.Sum)
		}
		return total
	}
	waitFor(t, 10*time.Second, "DeliverySucceeded = 3 in CloudWatch", func() bool {
		return sum(metrics.DeliverySucceeded, metrics.DimDestination, name) == 3
	})
	if got := sum(metrics.DeliveryAttempts, metrics.DimDestination, name); got != 3 {
		t.Errorf("DeliveryAttempts = %g, want 3", got)
	}
	if got := sum(metrics.IngestAccepted, metrics.DimSource, "stripe"); got < 3 {
		t.Errorf("IngestAccepted(stripe) = %g, want at least 3", got)
	}
}

// TestEMFOutput: with the default sink every metric line the functions write
// is valid Embedded Metric Format and carries the design's names.
func TestEMFOutput(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	buf := &syncBuffer{}
	e := startEnv(t, []string{destJSON("emf", rc, "")}, map[string]*receiver{"emf": rc},
		func(o *devstack.Options) { o.EMF = buf })
	e.send("stripe", "stripe", "payment_intent.succeeded", "evt_emf_1", nil)
	waitFor(t, 20*time.Second, "delivery", func() bool { return len(rc.ids()) == 1 })
	waitFor(t, 5*time.Second, "EMF lines", func() bool { return strings.Contains(buf.String(), metrics.DeliverySucceeded) })
	seen := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if _, isEMF, err := rie.ParseEMF([]byte(line)); !isEMF || err != nil {
			t.Errorf("EMF line %s: read as EMF %v, %v; want a valid EMF document", line, isEMF, err)
			continue
		}
		var doc map[string]any
		_ = json.Unmarshal([]byte(line), &doc)
		for k := range doc {
			seen[k] = true
		}
	}
	for _, want := range []string{metrics.IngestAccepted, metrics.DeliverySucceeded, metrics.DeliveryLatency, metrics.EventAge, metrics.DeliveryAttempts, "Source", "Destination"} {
		if !seen[want] {
			t.Errorf("no EMF line carries %s", want)
		}
	}
}
