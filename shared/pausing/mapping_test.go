package pausing_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/hookfan/hookfan/shared/pausing"
)

const (
	fnName   = "Hookfan-Lane-orders-Function-AbC"
	queueARN = "arn:aws:sqs:eu-west-1:123456789012:Hookfan-Lane-orders-queue"
)

// fakeLambda holds mappings and records updates.
type fakeLambda struct {
	mappings []types.EventSourceMappingConfiguration
	updates  []*lambda.UpdateEventSourceMappingInput
	err      error
}

func (f *fakeLambda) ListEventSourceMappings(_ context.Context, in *lambda.ListEventSourceMappingsInput, _ ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error) {
	if aws.ToString(in.FunctionName) != fnName || aws.ToString(in.EventSourceArn) != queueARN {
		return nil, errors.New("list not filtered by the lane's function and queue")
	}
	return &lambda.ListEventSourceMappingsOutput{EventSourceMappings: f.mappings}, nil
}

func (f *fakeLambda) UpdateEventSourceMapping(_ context.Context, in *lambda.UpdateEventSourceMappingInput, _ ...func(*lambda.Options)) (*lambda.UpdateEventSourceMappingOutput, error) {
	f.updates = append(f.updates, in)
	return &lambda.UpdateEventSourceMappingOutput{}, f.err
}

func mapping(uuid, state string) types.EventSourceMappingConfiguration {
	return types.EventSourceMappingConfiguration{UUID: aws.String(uuid), State: aws.String(state), EventSourceArn: aws.String(queueARN)}
}

func TestEventSourceMappingSwitch(t *testing.T) {
	ctx := context.Background()
	f := &fakeLambda{mappings: []types.EventSourceMappingConfiguration{mapping("u-1", "Enabled")}}
	m := &pausing.EventSourceMapping{API: f, FunctionName: fnName, QueueARN: queueARN}
	if on, err := m.Enabled(ctx); err != nil || !on {
		t.Fatalf("Enabled = %v, %v", on, err)
	}
	if err := m.Disable(ctx); err != nil {
		t.Fatal(err)
	}
	if len(f.updates) != 1 || aws.ToString(f.updates[0].UUID) != "u-1" || aws.ToBool(f.updates[0].Enabled) {
		t.Fatalf("updates %+v, want u-1 disabled", f.updates)
	}
	for _, state := range []string{"Disabling", "Disabled"} {
		f.mappings[0] = mapping("u-1", state)
		if on, _ := m.Enabled(ctx); on {
			t.Errorf("%s: Enabled = true", state)
		}
		if err := m.Disable(ctx); err != nil || len(f.updates) != 1 {
			t.Errorf("%s: Disable called Lambda again (%d updates), %v", state, len(f.updates), err)
		}
	}
	if err := m.Enable(ctx); err != nil || len(f.updates) != 2 || !aws.ToBool(f.updates[1].Enabled) {
		t.Errorf("Enable: %v, updates %+v", err, f.updates)
	}
	f.mappings[0] = mapping("u-1", "Updating")
	if on, _ := m.Enabled(ctx); !on {
		t.Error("Updating: taken as off")
	}
}

func TestEventSourceMappingErrors(t *testing.T) {
	ctx := context.Background()
	f := &fakeLambda{}
	m := &pausing.EventSourceMapping{API: f, FunctionName: fnName, QueueARN: queueARN}
	if err := m.Disable(ctx); !errors.Is(err, pausing.ErrNoMapping) {
		t.Errorf("no mapping: %v, want ErrNoMapping", err)
	}
	f.mappings = []types.EventSourceMappingConfiguration{mapping("a", "Enabled"), mapping("b", "Enabled")}
	if err := m.Disable(ctx); err == nil || !strings.Contains(err.Error(), "has 2 event source mappings") {
		t.Errorf("two mappings: %v", err)
	}
	f.mappings = f.mappings[:1]
	f.err = &types.ResourceInUseException{Message: aws.String("in use")}
	err := m.Disable(ctx)
	var inUse *types.ResourceInUseException
	if !errors.As(err, &inUse) || !strings.Contains(err.Error(), "try again when it settles") {
		t.Errorf("in use: %v", err)
	}
}
