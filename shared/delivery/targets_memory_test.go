package delivery

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/message"
)

// MemoryTargets is the in-memory twin of the three target APIs (SQS
// SendMessage and SendMessageBatch, EventBridge PutEvents, Lambda Invoke):
// it keeps every call and answers as told. The zero value accepts
// everything.
type MemoryTargets struct {
	mu          sync.Mutex
	Sent        []*sqs.SendMessageInput
	SentBatches []*sqs.SendMessageBatchInput
	Put         []*eventbridge.PutEventsInput
	Invoked     []*lambdasvc.InvokeInput
	// RefuseEvents fails the batch entries of these event ids (the id
	// attribute of an SQS message, the id field of a bus entry's Detail):
	// SendMessageBatch lists them Failed (InvalidParameterValue, the
	// sender's fault), PutEvents answers them MalformedDetail.
	RefuseEvents map[string]bool
	// Err fails every call with it (an API error, say).
	Err error
	// RefuseEntry answers PutEvents with every entry failed
	// (MalformedDetail).
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

// SendMessageBatch keeps the batch and answers each entry.
func (m *MemoryTargets) SendMessageBatch(_ context.Context, in *sqs.SendMessageBatchInput, _ ...func(*sqs.Options)) (*sqs.SendMessageBatchOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.SentBatches = append(m.SentBatches, in)
	if m.Err != nil {
		return nil, m.Err
	}
	out := &sqs.SendMessageBatchOutput{}
	for i, e := range in.Entries {
		if m.RefuseEvents[aws.ToString(e.MessageAttributes[message.AttrID].StringValue)] {
			out.Failed = append(out.Failed, sqstypes.BatchResultErrorEntry{Id: e.Id, Code: aws.String("InvalidParameterValue"),
				Message: aws.String("The message is refused."), SenderFault: true})
			continue
		}
		out.Successful = append(out.Successful, sqstypes.SendMessageBatchResultEntry{Id: e.Id, MessageId: aws.String("m" + strconv.Itoa(i))})
	}
	return out, nil
}

// PutEvents keeps the entries and answers each.
func (m *MemoryTargets) PutEvents(_ context.Context, in *eventbridge.PutEventsInput, _ ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Put = append(m.Put, in)
	if m.Err != nil {
		return nil, m.Err
	}
	out := &eventbridge.PutEventsOutput{}
	for i, e := range in.Entries {
		var detail struct {
			ID string `json:"id"`
		}
		_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &detail)
		if m.RefuseEntry || m.RefuseEvents[detail.ID] {
			out.FailedEntryCount++
			out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{ErrorCode: aws.String("MalformedDetail"), ErrorMessage: aws.String("Detail is malformed.")})
			continue
		}
		out.Entries = append(out.Entries, ebtypes.PutEventsResultEntry{EventId: aws.String("e" + strconv.Itoa(i+1))})
	}
	return out, nil
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
