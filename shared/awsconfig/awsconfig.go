// Package awsconfig builds the AWS SDK configuration of the processes that
// run outside Lambda — the local stack, the tests, the command-line tools —
// with the SDK's default loader (profiles, SSO, web identity, ...). The
// Lambda functions use lambdaenv, which reads only what Lambda provides and
// links none of the other credential sources.
package awsconfig

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	awscfg "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"

	"github.com/hookfan/hookfan/shared/metrics/putmetricdata"
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

// NewCloudWatch builds a CloudWatch client that works against AWS and
// emulators (see putmetricdata.QueryProtocol).
func NewCloudWatch(cfg aws.Config) *cloudwatch.Client { return putmetricdata.NewClient(cfg) }
