// Command ingest is the Hookfan ingest Lambda function: API Gateway's
// POST /webhooks/{source} → verify → SNS. It only wires; the logic is in
// shared/ingest.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

func main() {
	log := lambdaenv.Logger()
	h, err := setup(context.Background(), log)
	if err != nil {
		log.Error("ingest", slog.String("outcome", "start_failed"), slog.String("error", err.Error()))
		os.Exit(1)
	}
	apiType, err := config.APITypeFromEnv()
	if err != nil {
		log.Error("ingest: cannot start", slog.String("error", err.Error()))
		os.Exit(1)
	}
	if apiType == config.APITypeHTTP {
		lambda.Start(h.HandleHTTP) // HTTP API, payload format 2.0
		return
	}
	lambda.Start(h.Handle) // REST API proxy event
}

// setup reads the configuration and builds the clients once; warm
// invocations reuse them. Only the clients ingest calls are built (SNS,
// Secrets Manager; DynamoDB only when a source has replay protection; S3
// only with a payload bucket; CloudWatch only for the PutMetricData sink),
// on the Lambda environment's configuration, and the stack's builder links
// only those (lambdaenv's build tags); source secrets are read when a
// request first needs them.
func setup(ctx context.Context, log *slog.Logger) (*ingest.Handler, error) {
	sources, err := config.DecodeSources(os.Getenv(config.EnvSources))
	if err != nil {
		return nil, err
	}
	topic, err := config.Getenv(config.EnvTopicARN)
	if err != nil {
		return nil, err
	}
	cfg, err := lambdaenv.Config()
	if err != nil {
		return nil, err
	}
	sink, err := lambdaenv.MetricsSink(cfg, os.Getenv(config.EnvMetricsSink), os.Stdout)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", config.EnvMetricsSink, err)
	}
	var payloads ingest.Payloads
	if bucket := os.Getenv(config.EnvPayloadBucket); bucket != "" {
		if payloads, err = lambdaenv.PayloadStore(cfg, bucket, os.Getenv(config.EnvPayloadArchiveBucket)); err != nil {
			return nil, fmt.Errorf("%s: %w", config.EnvPayloadBucket, err)
		}
	}
	o := ingest.Options{
		Payloads:  payloads,
		Sources:   sources,
		TopicARN:  topic,
		Publisher: sns.NewFromConfig(cfg),
		Secrets:   secrets.NewCache(secretsmanager.NewFromConfig(cfg)),
		Metrics:   metrics.NewRecorder(sink),
		Logger:    log,
	}
	if config.ReplayProtected(sources) {
		table, err := config.Getenv(config.EnvReplayTable)
		if err != nil {
			return nil, err
		}
		if o.Replay, err = replayStore(cfg, table); err != nil {
			return nil, err
		}
	}
	return ingest.New(o)
}
