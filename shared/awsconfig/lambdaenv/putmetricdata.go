//go:build hookfan.cloudwatch

package lambdaenv

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/metrics/putmetricdata"
)

// PutMetricDataLinked reports whether this binary links the PutMetricData
// sink: it was built with CloudWatchBuildTag.
const PutMetricDataLinked = true

// putMetricData builds the PutMetricData sink: this binary was built with
// CloudWatchBuildTag.
func putMetricData(cfg aws.Config) (metrics.Sink, error) {
	return putmetricdata.New(putmetricdata.NewClient(cfg)), nil
}
