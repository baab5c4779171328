// Package awsconfig builds the one AWS SDK configuration every Hookfan
// process uses: the Lambda functions, the local stack and the tests.
package awsconfig

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscfg "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch/schemas"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"
)

// DefaultRegion is used when neither AWS_REGION nor AWS_DEFAULT_REGION is set
// (an emulator on a developer machine). In Lambda AWS_REGION is always set.
const DefaultRegion = "us-east-1"

// Load returns the SDK configuration from the usual sources: the credential
// chain, AWS_REGION, and AWS_ENDPOINT_URL (and the per-service
// AWS_ENDPOINT_URL_<SERVICE>) for an emulator such as moto or LocalStack.
func Load(ctx context.Context, optFns ...func(*awscfg.LoadOptions) error) (aws.Config, error) {
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		optFns = append([]func(*awscfg.LoadOptions) error{awscfg.WithRegion(DefaultRegion)}, optFns...)
	}
	cfg, err := awscfg.LoadDefaultConfig(ctx, optFns...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS config: %w", err)
	}
	return cfg, nil
}

// CloudWatchQueryProtocol makes a CloudWatch client speak the AWS query
// protocol. Since v1.53.0 the SDK's CloudWatch client defaults to Smithy
// RPCv2 CBOR, which emulators do not understand; CloudWatch itself accepts
// both, so the query protocol is safe everywhere.
func CloudWatchQueryProtocol(o *cloudwatch.Options) {
	o.Protocol = awsquery.New(schemas.GraniteServiceVersion20100801)
}

// NewCloudWatch builds a CloudWatch client that works against AWS and emulators.
func NewCloudWatch(cfg aws.Config) *cloudwatch.Client {
	return cloudwatch.NewFromConfig(cfg, CloudWatchQueryProtocol)
}
