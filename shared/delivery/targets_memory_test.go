package delivery

import (
	"context"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MemoryTargets is the in-memory twin of the three target APIs (SQS
// SendMessage, EventBridge PutEvents, Lambda Invoke): it keeps every call
// and answers as told. The zero value accepts everything.
type MemoryTargets struct {
	mu      sync.Mutex
	Sent    []*sqs.SendMessageInput
	Put     []*eventbridge.PutEventsInput
	Invoked []*lambdasvc.InvokeInput
	// Err fails every call with it (an API error, say).
	Err error
	// RefuseEntry answers PutEvents with the entry failed
	// (FailedEntryCount 1, MalformedDetail).
	RefuseEntry bool
	// FunctionError answers Invoke with an Unhandled function error of
	// type OrderRejected.
	FunctionError bool
}

// SendMessage keeps the message.
func (m *MemoryTargets) SendMessage(_ context.Context, in *sqs.SendMessageInput, _ ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Sent = append(m.Sent, in)
	if m.Err != nil {
		return nil, m.Err
	}
	return &sqs.SendMessageOutput{MessageId: aws.String("m1")}, nil
}

// PutEvents keeps the entries.
func (m *MemoryTargets) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Put = append(m.Put, in)
	if m.Err != nil {
		return nil, m.Err
	}
	if m.RefuseEntry {
		return &eventbridge.PutEventsOutput{FailedEntryCount: 1, Entries: []ebtypes.PutEventsResultEntry{
			{ErrorCode: aws.String("MalformedDetail"), ErrorMessage: aws.String("Detail is malformed.")}}}, nil
	}
	return &eventbridge.PutEventsOutput{Entries: []ebtypes.PutEventsResultEntry{{EventId: aws.String("e1")}}}, nil
}

// Invoke keeps the invocation.
func (m *MemoryTargets) Invoke(_ context.Context, in *lambdasvc.InvokeInput, _ ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Invoked = append(m.Invoked, in)
	if m.Err != nil {
		return nil, m.Err
	}
	if m.FunctionError {
		return &lambdasvc.InvokeOutput{StatusCode: 200, FunctionError: aws.String("Unhandled"),
			Payload: []byte(`{"errorType":"OrderRejected","errorMessage":"no such customer"}`)}, nil
	}
	return &lambdasvc.InvokeOutput{StatusCode: 200, Payload: []byte(`null`)}, nil
}
