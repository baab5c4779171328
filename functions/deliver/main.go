// Command deliver is the Hookfan deliver Lambda function.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context) error { return fmt.Errorf("deliver: not built yet") })
	os.Exit(1)
}
