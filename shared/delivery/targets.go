package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	lambdasvc "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
	"github.com/hookfan/hookfan/shared/signing"
)

// AWS targets (docs/configuration.md#aws-targets): a lane whose
// destination is an sqs queue, an eventbridge bus or a lambda function
// makes each attempt with one AWS API call instead of a POST, and turns
// its answer into the same result the handler judges. Everything else —
// the claim, the record, the schedule, the DLQ, the pause, ops — is the
// lane's, unchanged. Every failure is retried on the lane's schedule, as
// every HTTP failure but 410 is: an access denied or a missing queue is a
// policy or a resource the owner fixes (the lane's pause rule stops
// spending attempts meanwhile), and an event the target refuses for good
// (too large) fails each attempt and ends in the DLQ with its error.

// SendMessageAPI is the part of the SQS client an sqs target uses.
type SendMessageAPI interface {
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
}

// PutEventsAPI is the part of the EventBridge client an eventbridge target uses.
type PutEventsAPI interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// InvokeAPI is the part of the Lambda client a lambda target uses.
type InvokeAPI interface {
	Invoke(ctx context.Context, in *lambdasvc.InvokeInput, optFns ...func(*lambdasvc.Options)) (*lambdasvc.InvokeOutput, error)
}

// TargetClients are the clients of AWS targets: only the one the lane's
// type needs is set (TargetClientsFor).
type TargetClients struct {
	SQS         SendMessageAPI
	EventBridge PutEventsAPI
	Lambda      InvokeAPI
}

// TargetClientsFor builds, on cfg, the one client d's type needs, in its
// target's region (a target may be in another region and account); none
// for an https destination.
func TargetClientsFor(cfg aws.Config, d config.Destination) TargetClients {
	region := func(r *string) {
		if a := d.TargetARN(); a.Region != "" {
			*r = a.Region
		}
	}
	switch d.Type {
	case config.TypeSQS:
		return TargetClients{SQS: sqs.NewFromConfig(cfg, func(o *sqs.Options) { region(&o.Region) })}
	case config.TypeEventBridge:
		return TargetClients{EventBridge: eventbridge.NewFromConfig(cfg, func(o *eventbridge.Options) { region(&o.Region) })}
	case config.TypeLambda:
		return TargetClients{Lambda: lambdasvc.NewFromConfig(cfg, func(o *lambdasvc.Options) { region(&o.Region) })}
	}
	return TargetClients{}
}

// target makes one attempt at an AWS target within timeout.
type target interface {
	deliver(ctx context.Context, msg Message, timeout time.Duration) result
}

// newTarget is the target of an AWS destination (nil for https), on the
// client its type needs; tracing passes the message's X-Ray trace header
// on to a bus (config tracing on), as an https lane sends traceparent.
func newTarget(d config.Destination, c TargetClients, tracing bool) (target, error) {
	if !d.AWSTarget() {
		return nil, nil
	}
	arn, err := config.ParseARN(d.Target)
	if err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	missing := func(what string) error {
		return fmt.Errorf("the destination is of type %s but no %s client was given", d.Type, what)
	}
	switch d.Type {
	case config.TypeSQS:
		if c.SQS == nil {
			return nil, missing("SQS")
		}
		return sqsTarget{api: c.SQS, url: QueueURLOf(arn), fifo: d.FIFOTarget()}, nil
	case config.TypeEventBridge:
		if c.EventBridge == nil {
			return nil, missing("EventBridge")
		}
		return eventBridgeTarget{api: c.EventBridge, bus: d.Target, tracing: tracing}, nil
	default:
		if c.Lambda == nil {
			return nil, missing("Lambda")
		}
		return lambdaTarget{api: c.Lambda, function: d.Target}, nil
	}
}

// transmit makes the attempt: the signed POST of an https destination, or
// the API call of an AWS target.
func (h *Handler) transmit(ctx context.Context, to string, msg Message, signer *signing.Signer, extra []header, timeout time.Duration) result {
	if h.target != nil {
		return h.target.deliver(ctx, msg, timeout)
	}
	return h.send(ctx, to, msg, signer, extra, timeout)
}

// signerFor is the lane's signer; nil, and no secret read, for an AWS
// target, which is not signed.
func (h *Handler) signerFor(ctx context.Context) (*signing.Signer, error) {
	if h.target != nil {
		return nil, nil
	}
	return h.currentSigner(ctx)
}

// call runs one API call within timeout and turns its outcome into a
// result: 200 on success, the error otherwise (its code and message only:
// the SDK's wrapping names the request id and the endpoint).
func call(ctx context.Context, timeout time.Duration, service string, f func(ctx context.Context) error) result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	err := f(ctx)
	r := result{latency: time.Since(start), status: 200}
	if err != nil {
		r.status, r.err = 0, targetError(service, err)
	}
	return r
}

// TargetError is an AWS target's refusal of an attempt, as the record
// keeps it: "<service> <code>: <message>".
type TargetError struct {
	Service, Code, Message string
	err                    error
}

func (e *TargetError) Error() string {
	if e.Message == "" {
		return e.Service + " " + e.Code
	}
	return e.Service + " " + e.Code + ": " + e.Message
}

func (e *TargetError) Unwrap() error { return e.err }

// maxTargetMessage bounds the error message a record keeps.
const maxTargetMessage = 256

func targetError(service string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		return &TargetError{Service: service, Code: api.ErrorCode(), Message: clip(api.ErrorMessage(), maxTargetMessage), err: err}
	}
	return err // a timeout or a connection error: describe names it
}

// clip cuts s to at most n bytes, on a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// QueueURLOf is the URL of the queue a queue ARN names (SendMessage takes
// the URL; building it needs no sqs:GetQueueUrl call).
func QueueURLOf(a config.ARN) string {
	domain := "amazonaws.com"
	if a.Partition == "aws-cn" {
		domain = "amazonaws.com.cn"
	}
	return "https://sqs." + a.Region + "." + domain + "/" + a.Account + "/" + a.Resource
}

// TargetEncoding values: how a body travels to a target.
const (
	EncodingText   = "text"
	EncodingBase64 = message.EncodingBase64
)

// encodeBody is the body as text when SQS, a JSON string and the consumer
// can take it as it is (shared/message's rule: the characters SQS
// accepts), and its base64 otherwise.
func encodeBody(b []byte) (string, string) {
	if message.Text(b) {
		return string(b), EncodingText
	}
	return base64.StdEncoding.EncodeToString(b), EncodingBase64
}

// sqsTarget sends each event as one message: the body is the event's
// bytes (their base64, with attribute encoding=base64, when SQS would
// refuse them), and the attributes carry id, source, type, received_at,
// content_type and, on a replay, replay. A FIFO queue gets the lane's
// message group on an ordered lane (the key's group, as received), else the
// source,
// and the event id as its deduplication id (the replay's id appended on a
// replay, which SQS would otherwise drop as a copy within its 5-minute
// window).
type sqsTarget struct {
	api  SendMessageAPI
	url  string
	fifo bool
}

func (t sqsTarget) deliver(ctx context.Context, msg Message, timeout time.Duration) result {
	ev := message.Event{ID: msg.ID, Source: msg.Source, Type: msg.Type, ContentType: msg.ContentType, ReceivedAt: msg.ReceivedAt, Replay: msg.Replay}
	ev.Body, ev.Encoding = message.EncodeBody(msg.Body)
	body, attrs := ev.Encode()
	sqsAttrs, _ := sqsattr.ToSQS(attrs) // all strings: it cannot fail
	in := &sqs.SendMessageInput{QueueUrl: aws.String(t.url), MessageBody: aws.String(body), MessageAttributes: sqsAttrs}
	if t.fifo {
		dedupe := msg.ID
		if msg.Replay != "" {
			dedupe += ":" + msg.Replay
		}
		group := msg.Source
		if msg.Group != "" {
			group = msg.Group
		}
		in.MessageGroupId, in.MessageDeduplicationId = aws.String(group), aws.String(clip(dedupe, 128))
	}
	return call(ctx, timeout, "sqs", func(ctx context.Context) error {
		_, err := t.api.SendMessage(ctx, in)
		return err
	})
}

// EventSourcePrefix starts the Source of every event put on a bus:
// "hookfan.<source>".
const EventSourcePrefix = "hookfan."

// WrappedDetail is the Detail of an event whose body is not a JSON object
// (EventBridge takes only an object): the body as text or base64.
type WrappedDetail struct {
	Wrapped WrappedBody `json:"hookfan_wrapped"`
}

// WrappedBody is a body that does not travel as it is: in the Detail of a
// wrapped event, and as the body of a lambda envelope.
type WrappedBody struct {
	ContentType string `json:"content_type,omitempty"`
	Encoding    string `json:"encoding"` // EncodingText or EncodingBase64
	Body        string `json:"body"`
}

// eventDetail is the Detail of an event: the body itself when it is a
// JSON object, the WrappedDetail otherwise.
func eventDetail(msg Message) string {
	if jsonObject(msg.Body) {
		return string(msg.Body)
	}
	body, enc := encodeBody(msg.Body)
	b, _ := json.Marshal(WrappedDetail{Wrapped: WrappedBody{ContentType: msg.ContentType, Encoding: enc, Body: body}})
	return string(b)
}

// jsonObject reports whether b is one JSON object of valid UTF-8.
func jsonObject(b []byte) bool {
	s := strings.TrimLeft(string(b), " \t\r\n")
	return strings.HasPrefix(s, "{") && utf8.Valid(b) && json.Valid(b)
}

// eventBridgeTarget puts each event on the bus: Source hookfan.<source>,
// DetailType the event type, Detail the body (eventDetail), Time when
// ingest received it. An entry the bus refuses (FailedEntryCount) is a
// failed attempt with the entry's ErrorCode and ErrorMessage.
type eventBridgeTarget struct {
	api     PutEventsAPI
	bus     string
	tracing bool
}

func (t eventBridgeTarget) deliver(ctx context.Context, msg Message, timeout time.Duration) result {
	entry := ebtypes.PutEventsRequestEntry{
		EventBusName: aws.String(t.bus), Source: aws.String(EventSourcePrefix + msg.Source),
		DetailType: aws.String(msg.Type), Detail: aws.String(eventDetail(msg)), Time: aws.Time(msg.ReceivedAt),
	}
	if t.tracing && msg.TraceHeader != "" {
		entry.TraceHeader = aws.String(msg.TraceHeader)
	}
	return call(ctx, timeout, "eventbridge", func(ctx context.Context) error {
		out, err := t.api.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
		if err != nil {
			return err
		}
		if out.FailedEntryCount == 0 && (len(out.Entries) == 0 || out.Entries[0].ErrorCode == nil) {
			return nil
		}
		e := &TargetError{Service: "eventbridge", Code: "FailedEntry"}
		if len(out.Entries) > 0 {
			e.Code, e.Message = aws.ToString(out.Entries[0].ErrorCode), clip(aws.ToString(out.Entries[0].ErrorMessage), maxTargetMessage)
		}
		return e
	})
}

// LambdaEnvelope is the payload a lambda target is invoked with.
type LambdaEnvelope struct {
	ID          string `json:"id"`
	Source      string `json:"source"`
	Type        string `json:"type"`
	ReceivedAt  string `json:"received_at"` // message.ReceivedAtLayout
	Attempt     int    `json:"attempt"`
	Replay      string `json:"replay,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Encoding is EncodingText (Body is the provider's bytes as a string)
	// or EncodingBase64 (Body is their base64).
	Encoding string `json:"encoding"`
	Body     string `json:"body"`
}

// lambdaTarget invokes the function synchronously with the event's
// envelope. A function error (X-Amz-Function-Error) is a failed attempt
// with the error's type, a throttle too (retried no sooner than the
// Retry-After Lambda gives).
type lambdaTarget struct {
	api      InvokeAPI
	function string
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

func (t lambdaTarget) deliver(ctx context.Context, msg Message, timeout time.Duration) result {
	body, enc := encodeBody(msg.Body)
	payload, err := json.Marshal(LambdaEnvelope{
		ID: msg.ID, Source: msg.Source, Type: msg.Type, ReceivedAt: msg.ReceivedAt.UTC().Format(message.ReceivedAtLayout),
		Attempt: msg.Attempt, Replay: msg.Replay, ContentType: msg.ContentType, Encoding: enc, Body: body,
	})
	if err != nil {
		return result{err: fmt.Errorf("lambda envelope: %w", err)}
	}
	var retryAfter time.Duration
	r := call(ctx, timeout, "lambda", func(ctx context.Context) error {
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
			return &FunctionError{Kind: aws.ToString(out.FunctionError), Type: clip(fe.Type, maxTargetMessage), Message: clip(fe.Message, maxTargetMessage)}
		}
		return nil
	})
	r.retryAfter = retryAfter
	return r
}
