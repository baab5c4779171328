package stack

import (
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// DashboardProps configures the dashboard.
type DashboardProps struct {
	Config *config.Config
	Ingest *IngestAPI
	Lanes  []*Lane
	// Period of every graph; nil: five minutes.
	Period awscdk.Duration
}

// NewDashboard makes the operations dashboard: ingest by source, then one
// row per destination with deliveries and failures, latency and event age,
// and queue and DLQ depth.
func NewDashboard(scope constructs.Construct, id string, props *DashboardProps) awscloudwatch.Dashboard {
	period := props.Period
	if period == nil {
		period = awscdk.Duration_Minutes(jsii.Number(5))
	}
	metric := func(name, dim, value, stat, label string) awscloudwatch.IMetric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace:     jsii.String(metrics.Namespace),
			MetricName:    jsii.String(name),
			DimensionsMap: &map[string]*string{dim: jsii.String(value)},
			Statistic:     jsii.String(stat),
			Period:        period,
			Label:         jsii.String(label),
		})
	}
	graph := func(title string, left []awscloudwatch.IMetric, right []awscloudwatch.IMetric) awscloudwatch.IWidget {
		p := &awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(8), Height: jsii.Number(6), Left: &left}
		if len(right) > 0 {
			p.Right = &right
		}
		return awscloudwatch.NewGraphWidget(p)
	}

	d := awscloudwatch.NewDashboard(scope, jsii.String(id), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})

	api := props.Ingest.API
	var accepted, failed []awscloudwatch.IMetric
	for _, s := range props.Config.Sources {
		accepted = append(accepted, metric(metrics.IngestAccepted, metrics.DimSource, s.Name, "Sum", s.Name))
		failed = append(failed, metric(metrics.IngestPublishFailed, metrics.DimSource, s.Name, "Sum", s.Name+" publish failed"))
	}
	rejected := awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s,%s} MetricName="%s"', 'Sum', %d)`,
			metrics.Namespace, metrics.DimReason, metrics.DimSource, metrics.IngestRejected, int(*period.ToSeconds(nil)))),
		// Empty: each series the search finds keeps its own label (source, reason).
		Label:  jsii.String(""),
		Period: period,
	})
	d.AddWidgets(
		awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Markdown: jsii.String("# Hookfan\nIngest by source, then one row per destination. Alarms: DLQ depth, age of the oldest message, function errors."),
			Width:    jsii.Number(24), Height: jsii.Number(2),
		}),
	)
	d.AddWidgets(
		graph("Ingest: accepted by source", accepted, nil),
		graph("Ingest: rejected (by source and reason) and publish failures", append([]awscloudwatch.IMetric{rejected}, failed...), nil),
		graph("API: requests, 4xx, 5xx, latency p99",
			[]awscloudwatch.IMetric{
				api.MetricCount(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
				api.MetricClientError(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
				api.MetricServerError(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum")}),
			},
			[]awscloudwatch.IMetric{api.MetricLatency(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("p99")})}),
	)
	for _, l := range props.Lanes {
		n := l.Destination.Name
		opts := &awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum")}
		d.AddWidgets(
			graph(n+": deliveries and failures", []awscloudwatch.IMetric{
				metric(metrics.DeliverySucceeded, metrics.DimDestination, n, "Sum", "succeeded"),
				metric(metrics.DeliveryFailed, metrics.DimDestination, n, "Sum", "failed"),
				metric(metrics.DeliveryDead, metrics.DimDestination, n, "Sum", "dead"),
				metric(metrics.DeliveryDuplicate, metrics.DimDestination, n, "Sum", "duplicate"),
				l.Function.MetricErrors(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Sum"), Label: jsii.String("function errors")}),
			}, nil),
			graph(n+": latency and event age (ms)", []awscloudwatch.IMetric{
				metric(metrics.DeliveryLatency, metrics.DimDestination, n, "p50", "latency p50"),
				metric(metrics.DeliveryLatency, metrics.DimDestination, n, "p99", "latency p99"),
			}, []awscloudwatch.IMetric{
				metric(metrics.EventAge, metrics.DimDestination, n, "p99", "event age p99"),
			}),
			graph(n+": queue and DLQ depth", []awscloudwatch.IMetric{
				l.Queue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum"), Label: jsii.String("queue visible")}),
				l.Queue.MetricApproximateNumberOfMessagesNotVisible(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum"), Label: jsii.String("queue in flight / backing off")}),
				l.DeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum"), Label: jsii.String("DLQ")}),
				l.SubscriptionDeadLetterQueue.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Period: period, Statistic: jsii.String("Maximum"), Label: jsii.String("subscription DLQ")}),
			}, []awscloudwatch.IMetric{
				l.Queue.MetricApproximateAgeOfOldestMessage(opts),
			}),
		)
	}
	return d
}
