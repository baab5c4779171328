// Command reconcile is the Hookfan reconcile Lambda function, one per
// source with a reconcile block: its schedule invokes it with
// {"source": "<name>"} every `every`, and it asks the provider's API what
// it sent since the source's watermark, brings in what never reached
// Hookfan and saves the watermark. It only wires: logger, clients,
// reconcilejob.Assemble, start; the logic lives in shared/reconcile (the
// run) and shared/reconcilejob (its contract and handler).
package main

import (
	"errors"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/reconcilejob"
	"github.com/hookfan/hookfan/shared/secrets"
)

func main() {
	log := lambdaenv.Logger()
	h, err := setup(log)
	if err != nil {
		log.Error("reconcile", slog.String("outcome", "start_failed"), slog.String("error", err.Error()))
		os.Exit(1)
	}
	lambda.Start(h.Handle)
}

// setup reads the environment (every problem at once) and builds the
// clients once; warm invocations reuse them: DynamoDB for the records and
// the watermark, Secrets Manager for the provider's credential, and for a
// source that publishes what it brings in (Stripe) SNS, and S3 only with
// a payload bucket. Metrics are EMF lines on stdout. Nothing is fetched
// before the first invocation.
func setup(log *slog.Logger) (*reconcilejob.Handler, error) {
	env, envErr := reconcilejob.ReadEnv(os.Getenv)
	cfg, cfgErr := lambdaenv.Config()
	if err := errors.Join(envErr, cfgErr); err != nil {
		return nil, err
	}
	ddb := dynamodb.NewFromConfig(cfg)
	c := reconcilejob.Clients{
		Secrets:    secrets.NewCache(secretsmanager.NewFromConfig(cfg)),
		Records:    &reconcile.DynamoDBRecords{API: ddb, Table: env.TableName},
		Watermarks: &reconcile.DynamoDBWatermarks{API: ddb, Table: env.TableName},
		Metrics:    metrics.NewEMF(os.Stdout), Logger: log,
	}
	if env.Ingest != nil {
		c.Publisher = sns.NewFromConfig(cfg)
		if env.Ingest.PayloadBucket != "" {
			c.Payloads = lambdaenv.PayloadStore(cfg, env.Ingest.PayloadBucket, env.Ingest.PayloadArchiveBucket)
		}
	}
	return reconcilejob.Assemble(env, c)
}
