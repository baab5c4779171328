package operator

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// fakeMetrics answers GetMetricData from fixed points by query id; a call
// whose window is one hour long gets the last hour's sums.
type fakeMetrics struct {
	points   map[string][]cwtypes.MetricDataResult
	lastHour map[string]float64
	calls    []*cloudwatch.GetMetricDataInput
}

func (f *fakeMetrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	f.calls = append(f.calls, in)
	var out cloudwatch.GetMetricDataOutput
	for _, q := range in.MetricDataQueries {
		id := aws.ToString(q.Id)
		if in.EndTime.Sub(*in.StartTime) == time.Hour {
			out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Values: []float64{f.lastHour[id]}, Timestamps: []time.Time{*in.StartTime}})
			continue
		}
		out.MetricDataResults = append(out.MetricDataResults, f.points[id]...)
	}
	return &out, nil
}

func TestDeliveryChart(t *testing.T) {
	now := time.Date(2026, 5, 1, 12, 20, 30, 0, time.UTC)
	at := func(h int) time.Time { return time.Date(2026, 5, 1, h, 0, 0, 0, time.UTC) }
	f := &fakeMetrics{
		points: map[string][]cwtypes.MetricDataResult{
			"ok":     {{Id: aws.String("ok"), Timestamps: []time.Time{at(12), at(11), at(13 - 24), at(12 - 24)}, Values: []float64{5, 7, 100, 100}}},
			"failed": {{Id: aws.String("failed"), Timestamps: []time.Time{at(12)}, Values: []float64{3}}},
			"age":    {{Id: aws.String("age"), Timestamps: []time.Time{now.Add(-10 * time.Minute), now.Add(-5 * time.Minute)}, Values: []float64{90, 30}}},
		},
		lastHour: map[string]float64{"ok": 9, "failed": 3},
	}
	op := &Operator{Resources: Resources{Lanes: []Lane{{Destination: "d", QueueURL: "https://sqs/123/hookfan-d"}}}, Metrics: f, Now: func() time.Time { return now }}
	c, err := op.DeliveryChart(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	if !c.Start.Equal(at(13-24)) || c.Succeeded[ChartHours-1] != 5 || c.Failed[ChartHours-1] != 3 || c.Succeeded[ChartHours-2] != 7 || c.Succeeded[0] != 100 || !c.HasData {
		t.Errorf("chart from %s: succeeded %v, failed %v", c.Start, c.Succeeded, c.Failed)
	}
	if rate, ok := c.FailureRate(); !ok || rate != 0.25 {
		t.Errorf("failure rate %v %v, want 0.25 of the last hour", rate, ok)
	}
	if !c.HasOldestAge || c.OldestAge != 30*time.Second {
		t.Errorf("oldest age %s (%v), want the latest point's 30s", c.OldestAge, c.HasOldestAge)
	}
	dims := f.calls[0].MetricDataQueries[2].MetricStat.Metric.Dimensions
	if len(dims) != 1 || aws.ToString(dims[0].Value) != "hookfan-d" {
		t.Errorf("the age query's dimensions %v, want the queue's name", dims)
	}
	if _, err := (&Operator{Resources: op.Resources}).DeliveryChart(context.Background(), "d"); err == nil {
		t.Error("no CloudWatch client: no error")
	}
	if _, err := op.DeliveryChart(context.Background(), "nope"); err == nil {
		t.Error("an unknown destination: no error")
	}
}
