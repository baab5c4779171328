// Command deliver is the Hookfan deliver Lambda function, one per
// destination: it delivers the SQS batches of its destination's queue,
// and, when the destination pauses, runs the ticks of its probe schedule.
// It only wires: logger, clients, delivery.Assemble, start; the logic
// lives in shared/delivery and shared/pausing.
package main

import (
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/secrets"
)

func main() {
	logger := lambdaenv.Logger()
	h, err := build(logger)
	if err != nil {
		logger.Error("deliver", "outcome", "start_failed", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(h.Invoke)
}

// build reads the environment (every problem at once) and builds the
// clients once, for all invocations of this process, on the Lambda
// environment's configuration: S3 only with a payload bucket, Lambda only
// when the lane pauses (to switch its event source mapping). Metrics are
// EMF lines on stdout (no CloudWatch client: docs/decisions.md). Nothing
// is fetched before the first invocation: the signing secret is read when
// a batch first needs it.
func build(logger *slog.Logger) (*delivery.Handler, error) {
	env, envErr := delivery.ReadEnv(os.Getenv)
	cfg, cfgErr := lambdaenv.Config()
	if err := errors.Join(envErr, cfgErr); err != nil {
		return nil, err
	}
	ddb, queue := dynamodb.NewFromConfig(cfg), sqs.NewFromConfig(cfg)
	c := delivery.Clients{
		Store: dedupe.NewDynamoDB(ddb, env.TableName), SQS: queue, Secrets: secrets.NewCache(secretsmanager.NewFromConfig(cfg)),
		Metrics: metrics.NewEMF(os.Stdout), Logger: logger,
		// The role's credentials, from Lambda's environment: they sign a
		// destination's requests with auth.sigv4.
		Credentials: cfg.Credentials,
		// An AWS target's sender builds its one client on it, in its
		// target's region; an https lane builds none.
		AWS: &cfg,
	}
	if env.PayloadBucket != "" {
		c.Payloads = lambdaenv.PayloadStore(cfg, env.PayloadBucket, env.PayloadArchiveBucket)
	}
	if _, paced := env.Destination.Pace(); paced {
		c.Pace = pacing.NewDynamoDB(ddb, env.TableName)
	}
	if env.Pauses() {
		c.Lanes = pausing.NewDynamoDB(ddb, env.TableName)
		c.Switch = &pausing.EventSourceMapping{API: lambdasvc.NewFromConfig(cfg), FunctionName: env.FunctionName, QueueARN: env.QueueARN}
	}
	return delivery.Assemble(env, c)
}
