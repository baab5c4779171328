// Package putmetricdata is the metrics sink that calls CloudWatch's
// PutMetricData (metrics.sink "cloudwatch"): the local stack's, in its
// own process, on an emulator that does not read Embedded Metric Format
// lines.
//
// It is its own package so that the Lambda functions, which write EMF
// lines only, never link the CloudWatch client (its package
// initialisation would cost every cold start; docs/decisions.md, and
// TestFunctionsLinkNoCloudWatch in shared/awsconfig/lambdaenv).
package putmetricdata

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/hookfan/hookfan/shared/metrics"
)

// API is the part of the CloudWatch client the sink uses: *cloudwatch.Client,
// built with NewClient so that it speaks a protocol emulators understand.
type API interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// chunk keeps each call well inside PutMetricData's limits.
const chunk = 500

// Sink publishes points with PutMetricData.
type Sink struct{ api API }

// New returns a PutMetricData sink.
func New(api API) *Sink { return &Sink{api: api} }

// Publish sends the points, in chunks.
func (s *Sink) Publish(ctx context.Context, points []metrics.Point) error {
	for lo := 0; lo < len(points); lo += chunk {
		hi := min(lo+chunk, len(points))
		data := make([]types.MetricDatum, 0, hi-lo)
		for _, p := range points[lo:hi] {
			d := types.MetricDatum{
				MetricName: aws.String(p.Name),
				Unit:       types.StandardUnit(p.Unit),
				Value:      aws.Float64(p.Value),
				Timestamp:  aws.Time(p.Time),
			}
			for _, dim := range p.Dimensions {
				d.Dimensions = append(d.Dimensions, types.Dimension{Name: aws.String(dim.Name), Value: aws.String(dim.Value)})
			}
			data = append(data, d)
		}
		if _, err := s.api.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String(metrics.Namespace), MetricData: data}); err != nil {
			return fmt.Errorf("put metric data: %w", err)
		}
	}
	return nil
}

// QueryProtocol makes a CloudWatch client speak the AWS query protocol.
// Since v1.53.0 the SDK's CloudWatch client defaults to Smithy RPCv2 CBOR,
// which emulators do not understand; CloudWatch itself accepts both, so
// the query protocol is safe everywhere.
func QueryProtocol(o *cloudwatch.Options) {
	o.Protocol = awsquery.New(schemas.GraniteServiceVersion20100801)
}

// NewClient builds a CloudWatch client that works against AWS and emulators.
func NewClient(cfg aws.Config) *cloudwatch.Client {
	return cloudwatch.NewFromConfig(cfg, QueryProtocol)
}
