package stack

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// LanesPerDashboard is how many destinations' rows one dashboard holds:
// three widgets and four references to the lane's resources each, so a
// page stays far inside CloudWatch's 500 widgets and 2,500 metrics per
// dashboard and its nested stack inside CloudFormation's 200 parameters.
const LanesPerDashboard = 40

// DashboardProps configures a dashboard.
type DashboardProps struct {
	Config *config.Config
	// Ingest is the API; the overview needs it, a lane page does not.
	Ingest *IngestAPI
	// Lanes get one row each.
	Lanes []*Lane
	// Period of every graph; nil: five minutes.
	Period awscdk.Duration
}

// dashboardKit holds what every widget of one dashboard shares: the
// period, and whether the delivery metrics carry each lane's name
// (metrics.laneDimensions).
type dashboardKit struct {
	period  awscdk.Duration
	perLane bool
}

func newKit(p awscdk.Duration) dashboardKit {
	if p == nil {
		p = awscdk.Duration_Minutes(jsii.Number(5))
	}
	return dashboardKit{period: p, perLane: true}
}

func (k dashboardKit) metric(name, dim, value, stat, label string) awscloudwatch.IMetric {
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace:     jsii.String(metrics.Namespace),
		MetricName:    jsii.String(name),
		DimensionsMap: &map[string]*string{dim: jsii.String(value)},
		Statistic:     jsii.String(stat),
		Period:        k.period,
		Label:         jsii.String(label),
	})
}

// search graphs every series of a metric in the Hookfan namespace with the
// given dimensions: one series per source or destination, however many.
func (k dashboardKit) search(metric, stat string, dims ...string) awscloudwatch.IMetric {
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', '%s', %d)`,
			metrics.Namespace, strings.Join(dims, ","), metric, stat, int(*k.period.ToSeconds(nil)))),
		// Empty: each series the search finds keeps its own label.
		Label:  jsii.String(""),
		Period: k.period,
	})
}

func (k dashboardKit) opts(stat, label string) *awscloudwatch.MetricOptions {
	o := &awscloudwatch.MetricOptions{Period: k.period, Statistic: jsii.String(stat)}
	if label != "" {
		o.Label = jsii.String(label)
	}
	return o
}

func graph(title string, left []awscloudwatch.IMetric, right []awscloudwatch.IMetric) awscloudwatch.IWidget {
	p := &awscloudwatch.GraphWidgetProps{Title: jsii.String(title), Width: jsii.Number(8), Height: jsii.Number(6), Left: &left}
	if len(right) > 0 {
		p.Right = &right
	}
	return awscloudwatch.NewGraphWidget(p)
}

// NewDashboard makes the operations overview: the API and ingest by
// source, every destination at a glance (searches that list each one),
// then one row per destination in props.Lanes.
func NewDashboard(scope constructs.Construct, id string, props *DashboardProps) awscloudwatch.Dashboard {
	k := newKit(props.Period)
	k.perLane = props.Config.Metrics.PerLane()
	d := awscloudwatch.NewDashboard(scope, jsii.String(id), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	ingest := props.Ingest
	var accepted, failed, clientErrors, requests []awscloudwatch.IMetric
	for _, s := range props.Config.Sources {
		accepted = append(accepted, k.metric(metrics.IngestAccepted, metrics.DimSource, s.Name, "Sum", s.Name))
		failed = append(failed, k.metric(metrics.IngestPublishFailed, metrics.DimSource, s.Name, "Sum", s.Name+" publish failed"))
		requests = append(requests, ingest.SourceMetric(s.Name, "Count", k.opts("Sum", s.Name)))
		clientErrors = append(clientErrors, ingest.SourceMetric(s.Name, "4xx", k.opts("Sum", s.Name)))
	}
	d.AddWidgets(
		awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Markdown: jsii.String("# Hookfan\nThe API and ingest by source, every destination at a glance, then one row per destination" +
				fmt.Sprintf(" (the first %d; further destinations are on the dashboards the stack's index parameter lists).", LanesPerDashboard) +
				" Alarms: per source 4xx, 429, 5xx and ingest's 5xx answers; the ingest function's errors and throttles; per destination DLQ depth, age of the oldest message, function errors, and a paused lane (destinations that pause)."),
			Width: jsii.Number(24), Height: jsii.Number(2),
		}),
	)
	d.AddWidgets(
		graph("Ingest: accepted by source, and replays (copies answered as the original, not published)",
			append(accepted, k.search(metrics.IngestReplayBlocked, "Sum", metrics.DimSource)), nil),
		graph("Ingest: rejected (by source and reason) and publish failures", append([]awscloudwatch.IMetric{k.search(metrics.IngestRejected, "Sum", metrics.DimReason, metrics.DimSource)}, failed...), nil),
		graph("API: requests, 4xx, 5xx, latency p99",
			[]awscloudwatch.IMetric{ingest.apiMetric("count", k.opts("Sum", "")), ingest.apiMetric("4xx", k.opts("Sum", "")), ingest.apiMetric("5xx", k.opts("Sum", ""))},
			[]awscloudwatch.IMetric{ingest.apiMetric("latency", k.opts("p99", ""))}),
	)
	d.AddWidgets(
		graph("API by source: requests", requests, nil),
		graph("API by source: 4xx (401, 403, 429…)", clientErrors, nil),
		graph("API by source: throttled (429)", []awscloudwatch.IMetric{awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
			Expression: jsii.String(fmt.Sprintf(`SEARCH('{%s,%s} MetricName="%s"', 'Sum', %d)`, metrics.Namespace, dimRoute, MetricAPIThrottled, int(*k.period.ToSeconds(nil)))),
			Label:      jsii.String(""), Period: k.period,
		})}, nil),
	)
	d.AddWidgets(
		graph("All destinations: succeeded", []awscloudwatch.IMetric{k.search(metrics.DeliverySucceeded, "Sum", metrics.DimDestination)}, nil),
		graph("All destinations: failed and dead", []awscloudwatch.IMetric{k.search(metrics.DeliveryFailed, "Sum", metrics.DimDestination), k.search(metrics.DeliveryDead, "Sum", metrics.DimDestination)}, nil),
		graph("All destinations: event age p99 (ms)", []awscloudwatch.IMetric{k.search(metrics.EventAge, "p99", metrics.DimDestination)}, nil),
	)
	overview := []awscloudwatch.IWidget{
		graph("Paused lanes (1 = paused)", []awscloudwatch.IMetric{k.search(metrics.LanePaused, "Maximum", metrics.DimDestination)}, nil),
	}
	if props.Config.Paced() {
		// Only with a paced destination: a stack without rateLimit pays
		// nothing for pacing, its dashboard's metrics included.
		overview = append(overview, graph("Paced lanes: messages held back by the rate limit, and the rate in force (requests a second)",
			[]awscloudwatch.IMetric{k.search(metrics.DeliveryPaced, "Sum", metrics.DimDestination)},
			[]awscloudwatch.IMetric{k.search(metrics.LaneEffectiveRate, "Minimum", metrics.DimDestination)}))
	}
	if props.Config.Batched() {
		overview = append(overview, graph("Batched lanes: batches sent (one request each), and events per batch (average)",
			[]awscloudwatch.IMetric{k.search(metrics.DeliveryBatches, "Sum", metrics.DimDestination)},
			[]awscloudwatch.IMetric{k.search(metrics.DeliveryBatchSize, "Average", metrics.DimDestination)}))
	}
	if len(props.Config.Reconciled()) > 0 {
		overview = append(overview, graph("Reconciliation by source: listed, found missing and brought in; runs stopped",
			[]awscloudwatch.IMetric{k.search(metrics.ReconcileListed, "Sum", metrics.DimSource), k.search(metrics.ReconcileMissing, "Sum", metrics.DimSource),
				k.search(metrics.ReconcileBroughtIn, "Sum", metrics.DimSource)},
			[]awscloudwatch.IMetric{k.search(metrics.ReconcileStopped, "Sum", metrics.DimSource)}))
	}
	d.AddWidgets(overview...)
	rows := make([]LaneNames, len(props.Lanes))
	for i, l := range props.Lanes {
		rows[i] = namesOf(l)
	}
	k.addLaneRows(d, rows)
	return d
}

// LaneNames are the physical names a lane's dashboard row graphs (its
// function's and its three queues') and its saved queries read (its log
// group's).
type LaneNames struct {
	Destination                                     string
	Function, Queue, DLQ, SubscriptionDLQ, LogGroup *string
}

// namesOf reads a lane's names from its constructs (tokens that CDK wires
// across stacks as needed).
func namesOf(l *Lane) LaneNames {
	return LaneNames{
		Destination: l.Destination.Name, Function: l.Function.FunctionName(), Queue: l.Queue.QueueName(),
		DLQ: l.DeadLetterQueue.QueueName(), SubscriptionDLQ: l.SubscriptionDeadLetterQueue.QueueName(),
		LogGroup: l.LogGroup.LogGroupName(),
	}
}

// laneNamesSeparator joins a lane's names into one value (laneNamesOutput):
// none of them can hold it.
const laneNamesSeparator = "|"

// laneNamesOutput is the lane stack's output holding its LaneNames,
// joined: a dashboard page takes one parameter per lane instead of four,
// so a page and the parent that wires it stay small.
const laneNamesOutput = "DashboardNames"

// joinedNames is l's names as one string, in LaneNames' field order.
func joinedNames(l *Lane) *string {
	n := namesOf(l)
	return awscdk.Fn_Join(jsii.String(laneNamesSeparator), &[]*string{n.Function, n.Queue, n.DLQ, n.SubscriptionDLQ, n.LogGroup})
}

// splitNames reads LaneNames back from a joined value.
func splitNames(destination string, joined *string) LaneNames {
	// Each name is {"Fn::Select": [i, {"Fn::Split": ["|", joined]}]}; with an
	// assumed length, Fn_Split would render every reference as the whole
	// list of selects, five times the size.
	at := func(i int) *string {
		return awscdk.Fn_Select(jsii.Number(float64(i)), awscdk.Fn_Split(jsii.String(laneNamesSeparator), joined, nil))
	}
	return LaneNames{Destination: destination, Function: at(0), Queue: at(1), DLQ: at(2), SubscriptionDLQ: at(3), LogGroup: at(4)}
}

// NewLaneDashboard makes a dashboard of destination rows only, for the
// destinations past the overview's.
func NewLaneDashboard(scope constructs.Construct, id string, lanes []LaneNames, period awscdk.Duration, perLane bool) awscloudwatch.Dashboard {
	k := newKit(period)
	k.perLane = perLane
	d := awscloudwatch.NewDashboard(scope, jsii.String(id), &awscloudwatch.DashboardProps{
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
	})
	if len(lanes) > 0 {
		d.AddWidgets(awscloudwatch.NewTextWidget(&awscloudwatch.TextWidgetProps{
			Markdown: jsii.String(fmt.Sprintf("# Hookfan destinations %s to %s\nOne row per destination; the overview dashboard has the API, ingest and every destination at a glance.",
				lanes[0].Destination, lanes[len(lanes)-1].Destination)),
			Width: jsii.Number(24), Height: jsii.Number(2),
		}))
	}
	k.addLaneRows(d, lanes)
	return d
}

// addLaneRows adds one row per lane: deliveries and failures, latency and
// event age, queue and DLQ depth.
func (k dashboardKit) addLaneRows(d awscloudwatch.Dashboard, lanes []LaneNames) {
	aws := func(namespace, name, dim string, value *string, stat, label string) awscloudwatch.IMetric {
		p := &awscloudwatch.MetricProps{
			Namespace: jsii.String(namespace), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{dim: value}, Statistic: jsii.String(stat), Period: k.period,
		}
		if label != "" {
			p.Label = jsii.String(label)
		}
		return awscloudwatch.NewMetric(p)
	}
	sqs := func(name string, queue *string, label string) awscloudwatch.IMetric {
		return aws("AWS/SQS", name, "QueueName", queue, "Maximum", label)
	}
	for _, l := range lanes {
		n := l.Destination
		if !k.perLane {
			// metrics.laneDimensions false: the deliveries are graphed for
			// all lanes at once (the overview); a row keeps what AWS
			// publishes per resource, and the lane's paused gauge.
			d.AddWidgets(
				graph(n+": function errors and paused", []awscloudwatch.IMetric{
					aws("AWS/Lambda", "Errors", "FunctionName", l.Function, "Sum", "function errors"),
				}, []awscloudwatch.IMetric{
					k.metric(metrics.LanePaused, metrics.DimDestination, n, "Maximum", "paused (1)"),
				}),
				k.queueGraph(n, l, sqs),
			)
			continue
		}
		d.AddWidgets(
			graph(n+": deliveries and failures", []awscloudwatch.IMetric{
				k.metric(metrics.DeliverySucceeded, metrics.DimDestination, n, "Sum", "succeeded"),
				k.metric(metrics.DeliveryFailed, metrics.DimDestination, n, "Sum", "failed"),
				k.metric(metrics.DeliveryDead, metrics.DimDestination, n, "Sum", "dead"),
				k.metric(metrics.DeliveryDuplicate, metrics.DimDestination, n, "Sum", "duplicate"),
				aws("AWS/Lambda", "Errors", "FunctionName", l.Function, "Sum", "function errors"),
			}, []awscloudwatch.IMetric{
				k.metric(metrics.LanePaused, metrics.DimDestination, n, "Maximum", "paused (1)"),
			}),
			graph(n+": latency and event age (ms)", []awscloudwatch.IMetric{
				k.metric(metrics.DeliveryLatency, metrics.DimDestination, n, "p50", "latency p50"),
				k.metric(metrics.DeliveryLatency, metrics.DimDestination, n, "p99", "latency p99"),
			}, []awscloudwatch.IMetric{
				k.metric(metrics.EventAge, metrics.DimDestination, n, "p99", "event age p99"),
			}),
			k.queueGraph(n, l, sqs),
		)
	}
}

// queueGraph is a lane row's queue and DLQ depth.
func (k dashboardKit) queueGraph(n string, l LaneNames, sqs func(name string, queue *string, label string) awscloudwatch.IMetric) awscloudwatch.IWidget {
	return graph(n+": queue and DLQ depth", []awscloudwatch.IMetric{
		sqs("ApproximateNumberOfMessagesVisible", l.Queue, "queue visible"),
		sqs("ApproximateNumberOfMessagesNotVisible", l.Queue, "queue in flight / backing off"),
		sqs("ApproximateNumberOfMessagesVisible", l.DLQ, "DLQ"),
		sqs("ApproximateNumberOfMessagesVisible", l.SubscriptionDLQ, "subscription DLQ"),
	}, []awscloudwatch.IMetric{
		sqs("ApproximateAgeOfOldestMessage", l.Queue, ""),
	})
}
