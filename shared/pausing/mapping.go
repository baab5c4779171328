package pausing

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"
)

// LambdaAPI is the part of the Lambda client the switch uses.
type LambdaAPI interface {
	ListEventSourceMappings(ctx context.Context, in *lambda.ListEventSourceMappingsInput, optFns ...func(*lambda.Options)) (*lambda.ListEventSourceMappingsOutput, error)
	UpdateEventSourceMapping(ctx context.Context, in *lambda.UpdateEventSourceMappingInput, optFns ...func(*lambda.Options)) (*lambda.UpdateEventSourceMappingOutput, error)
}

// EventSourceMapping switches the event source mapping from a lane's queue
// to its deliver function. The function does not know the mapping's id
// (the mapping is made after the function), so each call finds the
// mapping by function and queue first: switching happens a few times a
// day at most. The deliver role may update only mappings of its own
// function (IAM condition lambda:FunctionArn).
type EventSourceMapping struct {
	API LambdaAPI
	// FunctionName is the deliver function's name or ARN; QueueARN its
	// queue's ARN.
	FunctionName, QueueARN string
}

// Mapping states, as Lambda reports them.
const (
	mappingEnabled   = "Enabled"
	mappingEnabling  = "Enabling"
	mappingCreating  = "Creating"
	mappingUpdating  = "Updating"
	mappingDisabled  = "Disabled"
	mappingDisabling = "Disabling"
)

// ErrNoMapping means the lane's function has no mapping from its queue.
var ErrNoMapping = errors.New("no event source mapping from the queue to the function")

// state finds the mapping and returns its state.
func (m *EventSourceMapping) state(ctx context.Context) (uuid, state string, err error) {
	out, err := m.API.ListEventSourceMappings(ctx, &lambda.ListEventSourceMappingsInput{
		FunctionName: aws.String(m.FunctionName), EventSourceArn: aws.String(m.QueueARN), MaxItems: aws.Int32(10),
	})
	if err != nil {
		return "", "", fmt.Errorf("find the event source mapping of %s: %w", m.FunctionName, err)
	}
	var found []types.EventSourceMappingConfiguration
	for _, c := range out.EventSourceMappings {
		if aws.ToString(c.EventSourceArn) == m.QueueARN {
			found = append(found, c)
		}
	}
	switch len(found) {
	case 0:
		return "", "", fmt.Errorf("%s from %s: %w", m.FunctionName, m.QueueARN, ErrNoMapping)
	case 1:
	default:
		return "", "", fmt.Errorf("%s has %d event source mappings from %s; a lane has one", m.FunctionName, len(found), m.QueueARN)
	}
	return aws.ToString(found[0].UUID), aws.ToString(found[0].State), nil
}

// Enabled reports whether the mapping receives, or is about to: Enabled,
// Enabling, Creating, or Updating (a change that leaves it as it was).
func (m *EventSourceMapping) Enabled(ctx context.Context) (bool, error) {
	_, state, err := m.state(ctx)
	if err != nil {
		return false, err
	}
	switch state {
	case mappingDisabled, mappingDisabling:
		return false, nil
	case mappingEnabled, mappingEnabling, mappingCreating, mappingUpdating:
		return true, nil
	default:
		return false, fmt.Errorf("event source mapping of %s is %s", m.FunctionName, state)
	}
}

// Enable turns the mapping on; Disable turns it off. Either does nothing
// when the mapping is already so (or getting so).
func (m *EventSourceMapping) Enable(ctx context.Context) error { return m.set(ctx, true) }

// Disable turns the mapping off: Lambda stops receiving from the queue, and
// batches in flight finish.
func (m *EventSourceMapping) Disable(ctx context.Context) error { return m.set(ctx, false) }

func (m *EventSourceMapping) set(ctx context.Context, on bool) error {
	uuid, state, err := m.state(ctx)
	if err != nil {
		return err
	}
	switch {
	case on && (state == mappingEnabled || state == mappingEnabling),
		!on && (state == mappingDisabled || state == mappingDisabling):
		return nil
	}
	_, err = m.API.UpdateEventSourceMapping(ctx, &lambda.UpdateEventSourceMappingInput{UUID: aws.String(uuid), Enabled: aws.Bool(on)})
	if err != nil {
		verb := "disable"
		if on {
			verb = "enable"
		}
		var inUse *types.ResourceInUseException
		if errors.As(err, &inUse) {
			return fmt.Errorf("%s event source mapping %s: it is %s; try again when it settles: %w", verb, uuid, state, err)
		}
		return fmt.Errorf("%s event source mapping %s: %w", verb, uuid, err)
	}
	return nil
}
