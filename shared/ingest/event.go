package ingest

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
)

// EventID is the Hookfan event id: "evt_" and the first 32 hex digits of
// SHA-256(source + "\x00" + provider event id). A provider's retry of an
// event gets the same id; it never contains '.'.
func EventID(source, providerID string) string {
	sum := sha256.Sum256([]byte(source + "\x00" + providerID))
	return "evt_" + hex.EncodeToString(sum[:16])
}

// attributes are a message's string attributes other than the encoding.
type attributes struct {
	source, typ, id, receivedAt, contentType string
}

// newMessage builds the SNS input of an accepted request. The body travels
// as it is when it is text (message.Text); otherwise (invalid UTF-8, or a
// character SQS refuses: a NUL, a form feed, U+FFFF…) it travels as its
// base64 with encoding=base64, and deliver decodes it, so a subscriber
// always receives the provider's exact bytes. It fails when the message
// and its attributes exceed one SNS message.
func newMessage(topicARN string, req *events.APIGatewayProxyRequest, body []byte, text bool, a attributes) (*sns.PublishInput, error) {
	var msg, encoding string
	switch {
	case !text:
		msg, encoding = base64.StdEncoding.EncodeToString(body), message.EncodingBase64
	case req.IsBase64Encoded:
		msg = string(body)
	default:
		msg = req.Body // the same bytes as body, without another copy
	}
	attrs := make(map[string]snstypes.MessageAttributeValue, 6)
	size := len(msg)
	add := func(name, value string) {
		attrs[name] = snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(value)}
		size += len(name) + len("String") + len(value)
	}
	add(message.AttrSource, a.source)
	add(message.AttrType, a.typ)
	add(message.AttrID, a.id)
	add(message.AttrReceivedAt, a.receivedAt)
	add(message.AttrContentType, a.contentType)
	if encoding != "" {
		add(message.AttrEncoding, encoding)
	}
	if size > config.MaxSNSMessageBytes {
		return nil, fmt.Errorf("message of %d bytes with its attributes exceeds one SNS message (%d)", size, config.MaxSNSMessageBytes)
	}
	return &sns.PublishInput{TopicArn: aws.String(topicARN), Message: aws.String(msg), MessageAttributes: attrs}, nil
}
