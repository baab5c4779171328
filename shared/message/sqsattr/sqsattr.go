// Package sqsattr adapts the message codec's attributes (shared/message)
// to SQS's two shapes of them: the SDK's, which the deliverer's SQS target,
// an operator's replay and redrive and the local stack send and receive,
// and the Lambda event's, which the deliver function is invoked with. It
// stays apart from shared/message so that ingest, which never touches
// SQS, does not link the SQS SDK's types.
package sqsattr

import (
	"encoding/base64"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/message"
)

// FromLambda reads the message attributes of a Lambda SQS record. An
// attribute without a data type (a hand-built record) is a String when it
// has a string value and a Binary when it has a binary one; one with
// neither is absent.
func FromLambda(in map[string]events.SQSMessageAttribute) message.Attributes {
	out := make(message.Attributes, len(in))
	for name, a := range in {
		if v, ok := attribute(a.DataType, a.StringValue, a.BinaryValue); ok {
			out[name] = v
		}
	}
	return out
}

// FromSQS reads the message attributes of a message the SDK received.
func FromSQS(in map[string]sqstypes.MessageAttributeValue) message.Attributes {
	out := make(message.Attributes, len(in))
	for name, a := range in {
		if v, ok := attribute(aws.ToString(a.DataType), a.StringValue, a.BinaryValue); ok {
			out[name] = v
		}
	}
	return out
}

func attribute(dataType string, s *string, b []byte) (message.Attribute, bool) {
	switch {
	case s != nil:
		if dataType == "" {
			dataType = message.TypeString
		}
		return message.Attribute{Type: dataType, Value: *s}, true
	case b != nil:
		if dataType == "" {
			dataType = message.TypeBinary
		}
		return message.Attribute{Type: dataType, Value: base64.StdEncoding.EncodeToString(b)}, true
	}
	return message.Attribute{}, false
}

// ToSQS renders attributes for the SDK's SendMessage. A Binary value is
// decoded from its base64; one that is not base64 is an error
// (message.Decode refuses it too).
func ToSQS(in message.Attributes) (map[string]sqstypes.MessageAttributeValue, error) {
	out := make(map[string]sqstypes.MessageAttributeValue, len(in))
	for name, a := range in {
		v := sqstypes.MessageAttributeValue{DataType: aws.String(a.Type)}
		if a.Binary() {
			b, err := base64.StdEncoding.DecodeString(a.Value)
			if err != nil {
				return nil, fmt.Errorf("attribute %s: binary value is not base64: %w", name, err)
			}
			v.BinaryValue = b
		} else {
			v.StringValue = aws.String(a.Value)
		}
		out[name] = v
	}
	return out, nil
}

// ToLambda renders attributes as the Lambda SQS event carries them: what
// the local stack's event source mapping hands the deliver function for a
// message it received (FromSQS). A Binary value that is not base64 (never
// one FromSQS read) is handed on empty.
func ToLambda(in message.Attributes) map[string]events.SQSMessageAttribute {
	out := make(map[string]events.SQSMessageAttribute, len(in))
	for name, a := range in {
		v := events.SQSMessageAttribute{DataType: a.Type}
		if a.Binary() {
			v.BinaryValue, _ = base64.StdEncoding.DecodeString(a.Value)
		} else {
			v.StringValue = aws.String(a.Value)
		}
		out[name] = v
	}
	return out
}
