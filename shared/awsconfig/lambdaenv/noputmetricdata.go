//go:build !hookfan.cloudwatch

package lambdaenv

import (
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// PutMetricDataLinked reports whether this binary links the PutMetricData
// sink: it was built with CloudWatchBuildTag.
const PutMetricDataLinked = false

// errNoPutMetricData is what a binary built without CloudWatchBuildTag
// answers when asked for the PutMetricData sink.
var errNoPutMetricData = fmt.Errorf("metrics sink %q: this binary was built without the PutMetricData sink; "+
	"build it with -tags %s (the stack's builder does when metrics.sink is %q) or set metrics.sink to %q",
	config.SinkCloudWatch, CloudWatchBuildTag, config.SinkCloudWatch, config.SinkEMF)

// putMetricData refuses: this binary was built without CloudWatchBuildTag.
func putMetricData(aws.Config) (metrics.Sink, error) { return nil, errNoPutMetricData }
