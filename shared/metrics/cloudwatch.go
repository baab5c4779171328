package metrics

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
)

// PutMetricDataAPI is the part of the CloudWatch client the sink uses. Build
// the client with awsconfig.NewCloudWatch so it speaks a protocol emulators
// understand.
type PutMetricDataAPI interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, optFns ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// putMetricDataChunk keeps each call well inside PutMetricData's limits.
const putMetricDataChunk = 500

// CloudWatch publishes points with PutMetricData.
type CloudWatch struct{ api PutMetricDataAPI }

// NewCloudWatch returns a PutMetricData sink.
func NewCloudWatch(api PutMetricDataAPI) *CloudWatch { return &CloudWatch{api: api} }

// Publish sends the points, in chunks.
func (c *CloudWatch) Publish(ctx context.Context, points []Point) error {
	for lo := 0; lo < len(points); lo += putMetricDataChunk {
		hi := min(lo+putMetricDataChunk, len(points))
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
		if _, err := c.api.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{Namespace: aws.String(Namespace), MetricData: data}); err != nil {
			return fmt.Errorf("put metric data: %w", err)
		}
	}
	return nil
}
