package lambdaenv

import (
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// CloudWatchBuildTag is the build tag that links the PutMetricData sink
// (metrics.sink "cloudwatch") into a function. Without it a function
// links no CloudWatch client, whose package initialisation would cost
// every cold start about 0.7 ms for a sink the deployed default (EMF) never
// uses; the stack's builder adds the tag when the configuration selects the
// sink.
const CloudWatchBuildTag = "hookfan.cloudwatch"

// MetricsSink builds the metrics sink called name (config.EnvMetricsSink):
// EMF lines to w, or PutMetricData on a CloudWatch client built from cfg
// when the binary was built with CloudWatchBuildTag. A binary built
// without it refuses "cloudwatch" with an error naming the fix.
func MetricsSink(cfg aws.Config, name string, w io.Writer) (metrics.Sink, error) {
	var pmd metrics.Sink
	if name == config.SinkCloudWatch {
		var err error
		if pmd, err = putMetricData(cfg); err != nil {
			return nil, err
		}
	}
	return metrics.NewSink(name, w, pmd)
}
