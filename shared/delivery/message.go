package delivery

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"

	"github.com/aws/aws-lambda-go/events"
)

// SQS system attributes read from each record.
const (
	sqsReceiveCount = "ApproximateReceiveCount"
	sqsSentAt       = "SentTimestamp"
	// sqsTraceHeader carries the X-Ray trace header SNS passed on from the
	// publisher (ingest).
	sqsTraceHeader = "AWSTraceHeader"
)

// Limits on attribute values. They keep headers and the record key sane.
const (
	maxIDLen          = 256
	maxTypeLen        = 256
	maxContentTypeLen = 256
	maxSourceLen      = 64
)

// ErrMalformed means a record is not a Hookfan message: an attribute is
// missing or has a bad value, or the body does not decode.
var ErrMalformed = errors.New("malformed message")

// Message is one event to deliver, parsed from an SQS record.
type Message struct {
	// MessageID and ReceiptHandle identify the SQS message.
	MessageID     string
	ReceiptHandle string
	// ID is the event id, sent as webhook-id.
	ID          string
	Source      string
	Type        string
	ContentType string
	ReceivedAt  time.Time
	// Body is the provider's exact bytes; nil while Ref names them in S3.
	Body []byte
	// Ref, when set, is where the body is (a large payload): the deliver
	// function reads it before anything else.
	Ref *payload.Reference
	// Attempt is the attempt this receive makes, 1 on the first: SQS's
	// ApproximateReceiveCount, plus Carried.
	Attempt int
	// Carried is the attempts an earlier message of the event made before
	// a paused lane held it and sent this one as a copy (AttrAttempted);
	// 0 for a message as ingest, a redrive or a replay sent it.
	Carried int
	// SentAt is when SQS accepted the message (zero if unknown); queue
	// retention counts from it.
	SentAt time.Time
	// Replay is the id of the operator's replay that sent this message
	// ("" for an event as ingest published it).
	Replay string
	// Group is the SQS FIFO message group the record was received in (an
	// ordered lane's key group); "" on a standard lane.
	Group string
	// TraceHeader is the X-Ray trace header SQS kept with the message
	// (AWSTraceHeader; "" without tracing).
	TraceHeader string
}

// ParseMessage reads an SQS record written by ingest (SNS raw delivery).
// Every problem is reported, joined, and the error matches ErrMalformed.
func ParseMessage(r events.SQSMessage) (Message, error) {
	m := Message{MessageID: r.MessageId, ReceiptHandle: r.ReceiptHandle, Group: r.Attributes[MessageGroupIDAttribute]}
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	attr := func(name string) (string, bool) {
		a, ok := r.MessageAttributes[name]
		if !ok || a.StringValue == nil {
			return "", false
		}
		return *a.StringValue, true
	}
	required := func(name string) string {
		v, ok := attr(name)
		if !ok || v == "" {
			bad("attribute %s is missing", name)
		}
		return v
	}

	m.ID = required(message.AttrID)
	if m.ID != "" && !validID(m.ID) {
		bad("attribute %s is not 1 to %d visible ASCII characters without '.'", message.AttrID, maxIDLen)
	}
	m.Source = required(message.AttrSource)
	if m.Source != "" && !validSource(m.Source) {
		bad("attribute %s is not 1 to %d lowercase letters, digits or hyphens", message.AttrSource, maxSourceLen)
	}
	m.Type = required(message.AttrType)
	if m.Type != "" && !validHeaderText(m.Type, maxTypeLen) {
		bad("attribute %s is not 1 to %d bytes of UTF-8 text without control characters", message.AttrType, maxTypeLen)
	}
	m.ContentType = required(message.AttrContentType)
	if m.ContentType != "" && !validHeaderText(m.ContentType, maxContentTypeLen) {
		bad("attribute %s is not 1 to %d bytes of UTF-8 text without control characters", message.AttrContentType, maxContentTypeLen)
	}
	if v := required(message.AttrReceivedAt); v != "" {
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			bad("attribute %s is not an RFC 3339 time", message.AttrReceivedAt)
		}
		m.ReceivedAt = t
	}

	if v, ok := attr(message.AttrReplay); ok {
		if !message.ValidReplayID(v) {
			bad("attribute %s is not a replay id (%s and 1 to 60 letters, digits, '-' or '_')", message.AttrReplay, message.ReplayIDPrefix)
		}
		m.Replay = v
	}

	pl, _ := attr(message.AttrPayload)
	enc, _ := attr(message.AttrEncoding)
	switch {
	case pl == message.PayloadS3 && enc == "":
		ref, err := payload.ParseReference(r.Body)
		if err != nil {
			bad("body is not the payload reference its %s attribute announces: %v", message.AttrPayload, err)
		}
		m.Ref = &ref
	case pl != "":
		bad("attribute %s is %q with encoding %q; want %s without an encoding", message.AttrPayload, truncate(pl, 32), truncate(enc, 32), message.PayloadS3)
	}
	switch {
	case pl != "":
	case enc == "":
		m.Body = []byte(r.Body)
	case enc == message.EncodingBase64:
		b, err := base64.StdEncoding.DecodeString(r.Body)
		if err != nil {
			bad("body is not the standard base64 its %s attribute announces", message.AttrEncoding)
		}
		m.Body = b
	default:
		bad("attribute %s is %q; want base64 or none", message.AttrEncoding, truncate(enc, 32))
	}

	n, err := strconv.Atoi(r.Attributes[sqsReceiveCount])
	if err != nil || n < 1 {
		bad("SQS attribute %s is not a positive whole number", sqsReceiveCount)
	}
	m.Attempt = n
	m.TraceHeader = r.Attributes[sqsTraceHeader]
	if ms, err := strconv.ParseInt(r.Attributes[sqsSentAt], 10, 64); err == nil && ms > 0 {
		m.SentAt = time.UnixMilli(ms)
	}
	if v, ok := attr(message.AttrAttempted); ok {
		carried, at, ok := parseAttempted(v)
		switch {
		case !ok:
			bad("attribute %s is not <attempts>@<Unix milliseconds>", message.AttrAttempted)
		case m.SentAt.IsZero() || m.SentAt.Sub(at).Abs() <= CarryWindow:
			m.Carried = carried
			m.Attempt += carried
		}
		// Otherwise the message was sent again later than the copy that
		// carried the count (a redrive from the DLQ gives a new message,
		// with a new SentTimestamp): it starts a full schedule, as every
		// redriven message does.
	}

	if len(problems) > 0 {
		return m, fmt.Errorf("%w: %w", ErrMalformed, errors.Join(problems...))
	}
	return m, nil
}

// CarryWindow is how far a message's SentTimestamp may lie from the time
// its AttrAttempted names for the count to be its own: SQS stamps a copy
// as the deliverer sends it, so the two differ by the send's latency and
// the clocks' difference.
const CarryWindow = 2 * time.Minute

// FormatAttempted renders an AttrAttempted value.
func FormatAttempted(attempts int, sentAt time.Time) string {
	return strconv.Itoa(attempts) + "@" + strconv.FormatInt(sentAt.UnixMilli(), 10)
}

func parseAttempted(v string) (attempts int, at time.Time, ok bool) {
	n, ms, found := strings.Cut(v, "@")
	if !found || !isDigits(n) || !isDigits(ms) || len(n) > 4 || len(ms) > 15 {
		return 0, time.Time{}, false
	}
	attempts, _ = strconv.Atoi(n)
	msv, _ := strconv.ParseInt(ms, 10, 64)
	return attempts, time.UnixMilli(msv), true
}

// validID accepts visible ASCII without '.': the id is a header value and
// part of the signed content "{id}.{timestamp}.{body}".
func validID(s string) bool {
	if len(s) > maxIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '.' {
			return false
		}
	}
	return true
}

func validSource(s string) bool {
	if len(s) > maxSourceLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validHeaderText accepts UTF-8 without control characters, so the value
// can travel as a header (ingest publishes nothing else).
func validHeaderText(s string, limit int) bool {
	if len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
