package lambdatarget_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
)

const fn = "arn:aws:lambda:us-east-1:123456789012:function:orders:live"

// fakeLambda keeps every invocation and answers with out or err.
type fakeLambda struct {
	calls []*lambdasvc.InvokeInput
	out   *lambdasvc.InvokeOutput
	err   error
}

func (f *fakeLambda) Invoke(_ context.Context, in *lambdasvc.InvokeInput, _ ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error) {
	f.calls = append(f.calls, in)
	if f.err != nil {
		return nil, f.err
	}
	if f.out != nil {
		return f.out, nil
	}
	return &lambdasvc.InvokeOutput{StatusCode: 200, Payload: []byte("null")}, nil
}

func newSender(t *testing.T, f *fakeLambda) sender.BatchSender {
	t.Helper()
	s, err := lambdatarget.New(f, config.Destination{Name: "fn", Type: config.TypeLambda, Target: fn}, false)
	if err != nil {
		t.Fatal(err)
	}
	b, ok := s.(sender.BatchSender)
	if !ok {
		t.Fatalf("%T has no SendBatch", s)
	}
	return b
}

func deliveries(n int) []sender.Delivery {
	ds := make([]sender.Delivery, n)
	for i := range ds {
		ds[i] = sender.Delivery{ID: fmt.Sprintf("evt_%d", i), Source: "stripe", Type: "invoice.paid", ContentType: "application/json",
			Body: fmt.Appendf(nil, `{"id":"evt_%d"}`, i), ReceivedAt: time.Date(2026, 12, 3, 14, 0, 0, 0, time.UTC), Timeout: 5 * time.Second}
	}
	ds[n-1].ContentType, ds[n-1].Body = "application/octet-stream", []byte{0xff, 0}
	return ds
}

// TestSendBatchInvokesOnceWithTheEnvelope: a batch is one synchronous
// invocation whose payload is the batch envelope an https lane POSTs, and
// its success delivers every event.
func TestSendBatchInvokesOnceWithTheEnvelope(t *testing.T) {
	f := &fakeLambda{}
	ds := deliveries(25)
	results := newSender(t, f).SendBatch(context.Background(), ds)
	if len(f.calls) != 1 {
		t.Fatalf("%d invocations, want 1", len(f.calls))
	}
	in := f.calls[0]
	want, _ := sender.BatchBody(ds)
	if aws.ToString(in.FunctionName) != fn || in.InvocationType != lambdatypes.InvocationTypeRequestResponse || !bytes.Equal(in.Payload, want) {
		t.Errorf("invoke %s %s with %.200s", aws.ToString(in.FunctionName), in.InvocationType, in.Payload)
	}
	var env struct {
		Events []struct {
			ID         string          `json:"id"`
			Data       json.RawMessage `json:"data"`
			DataBase64 string          `json:"data_base64"`
		} `json:"events"`
	}
	if err := json.Unmarshal(in.Payload, &env); err != nil || len(env.Events) != 25 || env.Events[3].ID != "evt_3" || string(env.Events[3].Data) != `{"id":"evt_3"}` ||
		env.Events[24].DataBase64 != "/wA=" {
		t.Errorf("envelope %+v: %v", env, err)
	}
	if len(results) != 25 {
		t.Fatalf("%d results", len(results))
	}
	for i, r := range results {
		if r.Verdict() != sender.Delivered {
			t.Errorf("event %d: %q", i, r.Describe())
		}
	}
}

// TestSendBatchAllOrNothing: a function error, a throttle (with its
// Retry-After) or a refused call fails every event of the batch alike.
func TestSendBatchAllOrNothing(t *testing.T) {
	tests := []struct {
		name       string
		f          *fakeLambda
		want       string
		retryAfter time.Duration
	}{
		{"function error", &fakeLambda{out: &lambdasvc.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
			Payload: []byte(`{"errorType":"BatchRejected","errorMessage":"event 3 is bad"}`)}}, "lambda FunctionError Unhandled: BatchRejected: event 3 is bad", 0},
		{"throttled", &fakeLambda{err: &lambdatypes.TooManyRequestsException{Message: aws.String("Rate exceeded"), RetryAfterSeconds: aws.String("9")}},
			"lambda TooManyRequestsException: Rate exceeded", 9 * time.Second},
		{"payload too large", &fakeLambda{err: &lambdatypes.RequestTooLargeException{Message: aws.String("Request must be smaller than 6291456 bytes")}},
			"lambda RequestTooLargeException: Request must be smaller than 6291456 bytes", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			results := newSender(t, tt.f).SendBatch(context.Background(), deliveries(4))
			for i, r := range results {
				if r.Verdict() != sender.Failed || r.Describe() != tt.want || r.RetryAfter != tt.retryAfter {
					t.Errorf("event %d: %q, retry after %v; want %q and %v", i, r.Describe(), r.RetryAfter, tt.want, tt.retryAfter)
				}
			}
			var fe *lambdatarget.FunctionError
			if tt.name == "function error" && !errors.As(results[0].Err, &fe) {
				t.Errorf("error %T, want a *lambdatarget.FunctionError", results[0].Err)
			}
		})
	}
}

// TestSendBatchEmpty: no events, no invocation.
func TestSendBatchEmpty(t *testing.T) {
	f := &fakeLambda{}
	if r := newSender(t, f).SendBatch(context.Background(), nil); len(r) != 0 || len(f.calls) != 0 {
		t.Errorf("results %v, invocations %d", r, len(f.calls))
	}
}

// TestSendMarksAReconciledEvent: an event a reconciliation run brought in
// reaches the function marked, as hookfan-reconciled marks it for an https
// subscriber; any other carries no mark.
func TestSendMarksAReconciledEvent(t *testing.T) {
	f := &fakeLambda{}
	s := newSender(t, f)
	ds := deliveries(2)
	ds[0].Reconciled = true
	for _, d := range ds {
		if res := s.Send(context.Background(), d); res.Verdict() != sender.Delivered {
			t.Fatalf("%s: %+v", d.ID, res)
		}
	}
	for i, want := range []bool{true, false} {
		var env map[string]any
		if err := json.Unmarshal(f.calls[i].Payload, &env); err != nil {
			t.Fatal(err)
		}
		if got, has := env["reconciled"]; (got == true) != want || !want && has {
			t.Errorf("event %d: reconciled %v (present %v), want %v", i, got, has, want)
		}
	}
}
