// Command ingest is the hello-world baseline linking the AWS SDK service
// packages the ingest function links, and nothing else of it: the part of
// the ingest function's cold start the SDK's package initialisation alone
// costs. Built with the ingest function's build tags, it links what that
// build links: S3 without lambdaenv.NoPayloadsBuildTag (payloads.go),
// DynamoDB without lambdaenv.NoReplayBuildTag (replay.go).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	_ "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	_ "github.com/aws/aws-sdk-go-v2/service/sns"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "hello", nil })
}
