package delivery

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
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

// ErrMalformed means a record is not a Hookfan message: an attribute is
// missing or has a bad value, or the body does not decode
// (message.ErrMalformed).
var ErrMalformed = message.ErrMalformed

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
	// Paced is how often the lane's rate limit deferred the event before
	// this receive (AttrPaced); 0 when never.
	Paced int
	// SentAt is when SQS accepted the message (zero if unknown); queue
	// retention counts from it.
	SentAt time.Time
	// Replay is the id of the operator's replay that sent this message
	// ("" for an event as ingest published it).
	Replay string
	// Reconciled marks an event a reconciliation run brought in
	// (message.AttrReconciled).
	Reconciled bool
	// Group is the SQS FIFO message group the record was received in (an
	// ordered lane's key group); "" on a standard lane.
	Group string
	// TraceHeader is the X-Ray trace header SQS kept with the message
	// (AWSTraceHeader; "" without tracing).
	TraceHeader string
}

// ParseMessage reads an SQS record written by ingest (SNS raw delivery),
// a replay or the deliverer itself, through the message codec
// (message.Decode), and the SQS system attributes it needs. Every problem
// is reported, joined, and the error matches ErrMalformed.
func ParseMessage(r events.SQSMessage) (Message, error) {
	m := Message{MessageID: r.MessageId, ReceiptHandle: r.ReceiptHandle, Group: r.Attributes[MessageGroupIDAttribute]}
	ev, err := message.Decode(r.Body, sqsattr.FromLambda(r.MessageAttributes))
	problems := message.Problems(err)
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	m.ID, m.Source, m.Type, m.ContentType, m.ReceivedAt, m.Replay, m.Paced = ev.ID, ev.Source, ev.Type, ev.ContentType, ev.ReceivedAt, ev.Replay, ev.Paced
	m.Reconciled = ev.Reconciled

	switch ev.Encoding {
	case message.Stored:
		ref, err := payload.ParseReference(ev.Body)
		if err != nil {
			bad("body is not the payload reference its %s attribute announces: %v", message.AttrPayload, err)
		}
		m.Ref = &ref
	default:
		b, err := ev.Bytes()
		problems = append(problems, message.Problems(err)...)
		m.Body = b
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
	if a := ev.Attempted; a != (message.Attempted{}) && (m.SentAt.IsZero() || m.SentAt.Sub(a.At).Abs() <= CarryWindow) {
		m.Carried = a.Attempts
		m.Attempt += a.Attempts
	}
	// Otherwise the message was sent again later than the copy that
	// carried the count (a redrive from the DLQ gives a new message, with
	// a new SentTimestamp): it starts a full schedule, as every redriven
	// message does.

	if len(problems) > 0 {
		return m, &message.DecodeError{Problems: problems}
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
	return message.Attempted{Attempts: attempts, At: sentAt}.String()
}
