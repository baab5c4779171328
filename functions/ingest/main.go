// Command ingest is the Hookfan ingest Lambda function: API Gateway's
// POST /webhooks/{source} → verify → SNS. It only wires: logger, clients,
// ingest.Assemble, start; the logic is in shared/ingest.
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
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

func main() {
	log := lambdaenv.Logger()
	h, env, err := setup(log)
	if err != nil {
		log.Error("ingest", slog.String("outcome", "start_failed"), slog.String("error", err.Error()))
		os.Exit(1)
	}
	if env.APIType == config.APITypeHTTP {
		lambda.Start(h.HandleHTTP) // HTTP API, payload format 2.0
		return
	}
	lambda.Start(h.Handle) // REST API proxy event
}

// setup reads the environment (every problem at once) and builds the
// clients once; warm invocations reuse them. Only the clients the
// configuration calls are built (DynamoDB only when a source has replay
// protection, S3 only with a payload bucket), on the Lambda environment's
// configuration; metrics are EMF lines on stdout (no CloudWatch client:
// docs/decisions.md); source secrets are read when a request first needs
// them.
func setup(log *slog.Logger) (*ingest.Handler, ingest.Env, error) {
	env, envErr := ingest.ReadEnv(os.Getenv)
	cfg, cfgErr := lambdaenv.Config()
	if err := errors.Join(envErr, cfgErr); err != nil {
		return nil, env, err
	}
	c := ingest.Clients{Publisher: sns.NewFromConfig(cfg), Secrets: secrets.NewCache(secretsmanager.NewFromConfig(cfg)), Metrics: metrics.NewEMF(os.Stdout), Logger: log}
	if env.PayloadBucket != "" {
		c.Payloads = lambdaenv.PayloadStore(cfg, env.PayloadBucket, env.PayloadArchiveBucket)
	}
	if env.ReplayTable != "" {
		c.Replay = replayguard.NewDynamoDB(dynamodb.NewFromConfig(cfg), env.ReplayTable)
	}
	h, err := ingest.Assemble(env, c)
	return h, env, err
}
