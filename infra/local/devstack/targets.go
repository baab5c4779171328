package devstack

import (
	"context"
	"encoding/json"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
)

// RIEFunctionName is the one function the Lambda RIE's Invoke API serves.
const RIEFunctionName = "function"

// RIEInvoker invokes a function run under the Lambda RIE through the
// SDK's own Lambda client, its endpoint the RIE's Invoke API
// (rie.Function.Endpoint). The RIE serves one function, named "function",
// whatever the target's ARN: the invocation is addressed to it, the rest
// of the call (payload, invocation type) is the SDK's. The RIE answers a
// function's error as a 200 with the runtime's error document but without
// Lambda's X-Amz-Function-Error header (its rie/handlers.go writes none):
// RIEInvoker sets FunctionError "Unhandled" on such an answer, as Lambda
// does.
type RIEInvoker struct {
	Client *lambdasvc.Client
}

// NewRIEInvoker is an RIEInvoker on cfg with its endpoint at endpoint.
func NewRIEInvoker(cfg aws.Config, endpoint string) RIEInvoker {
	return RIEInvoker{Client: lambdasvc.NewFromConfig(cfg, func(o *lambdasvc.Options) { o.BaseEndpoint = aws.String(endpoint) })}
}

// Invoke calls the RIE's function.
func (r RIEInvoker) Invoke(ctx context.Context, in *lambdasvc.InvokeInput, optFns ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error) {
	c := *in
	c.FunctionName = aws.String(RIEFunctionName)
	out, err := r.Client.Invoke(ctx, &c, optFns...)
	if err == nil && out.FunctionError == nil && runtimeError(out.Payload) {
		out.FunctionError = aws.String("Unhandled")
	}
	return out, err
}

// runtimeError reports whether a payload is the runtime's error document:
// an object with errorType and errorMessage, and at most a stackTrace
// besides.
func runtimeError(payload []byte) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal(payload, &doc) != nil {
		return false
	}
	_, typ := doc["errorType"]
	_, msg := doc["errorMessage"]
	_, trace := doc["stackTrace"]
	return typ && msg && len(doc) == 2+b2i(trace)
}

func b2i(v bool) int {
	if v {
		return 1
	}
	return 0
}
