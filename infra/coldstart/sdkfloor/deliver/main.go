// Command deliver is the hello-world baseline linking the AWS SDK service
// packages the deliver function links, and nothing else of it: the part
// of the deliver function's cold start the SDK's package initialisation
// alone costs. Built with the deliver function's build tags, it links what
// that build links: S3 without lambdaenv.NoPayloadsBuildTag (payloads.go),
// Lambda without lambdaenv.NoPauseBuildTag (pause.go).
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
	_ "github.com/aws/aws-sdk-go-v2/service/dynamodb"
	_ "github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	_ "github.com/aws/aws-sdk-go-v2/service/sqs"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "hello", nil })
}
