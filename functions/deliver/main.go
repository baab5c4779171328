// Command deliver is the Hookfan deliver Lambda function, one per
// destination: it delivers the SQS batches of its destination's queue,
// and, when the destination pauses, runs the ticks of its probe schedule.
// It only wires; the logic lives in shared/delivery and shared/pausing.
package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/secrets"
)

func main() {
	logger := newLogger()
	h, err := build(context.Background(), logger)
	if err != nil {
		logger.Error("deliver", "outcome", "start_failed", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h.Invoke)
}

// newLogger logs JSON lines: through the Lambda runtime's handler (which
// adds the request id and honours the function's application log level)
// when the function's log format is JSON, as the stack deploys it, and
// with a JSON handler using the same keys otherwise.
func newLogger() *slog.Logger {
	if os.Getenv("AWS_LAMBDA_LOG_FORMAT") == "JSON" {
		return lambdacontext.NewLogger()
	}
	return slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{ReplaceAttr: lambdacontext.ReplaceAttr}))
}

// build reads the environment and builds the clients once, for all
// invocations of this process: only those the function calls (DynamoDB,
// SQS, Secrets Manager; S3 only with a payload bucket; CloudWatch only for
// the PutMetricData sink; Lambda only when the lane pauses, to switch its
// event source mapping), on the Lambda environment's configuration, and
// the stack's builder links only those (lambdaenv's build tags). Nothing is fetched before the first
// invocation: the signing secret is read when a batch first needs it.
func build(ctx context.Context, logger *slog.Logger) (*delivery.Handler, error) {
	dest, err := config.DecodeDestination(os.Getenv(config.EnvDestination))
	if err != nil {
		return nil, err
	}
	env := map[string]string{}
	for _, name := range []string{config.EnvTableName, config.EnvQueueURL, config.EnvSecretID} {
		if env[name], err = config.Getenv(name); err != nil {
			return nil, err
		}
	}
	days, err := config.RecordDaysFromEnv()
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
	// One cache for the signing secret and the headers' secrets.
	cache := secrets.NewCache(secretsmanager.NewFromConfig(cfg))
	var payloads delivery.Payloads
	if bucket := os.Getenv(config.EnvPayloadBucket); bucket != "" {
		if payloads, err = lambdaenv.PayloadStore(cfg, bucket); err != nil {
			return nil, fmt.Errorf("%s: %w", config.EnvPayloadBucket, err)
		}
	}
	ddb, queue := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	o := delivery.Options{
		Destination:   dest,
		QueueURL:      env[config.EnvQueueURL],
		SecretID:      env[config.EnvSecretID],
		RecordTTL:     time.Duration(days) * 24 * time.Hour,
		Store:         dedupe.NewDynamoDB(ddb, env[config.EnvTableName]),
		SQS:           queue,
		Secrets:       cache,
		HeaderSecrets: cache,
		Payloads:      payloads,
		Client:        delivery.NewClient(dest),
		Metrics:       metrics.NewRecorder(sink),
		Logger:        logger,
	}
	if policy, pauses := pausing.PolicyFor(dest); pauses {
		l, err := newLane(cfg, dest, policy, pausing.NewDynamoDB(ddb, env[config.EnvTableName]))
		if err != nil {
			return nil, err
		}
		o.Lane, o.Requeue = l, queue
	}
	return delivery.NewHandler(o)
}

// envFunctionName is set by Lambda for every function.
const envFunctionName = "AWS_LAMBDA_FUNCTION_NAME"

// newLane builds the lane's pause machinery: its state in the record table
// and its event source mapping, found by this function's name (Lambda
// sets it) and the queue's ARN.
func newLane(cfg aws.Config, dest config.Destination, policy pausing.Policy, store pausing.Store) (*pausing.Controller, error) {
	queueARN, err := config.Getenv(config.EnvQueueARN)
	if err != nil {
		return nil, err
	}
	function, err := config.Getenv(envFunctionName)
	if err != nil {
		return nil, err
	}
	sw, err := mappingSwitch(cfg, function, queueARN)
	if err != nil {
		return nil, err
	}
	return pausing.New(pausing.Options{
		Destination: dest.Name, Policy: policy, Store: store, Switch: sw,
		ProbeTimeout: delivery.ProbeTimeout(dest),
	})
}
