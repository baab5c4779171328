package ingest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"
)

// EventID is the Hookfan event id: "evt_" and the first 32 hex digits of
// SHA-256(source + "\x00" + provider event id). A provider's retry of an
// event gets the same id; it never contains '.'.
func EventID(source, providerID string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + providerID))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// errMessageTooLarge means a body and its attributes exceed one SNS message.
var errMessageTooLarge = errors.New("message too large for SNS")

// newMessage builds the SNS input of an accepted request, and the event it
// encodes (ev with its body), through the message codec. The body travels
// as it is when it is text (message.Text); otherwise (invalid UTF-8, or a
// character SQS refuses: a NUL, a form feed, U+FFFF…) it travels as its
// base64 with encoding=base64, and deliver decodes it, so a subscriber
// always receives the provider's exact bytes. It fails when the message
// and its attributes, with room for copyBytes more (the attribute its
// ordered copies add: draft.copyBytes), exceed one SNS message.
func newMessage(topicARN string, req *events.APIGatewayProxyRequest, body []byte, text bool, ev message.Event, copyBytes int) (*sns.PublishInput, message.Event, error) {
	switch {
	case !text:
		ev.Body, ev.Encoding = base64.StdEncoding.EncodeToString(body), message.Base64
	case req.IsBase64Encoded:
		ev.Body = string(body)
	default:
		ev.Body = req.Body // the same bytes as body, without another copy
	}
	in, size := encode(topicARN, ev)
	if size+copyBytes > config.MaxSNSMessageBytes {
		return nil, ev, fmt.Errorf("%w: %d bytes with its attributes and %d of its ordered copies' ordering_key, more than one SNS message (%d)", errMessageTooLarge, size, copyBytes, config.MaxSNSMessageBytes)
	}
	return in, ev, nil
}

// newReference builds the SNS input of an accepted request whose body is
// stored in S3: the reference as the body, payload=s3 among the attributes,
// with room for copyBytes more as in newMessage.
func newReference(topicARN string, ref payload.Reference, ev message.Event, copyBytes int) (*sns.PublishInput, message.Event, error) {
	ev.Body, ev.Encoding = ref.JSON(), message.Stored
	in, size := encode(topicARN, ev)
	if size += copyBytes; size > config.MaxSNSMessageBytes {
		return nil, ev, fmt.Errorf("%w: the reference with its attributes takes %d bytes", errMessageTooLarge, size)
	}
	return in, ev, nil
}

// encode renders ev as the SNS input to topicARN (message.Event.Encode),
// and the message's size as SNS counts it: the body, and each attribute's
// name, type and value.
func encode(topicARN string, ev message.Event) (*sns.PublishInput, int) {
	body, attrs := ev.Encode()
	return &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(body), MessageAttributes: snsAttributes(attrs)}, len(body) + attrs.Size()
}

// snsAttributes renders the codec's attributes for SNS's Publish; all of
// ingest's are strings. The values share one allocation (the SDK only
// reads them).
func snsAttributes(attrs message.Attributes) map[string]snstypes.MessageAttributeValue {
	values := make([]string, 0, 2*len(attrs))
	out := make(map[string]snstypes.MessageAttributeValue, len(attrs))
	for name, a := range attrs {
		values = append(values, a.Type, a.Value)
		n := len(values)
		out[name] = snstypes.MessageAttributeValue{DataType: &values[n-2], StringValue: &values[n-1]}
	}
	return out
}
