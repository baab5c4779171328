// Package lambdatarget is the sender of a lambda destination: each event
// invokes the function the destination's target names, synchronously,
// with the event in a JSON envelope.
package lambdatarget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/message"
)

// API is the part of the Lambda client a lambda target uses.
type API interface {
	Invoke(ctx context.Context, in *lambdasvc.InvokeInput, optFns ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error)
}

// NewClient builds, on cfg, the Lambda client a target calls
// (shared/delivery gives cfg the target's region).
func NewClient(cfg aws.Config) API { return lambdasvc.NewFromConfig(cfg) }

// Envelope is the payload a lambda target is invoked with.
type Envelope struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	Type       string `json:"type"`
	ReceivedAt string `json:"received_at"` // message.ReceivedAtLayout
	Attempt    int    `json:"attempt"`
	Replay     string `json:"replay,omitempty"`
	// Reconciled marks an event a reconciliation run brought in (what
	// hookfan-reconciled says to an https subscriber).
	Reconciled  bool   `json:"reconciled,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Encoding is sender.EncodingText (Body is the provider's bytes as a
	// string) or sender.EncodingBase64 (Body is their base64).
	Encoding string `json:"encoding"`
	Body     string `json:"body"`
}

// Sender invokes the function synchronously with the event's envelope. A
// function error (X-Amz-Function-Error) is a failed attempt with the
// error's type, a throttle too (retried no sooner than the Retry-After
// Lambda gives).
type Sender struct {
	api      API
	function string
}

// New is d's sender on api.
func New(api API, d config.Destination, _ bool) (sender.Sender, error) {
	if _, err := config.ParseARN(d.Target); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if api == nil {
		return nil, errors.New("the destination is of type lambda but no Lambda client was given")
	}
	return Sender{api: api, function: d.Target}, nil
}

// FunctionError is a function's own error, as the record keeps it.
type FunctionError struct {
	Kind, Type, Message string // Kind is X-Amz-Function-Error: Unhandled or Handled
}

func (e *FunctionError) Error() string {
	s := "lambda FunctionError " + e.Kind
	if e.Type != "" {
		s += ": " + e.Type
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Prepare has nothing to read: the lane role's credentials sign the call.
func (Sender) Prepare(context.Context) error { return nil }

// Send invokes the function.
func (t Sender) Send(ctx context.Context, d sender.Delivery) sender.Result {
	body, enc := sender.EncodeBody(d.Body)
	payload, err := json.Marshal(Envelope{
		ID: d.ID, Source: d.Source, Type: d.Type, ReceivedAt: d.ReceivedAt.UTC().Format(message.ReceivedAtLayout),
		Attempt: d.Attempt, Replay: d.Replay, Reconciled: d.Reconciled, ContentType: d.ContentType, Encoding: enc, Body: body,
	})
	if err != nil {
		return sender.Result{Err: fmt.Errorf("lambda envelope: %w", err)}
	}
	return t.invoke(ctx, d.Timeout, payload)
}

// SendBatch invokes the function once with the batch's envelope, the body
// an https lane POSTs (sender.BatchBody: {"events": [...]}, each item with
// its id, type, source, accepted_at and its data): Lambda has no batch
// API, so the function answers for the whole batch, and every event gets
// the invocation's Result (all or nothing, as a POST's status).
func (t Sender) SendBatch(ctx context.Context, ds []sender.Delivery) []sender.Result {
	if len(ds) == 0 {
		return nil
	}
	results := make([]sender.Result, len(ds))
	payload, err := sender.BatchBody(ds)
	r := sender.Result{Err: fmt.Errorf("lambda batch envelope: %w", err), Unsent: true}
	if err == nil {
		r = t.invoke(ctx, ds[0].Timeout, payload)
	}
	for i := range results {
		results[i] = r
	}
	return results
}

// invoke invokes the function synchronously with payload within timeout.
func (t Sender) invoke(ctx context.Context, timeout time.Duration, payload []byte) sender.Result {
	var retryAfter time.Duration
	r := sender.Call(ctx, timeout, "lambda", func(ctx context.Context) error {
		out, err := t.api.Invoke(ctx, &lambdasvc.InvokeInput{
			FunctionName: aws.String(t.function), InvocationType: lambdatypes.InvocationTypeRequestResponse, Payload: payload,
		})
		var throttled *lambdatypes.TooManyRequestsException
		if errors.As(err, &throttled) {
			if s, perr := strconv.Atoi(aws.ToString(throttled.RetryAfterSeconds)); perr == nil && s > 0 {
				retryAfter = time.Duration(s) * time.Second
			}
		}
		if err != nil {
			return err
		}
		if out.FunctionError != nil {
			var fe struct {
				Type    string `json:"errorType"`
				Message string `json:"errorMessage"`
			}
			_ = json.Unmarshal(out.Payload, &fe)
			return &FunctionError{Kind: aws.ToString(out.FunctionError), Type: sender.Clip(fe.Type, sender.MaxErrorMessage), Message: sender.Clip(fe.Message, sender.MaxErrorMessage)}
		}
		return nil
	})
	r.RetryAfter = retryAfter
	return r
}

var _ sender.BatchSender = Sender{}
