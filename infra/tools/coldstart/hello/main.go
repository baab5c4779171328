// Command hello is the cold-start baseline: the smallest aws-lambda-go
// function, built with the same flags as Hookfan's functions. make
// coldstart measures both functions against it.
package main

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-lambda-go/lambda"
)

func main() {
	lambda.Start(func(context.Context, json.RawMessage) (string, error) { return "hello", nil })
}
