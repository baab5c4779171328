//go:build integration

package integration

import (
	"bytes"
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/infra/rie"
	"github.com/hookfan/hookfan/shared/metrics"
)

// metricStat reads one statistic of a metric over [start, now+1m] from
// the emulator's CloudWatch with GetMetricData (0 when it holds none).
func metricStat(t *testing.T, namespace, name string, unit cwtypes.StandardUnit, stat string, start time.Time, dims ...metrics.Dimension) float64 {
	t.Helper()
	m := &cwtypes.Metric{Namespace: aws.String(namespace), MetricName: aws.String(name)}
	for _, d := range dims {
		m.Dimensions = append(m.Dimensions, cwtypes.Dimension{Name: aws.String(d.Name), Value: aws.String(d.Value)})
	}
	out, err := clients.CloudWatch.GetMetricData(context.Background(), &cloudwatch.GetMetricDataInput{
		StartTime: aws.Time(start), EndTime: aws.Time(time.Now().Add(time.Minute)),
		MetricDataQueries: []cwtypes.MetricDataQuery{{Id: aws.String("q"),
			MetricStat: &cwtypes.MetricStat{Metric: m, Period: aws.Int32(60), Stat: aws.String(stat), Unit: unit}}},
	})
	if err != nil {
		t.Fatalf("GetMetricData %s %s: %v", name, stat, err)
	}
	var total float64
	for _, r := range out.MetricDataResults {
		for _, v := range r.Values {
			total += v
		}
	}
	return total
}

// TestEMFForwarderOnMoto: EMF lines in, as a function writes them under
// the RIE, and the metrics are readable from the emulator's CloudWatch
// as CloudWatch Logs would have put them: namespace, each dimension set,
// unit, every value of an array. Both our sink's lines and a document
// of the specification's other shapes (its own namespace, two dimension
// sets, a metric without a unit).
func TestEMFForwarderOnMoto(t *testing.T) {
	t.Parallel()
	start := time.Now().Add(-time.Minute)
	lane := randomName("emf-")
	dest := []metrics.Dimension{{Name: metrics.DimDestination, Value: lane}}
	var out bytes.Buffer
	now := time.Now()
	if err := metrics.NewEMF(&out).Publish(context.Background(), []metrics.Point{
		{Name: metrics.DeliverySucceeded, Unit: metrics.Count, Value: 1, Time: now, Dimensions: dest},
		{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 5, Time: now, Dimensions: dest},
		{Name: metrics.DeliveryLatency, Unit: metrics.Milliseconds, Value: 7.5, Time: now, Dimensions: dest},
	}); err != nil {
		t.Fatal(err)
	}
	ns := randomName("HookfanEMFTest-")
	fmt.Fprintf(&out, `{"_aws":{"Timestamp":%d,"CloudWatchMetrics":[{"Namespace":%q,"Dimensions":[["Service"],["Service","Op"]],"Metrics":[{"Name":"Hits"}]}]},"Service":"api","Op":"get","Hits":[2,3],"msg":"not a dimension"}`+"\n",
		now.UnixMilli(), ns)
	out.WriteString(`{"level":"INFO","msg":"an ordinary line"}` + "\n")

	fwd := rie.NewForwarder(clients.CloudWatch)
	// In two pieces, cut mid-line, as a pipe may hand them over.
	b := out.Bytes()
	fwd.Write(b[:len(b)/2])
	fwd.Write(b[len(b)/2:])
	if err := fwd.Close(); err != nil || fwd.Put() != 4 {
		t.Fatalf("forwarded %d data, %v; want 4 and no error", fwd.Put(), err)
	}

	listed, err := clients.CloudWatch.ListMetrics(context.Background(), &cloudwatch.ListMetricsInput{Namespace: aws.String(metrics.Namespace),
		Dimensions: []cwtypes.DimensionFilter{{Name: aws.String(metrics.DimDestination), Value: aws.String(lane)}}})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, m := range listed.Metrics {
		names[aws.ToString(m.MetricName)] = true
	}
	if len(names) != 2 || !names[metrics.DeliverySucceeded] || !names[metrics.DeliveryLatency] {
		t.Errorf("ListMetrics by Destination=%s: %v; want DeliverySucceeded and DeliveryLatency", lane, names)
	}
	for _, tt := range []struct {
		ns, name string
		unit     cwtypes.StandardUnit
		stat     string
		dims     []metrics.Dimension
		want     float64
	}{
		{metrics.Namespace, metrics.DeliverySucceeded, cwtypes.StandardUnitCount, "Sum", dest, 1},
		{metrics.Namespace, metrics.DeliveryLatency, cwtypes.StandardUnitMilliseconds, "Sum", dest, 12.5},
		{metrics.Namespace, metrics.DeliveryLatency, cwtypes.StandardUnitMilliseconds, "SampleCount", dest, 2},
		{metrics.Namespace, metrics.DeliveryLatency, cwtypes.StandardUnitMilliseconds, "Maximum", dest, 7.5},
		{ns, "Hits", "", "Sum", []metrics.Dimension{{Name: "Service", Value: "api"}}, 5},
		{ns, "Hits", "", "SampleCount", []metrics.Dimension{{Name: "Service", Value: "api"}, {Name: "Op", Value: "get"}}, 2},
	} {
		if got := metricStat(t, tt.ns, tt.name, tt.unit, tt.stat, start, tt.dims...); got != tt.want {
			t.Errorf("%s %s %s by %v = %g, want %g", tt.ns, tt.name, tt.stat, tt.dims, got, tt.want)
		}
	}
	// Under another unit, or by a dimension the document only carries as
	// a member, nothing.
	if got := metricStat(t, metrics.Namespace, metrics.DeliveryLatency, cwtypes.StandardUnitSeconds, "SampleCount", start, dest...); got != 0 {
		t.Errorf("DeliveryLatency in Seconds: %g samples, want none", got)
	}
	if got := metricStat(t, ns, "Hits", "", "Sum", start, metrics.Dimension{Name: "msg", Value: "not a dimension"}); got != 0 {
		t.Errorf("Hits by msg: %g, want none", got)
	}
}
