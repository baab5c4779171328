package stack

import (
	"fmt"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// metricsNamespace is where the stack's own metrics go, beside the functions'.
const metricsNamespace = metrics.Namespace

// MetricAPIThrottled counts the API's 429 answers by route; a metric filter
// on the access log writes it, because API Gateway's own metrics count 429
// among every other 4xx.
const MetricAPIThrottled = "ApiThrottled"

// dimRoute is MetricAPIThrottled's dimension: the route as IngestAPI.Route
// names it.
const dimRoute = "Route"

// SourceAlarms are the alarms on one source's route.
type SourceAlarms struct {
	// ClientErrors fires when the route answers more 4xx (401 from bad
	// signatures, 403 from the WAF, 429 from throttling) in five minutes
	// than sources[].limits.clientErrorAlarm.
	ClientErrors awscloudwatch.Alarm
	// Throttled fires when the route answered any 429 in a minute: a
	// provider is being slowed down, and will retry.
	Throttled awscloudwatch.Alarm
	// ServerErrors fires when the route answered any 5xx in a minute
	// (API Gateway's 5XXError: ingest's own 503s, its crashes, timeouts
	// and throttles): some provider's event was not accepted, and GitHub
	// never retries one. Nil when api.detailedMetrics is false: the route
	// has no metrics then, and IngestAPI.ServerErrors watches the stage.
	ServerErrors awscloudwatch.Alarm
	// IngestFailed fires on any IngestPublishFailed or any IngestRejected
	// with a 5xx reason (ingest.ServerErrorCodes) in a minute: it names
	// why ingest could not accept an event.
	IngestFailed awscloudwatch.Alarm
}

// IngestFailedMetric is the count of a source's requests that ingest
// answered 5xx, by its own metrics: IngestPublishFailed plus
// IngestRejected under every 5xx reason the source can produce in cfg's
// deployment.
func IngestFailedMetric(cfg *config.Config, s config.Source, period awscdk.Duration) awscloudwatch.IMetric {
	sum := jsii.String("Sum")
	using := map[string]awscloudwatch.IMetric{
		"failed": awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(metrics.IngestPublishFailed),
			Period: period, Statistic: sum, DimensionsMap: &map[string]*string{metrics.DimSource: jsii.String(s.Name)},
		}),
	}
	ids := []string{"failed"}
	for i, code := range ingest.ServerErrorCodes(cfg, s) {
		if code == ingest.CodePublishFailed {
			continue
		}
		id := fmt.Sprintf("r%d", i)
		using[id] = awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String(metricsNamespace), MetricName: jsii.String(metrics.IngestRejected),
			Period: period, Statistic: sum,
			DimensionsMap: &map[string]*string{metrics.DimSource: jsii.String(s.Name), metrics.DimReason: jsii.String(code)},
		})
		ids = append(ids, id)
	}
	return awscloudwatch.NewMathExpression(&awscloudwatch.MathExpressionProps{
		Expression:   jsii.String("SUM([" + strings.Join(ids, ", ") + "])"),
		UsingMetrics: &using,
		Period:       period,
		Label:        jsii.String("ingest 5xx answers of " + s.Name),
	})
}

// addSourceAlarms makes the access-log metric filter counting 429s by route
// and the alarms of each source; without detailed metrics the sources'
// server-errors alarm is one, on the stage.
func (a *IngestAPI) addSourceAlarms(cfg *config.Config, action awscloudwatch.IAlarmAction) {
	routeField := "$.resourcePath"
	if a.Type == config.APITypeHTTP {
		routeField = "$.routeKey"
	}
	a.Throttled = awslogs.NewMetricFilter(a.Construct, jsii.String("ThrottledFilter"), &awslogs.MetricFilterProps{
		LogGroup:        a.AccessLogs,
		FilterPattern:   awslogs.FilterPattern_StringValue(jsii.String("$.status"), jsii.String("="), jsii.String("429")),
		MetricNamespace: jsii.String(metricsNamespace),
		MetricName:      jsii.String(MetricAPIThrottled),
		MetricValue:     jsii.String("1"),
		Dimensions:      &map[string]*string{dimRoute: jsii.String(routeField)},
	})
	minute := awscdk.Duration_Minutes(jsii.Number(1))
	five := awscdk.Duration_Seconds(jsii.Number(config.ClientErrorAlarmPeriodSeconds))
	sum := jsii.String("Sum")
	a.SourceAlarms = map[string]*SourceAlarms{}
	for _, s := range cfg.Sources {
		id := outputID(s.Name)
		alarm := func(name string, m awscloudwatch.IMetric, threshold float64, desc string) awscloudwatch.Alarm {
			return newAlarm(a.Construct, "Source"+id+name+"Alarm", m, threshold, desc, action)
		}
		limit := s.Limits.ClientErrorThreshold()
		alarms := &SourceAlarms{
			ClientErrors: alarm("ClientErrors",
				a.SourceMetric(s.Name, "4xx", &awscloudwatch.MetricOptions{Period: five, Statistic: sum}), float64(limit),
				fmt.Sprintf("Hookfan source %s: more than %d 4xx answers in five minutes on its route (bad signatures, WAF blocks or throttling). Check IngestRejected by reason on the dashboard and the access log.", s.Name, limit)),
			Throttled: alarm("Throttled",
				a.ThrottledMetric(s.Name, &awscloudwatch.MetricOptions{Period: minute, Statistic: sum}), 0,
				fmt.Sprintf("Hookfan source %s: its route answered 429 (over %g requests/s, burst %d); most providers retry later, GitHub does not (redeliver by hand). Raise sources[].limits if the traffic is real.", s.Name, s.Limits.Rate(cfg.API), s.Limits.Burst(cfg.API))),
			IngestFailed: alarm("IngestFailed", IngestFailedMetric(cfg, s, minute), 0,
				fmt.Sprintf("Hookfan source %s: ingest answered 5xx (IngestPublishFailed, or IngestRejected with a 5xx reason): SNS, Secrets Manager, DynamoDB or S3 refused it. See the runbook Source<Name>IngestFailedAlarm in docs/operations.md.", s.Name)),
		}
		if cfg.API.Detailed() {
			alarms.ServerErrors = alarm("ServerErrors",
				a.SourceMetric(s.Name, "5xx", &awscloudwatch.MetricOptions{Period: minute, Statistic: sum}), 0,
				fmt.Sprintf("Hookfan source %s: its route answered 5xx: events were not accepted (GitHub does not retry; redeliver by hand). See the runbook Source<Name>ServerErrorsAlarm in docs/operations.md.", s.Name))
		}
		a.SourceAlarms[s.Name] = alarms
	}
	if !cfg.API.Detailed() {
		// The routes publish no metrics: the stage's 5xx, which API Gateway
		// always publishes, is the one that cannot miss an answer (it does
		// not say which source's).
		a.ServerErrors = newAlarm(a.Construct, "ServerErrorsAlarm",
			a.StageMetric("5xx", &awscloudwatch.MetricOptions{Period: minute, Statistic: sum}), 0,
			"Hookfan ingest: the API answered 5xx: events were not accepted (GitHub does not retry; redeliver by hand). api.detailedMetrics is false, so this alarm covers every source: the access log says which. See the runbook ServerErrorsAlarm in docs/operations.md.", action)
	}
}
