// Command ingest is the Hookfan ingest Lambda function.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context) error { return fmt.Errorf("ingest: not built yet") })
	os.Exit(1)
}
