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

// attributes are a message's string attributes other than the encoding.
type attributes struct {
	source, typ, id, receivedAt, contentType string
}

// newMessage builds the SNS input of an accepted request. The body travels
// as it is when it is text (message.Text); otherwise (invalid UTF-8, or a
// character SQS refuses: a NUL, a form feed, U+FFFF…) it travels as its
// base64 with encoding=base64, and deliver decodes it, so a subscriber
// always receives the provider's exact bytes. It fails when the message
// and its attributes, with room for copyBytes more (the attribute its
// ordered copies add: draft.copyBytes), exceed one SNS message.
func newMessage(topicARN string, req *events.APIGatewayProxyRequest, body []byte, text bool, a attributes, copyBytes int) (*sns.PublishInput, error) {
	var msg, encoding string
	switch {
	case !text:
		msg, encoding = base64.StdEncoding.EncodeToString(body), message.EncodingBase64
	case req.IsBase64Encoded:
		msg = string(body)
	default:
		msg = req.Body // the same bytes as body, without another copy
	}
	attrs, size := a.message(len(msg))
	if encoding != "" {
		size += addAttribute(attrs, message.AttrEncoding, encoding)
	}
	if size+copyBytes > config.MaxSNSMessageBytes {
		return nil, fmt.Errorf("%w: %d bytes with its attributes and %d of its ordered copies' ordering_key, more than one SNS message (%d)", errMessageTooLarge, size, copyBytes, config.MaxSNSMessageBytes)
	}
	return &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(msg), MessageAttributes: attrs}, nil
}

// newReference builds the SNS input of an accepted request whose body is
// stored in S3: the reference as the body, payload=s3 among the attributes,
// with room for copyBytes more as in newMessage.
func newReference(topicARN string, ref payload.Reference, a attributes, copyBytes int) (*sns.PublishInput, error) {
	msg := ref.JSON()
	attrs, size := a.message(len(msg))
	size += addAttribute(attrs, message.AttrPayload, message.PayloadS3)
	if size += copyBytes; size > config.MaxSNSMessageBytes {
		return nil, fmt.Errorf("%w: the reference with its attributes takes %d bytes", errMessageTooLarge, size)
	}
	return &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(msg), MessageAttributes: attrs}, nil
}

// message returns the attributes and the size of a message of bodyLen
// bytes with them, as SNS counts it.
func (a attributes) message(bodyLen int) (map[string]snstypes.MessageAttributeValue, int) {
	// The attributes point at their values: one allocation holds them all
	// (the SDK only reads them), and they share their data type.
	v := &struct {
		dataType string
		attributes
	}{"String", a}
	attrs := make(map[string]snstypes.MessageAttributeValue, 6)
	size := bodyLen
	add := func(name string, value *string) {
		attrs[name] = snstypes.MessageAttributeValue{DataType: &v.dataType, StringValue: value}
		size += len(name) + len(v.dataType) + len(*value)
	}
	add(message.AttrSource, &v.source)
	add(message.AttrType, &v.typ)
	add(message.AttrID, &v.id)
	add(message.AttrReceivedAt, &v.receivedAt)
	add(message.AttrContentType, &v.contentType)
	return attrs, size
}

// addAttribute adds a string attribute and returns the bytes it counts
// toward the message's size.
func addAttribute(attrs map[string]snstypes.MessageAttributeValue, name, value string) int {
	attrs[name] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
	return len(name) + len("String") + len(value)
}
