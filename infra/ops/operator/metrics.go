package operator

import (
	"context"
	"fmt"
	"path"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/shared/metrics"
)

// MetricsAPI is the part of the CloudWatch client the console's charts use.
type MetricsAPI interface {
	GetMetricData(ctx context.Context, in *cloudwatch.GetMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error)
}

// ChartHours is how many hours a lane's delivery chart covers.
const ChartHours = 24

// Chart is a lane's deliveries and failures, an hour a bar, oldest first,
// read from CloudWatch (the DeliverySucceeded and DeliveryFailed metrics
// under the lane's Destination dimension), with the age of its queue's
// oldest message (AWS/SQS ApproximateAgeOfOldestMessage).
type Chart struct {
	Start             time.Time
	Succeeded, Failed [ChartHours]float64
	// LastHourSucceeded and LastHourFailed are the hour up to now.
	LastHourSucceeded, LastHourFailed float64
	OldestAge                         time.Duration
	HasOldestAge, HasData             bool
}

// FailureRate is the share of the last hour's attempts that failed, and
// whether there were any.
func (c Chart) FailureRate() (float64, bool) {
	s, f := c.LastHourSucceeded, c.LastHourFailed
	if s+f == 0 {
		return 0, false
	}
	return f / (s + f), true
}

// DeliveryChart reads a lane's last ChartHours of deliveries and failures,
// and its queue's oldest message's age, from CloudWatch.
func (o *Operator) DeliveryChart(ctx context.Context, destination string) (Chart, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return Chart{}, err
	}
	if o.Metrics == nil {
		return Chart{}, fmt.Errorf("no CloudWatch client configured")
	}
	end := o.now().UTC().Truncate(time.Hour).Add(time.Hour)
	c := Chart{Start: end.Add(-ChartHours * time.Hour)}
	lane := []cwtypes.Dimension{{Name: aws.String(metrics.DimDestination), Value: aws.String(destination)}}
	query := func(id, namespace, name, stat string, dims []cwtypes.Dimension, period int32) cwtypes.MetricDataQuery {
		return cwtypes.MetricDataQuery{Id: aws.String(id), MetricStat: &cwtypes.MetricStat{
			Metric: &cwtypes.Metric{Namespace: aws.String(namespace), MetricName: aws.String(name), Dimensions: dims},
			Period: aws.Int32(period), Stat: aws.String(stat)}}
	}
	queries := []cwtypes.MetricDataQuery{
		query("ok", metrics.Namespace, metrics.DeliverySucceeded, "Sum", lane, 3600),
		query("failed", metrics.Namespace, metrics.DeliveryFailed, "Sum", lane, 3600),
		query("age", "AWS/SQS", "ApproximateAgeOfOldestMessage", "Maximum",
			[]cwtypes.Dimension{{Name: aws.String("QueueName"), Value: aws.String(path.Base(l.QueueURL))}}, 300),
	}
	in := &cloudwatch.GetMetricDataInput{StartTime: &c.Start, EndTime: &end, MetricDataQueries: queries, ScanBy: cwtypes.ScanByTimestampDescending}
	var ageAt time.Time
	for {
		out, err := o.Metrics.GetMetricData(ctx, in)
		if err != nil {
			return c, fmt.Errorf("read %s's metrics from CloudWatch: %w", destination, err)
		}
		for _, r := range out.MetricDataResults {
			for i, t := range r.Timestamps {
				if i >= len(r.Values) {
					break
				}
				v := r.Values[i]
				switch aws.ToString(r.Id) {
				case "age":
					if t.After(ageAt) {
						ageAt, c.OldestAge, c.HasOldestAge = t, time.Duration(v)*time.Second, true
					}
				case "ok", "failed":
					h := int(t.Sub(c.Start) / time.Hour)
					if h < 0 || h >= ChartHours {
						continue
					}
					c.HasData = true
					if aws.ToString(r.Id) == "ok" {
						c.Succeeded[h] += v
					} else {
						c.Failed[h] += v
					}
				}
			}
		}
		if out.NextToken == nil {
			break
		}
		in.NextToken = out.NextToken
	}
	// The last hour up to now, in one period of its own (the chart's bars
	// are clock hours).
	now := o.now().UTC().Truncate(time.Minute).Add(time.Minute)
	from := now.Add(-time.Hour)
	out, err := o.Metrics.GetMetricData(ctx, &cloudwatch.GetMetricDataInput{StartTime: &from, EndTime: &now, MetricDataQueries: queries[:2]})
	if err != nil {
		return c, fmt.Errorf("read %s's metrics from CloudWatch: %w", destination, err)
	}
	for _, r := range out.MetricDataResults {
		for _, v := range r.Values {
			if aws.ToString(r.Id) == "ok" {
				c.LastHourSucceeded += v
			} else {
				c.LastHourFailed += v
			}
		}
	}
	return c, nil
}
