// Command targetfn is the Lambda function local lambda targets invoke
// under the Lambda Runtime Interface Emulator (the integration tests, and
// make dev with a lambda destination). It reads the envelope a lambda
// target sends (lambdatarget.Envelope), logs one JSON line of what it
// got, and fails an event whose type ends in ".fail" with the error type
// TargetRefused, as a consumer's function refusing an event would.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
)

// TargetRefused is the error targetfn fails an event with; its type is
// what the delivery record shows.
type TargetRefused struct{ ID string }

func (e TargetRefused) Error() string { return "targetfn refuses event " + e.ID }

// Got is the line logged for each invocation.
type Got struct {
	Got      string `json:"targetfn_got"`
	Type     string `json:"type"`
	Source   string `json:"source"`
	Encoding string `json:"encoding"`
	Attempt  int    `json:"attempt"`
	BodyLen  int    `json:"body_len"`
}

func handle(_ context.Context, env lambdatarget.Envelope) (map[string]string, error) {
	line, _ := json.Marshal(Got{Got: env.ID, Type: env.Type, Source: env.Source, Encoding: env.Encoding, Attempt: env.Attempt, BodyLen: len(env.Body)})
	fmt.Fprintln(os.Stdout, string(line))
	if strings.HasSuffix(env.Type, ".fail") {
		return nil, TargetRefused{ID: env.ID}
	}
	return map[string]string{"ok": env.ID}, nil
}

func main() { lambda.Start(handle) }
