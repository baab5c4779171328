package sender

import (
	"context"
	"encoding/base64"
	"errors"
	"time"
	"unicode/utf8"

	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/message"
)

// What the AWS targets share (docs/configuration.md#aws-targets): a lane
// whose destination is an AWS target makes each attempt with one API call
// instead of a POST, and turns its answer into the same Result. Every
// failure is retried on the lane's schedule, as every HTTP failure but
// 410 is: an access denied or a missing queue is a policy or a resource
// the owner fixes (the lane's pause rule stops spending attempts
// meanwhile), and an event the target refuses for good (too large) fails
// each attempt and ends in the DLQ with its error.

// Call runs one API call within timeout and turns its outcome into a
// result: 200 on success, the error otherwise (its code and message only:
// the SDK's wrapping names the request id and the endpoint).
func Call(ctx context.Context, timeout time.Duration, service string, f func(ctx context.Context) error) Result {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return Timed(ctx, service, f)
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

// MaxErrorMessage bounds the error message a record keeps of a target's
// answer.
const MaxErrorMessage = 256

func targetError(service string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		return &TargetError{Service: service, Code: api.ErrorCode(), Message: Clip(api.ErrorMessage(), MaxErrorMessage), err: err}
	}
	return err // a timeout or a connection error: Describe names it
}

// Clip cuts s to at most n bytes, on a rune boundary.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// Encodings: how a body travels to a target.
const (
	EncodingText   = "text"
	EncodingBase64 = message.EncodingBase64
)

// EncodeBody is the body as text when SQS, a JSON string and the consumer
// can take it as it is (shared/message's rule: the characters SQS
// accepts), and its base64 otherwise.
func EncodeBody(b []byte) (string, string) {
	if message.Text(b) {
		return string(b), EncodingText
	}
	return base64.StdEncoding.EncodeToString(b), EncodingBase64
}
