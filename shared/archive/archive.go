// Package archive is the event archive's one format and layout, shared by
// what writes it and what reads it.
//
// Every event ingest publishes is kept in S3 as the SNS notification
// envelope an SNS subscription with raw message delivery off produces: its
// Message is the body exactly as published to the destinations' queues, its
// MessageAttributes are every attribute, its Timestamp is when SNS accepted
// it. Deployed, an SNS subscription to Amazon Data Firehose writes them;
// locally, devstack's archiver drains a non-raw SQS subscription into the
// emulator's S3. Both write the same objects:
//
//   - one record per line (newline-delimited JSON), gzip-compressed;
//   - keys partitioned by the UTC hour the record reached the writer:
//     events/year=2026/month=05/day=01/hour=13/<writer>-<time>-<id>.gz
//     (Firehose names an object after the hour of its oldest record).
//
// Reader serves both: it lists the hours a query covers, reads their
// objects and yields each matching event once.
//
// A body too large for one SNS message is published, and so archived, as
// its payload.Reference. Its bytes are in the archive bucket too, under the
// reference's key (payload.Prefix, outside EventsPrefix): ingest writes
// them there beside the payload bucket's object (payload.S3 with Archive
// set), so the archive keeps every body for its retention, and a replay or
// a late redrive finds it after the payload bucket's lifecycle.
package archive

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/hookfan/hookfan/shared/message"
)

// Key layout.
const (
	// EventsPrefix holds the archived events.
	EventsPrefix = "events/"
	// ErrorsPrefix holds what Firehose could not write as events.
	ErrorsPrefix = "errors/"
	// FirehosePrefix is the Firehose S3 destination's prefix: it renders as
	// PartitionPrefix of the arrival time (Firehose's timestamp namespace is UTC).
	FirehosePrefix = EventsPrefix + "year=!{timestamp:yyyy}/month=!{timestamp:MM}/day=!{timestamp:dd}/hour=!{timestamp:HH}/"
	// FirehoseErrorPrefix is where Firehose puts records it failed to
	// process, by error type and day. Firehose requires one whenever the
	// prefix uses expressions.
	FirehoseErrorPrefix = ErrorsPrefix + "!{firehose:error-output-type}/year=!{timestamp:yyyy}/month=!{timestamp:MM}/day=!{timestamp:dd}/"
	// ObjectSuffix ends every object's key: objects are gzip.
	ObjectSuffix = ".gz"
)

// MaxBuffering is the longest a writer may hold a record before writing
// it (Firehose's buffer interval ceiling, 900 s). An object is partitioned
// by its oldest record, so a record lies in the partition of its arrival
// hour or an earlier one, by at most this much; readers widen their window
// by it.
const MaxBuffering = 15 * time.Minute

// MaxRecordBytes bounds one archived record: an SNS message (256 KiB) as a
// JSON string, where escaping can make each byte six, plus its attributes.
const MaxRecordBytes = 6*256*1024 + 64*1024

// TypeNotification is the envelope Type of a published message.
const TypeNotification = "Notification"

// ErrMalformed means an archived record is not a Hookfan event envelope.
var ErrMalformed = errors.New("malformed archive record")

// PartitionPrefix is the key prefix of the hour t falls in (UTC).
func PartitionPrefix(t time.Time) string {
	t = t.UTC()
	return fmt.Sprintf("%syear=%04d/month=%02d/day=%02d/hour=%02d/", EventsPrefix, t.Year(), int(t.Month()), t.Day(), t.Hour())
}

// ObjectKey names an object a writer produces at t: its partition, then
// the writer's name, the time and a unique id, as Firehose names them.
func ObjectKey(writer string, t time.Time, id string) string {
	return PartitionPrefix(t) + writer + "-1-" + t.UTC().Format("2006-01-02-15-04-05") + "-" + id + ObjectSuffix
}

// Envelope is one archived record: the SNS notification JSON (raw message
// delivery off). Fields SNS adds that the archive does not need (the
// signature, the unsubscribe URL) are ignored when read.
type Envelope struct {
	Type              string               `json:"Type"`
	MessageID         string               `json:"MessageId"`
	TopicARN          string               `json:"TopicArn,omitempty"`
	Message           string               `json:"Message"`
	Timestamp         string               `json:"Timestamp"`
	MessageAttributes map[string]Attribute `json:"MessageAttributes,omitempty"`
}

// Attribute is a message attribute as the envelope carries it. Binary
// values are base64 in Value.
type Attribute = message.Attribute

// Event is an archived event, ready to be sent to a destination's queue
// again exactly as SNS's raw delivery sent it the first time.
type Event struct {
	ID         string
	Source     string
	Type       string
	ReceivedAt time.Time
	// Message is the SQS message body raw delivery gave the destinations:
	// the provider's bytes, or their base64 with attribute encoding=base64.
	Message string
	// Attributes are every message attribute as published.
	Attributes map[string]Attribute
	// SNSMessageID and PublishedAt identify the publish this record is of.
	SNSMessageID string
	PublishedAt  time.Time
}

// ParseRecord reads one archived record. Every problem is reported, joined,
// and the error matches ErrMalformed.
func ParseRecord(record []byte) (Event, error) {
	var env Envelope
	if err := json.Unmarshal(record, &env); err != nil {
		return Event{}, fmt.Errorf("%w: not an SNS notification envelope: %w", ErrMalformed, err)
	}
	return env.Event()
}

// Event checks the envelope and returns its event. Its message is read by
// the message codec (message.Decode), whose checks are the deliverer's; the
// body is not decoded.
func (env Envelope) Event() (Event, error) {
	var problems []error
	bad := func(format string, args ...any) { problems = append(problems, fmt.Errorf(format, args...)) }
	if env.Type != TypeNotification {
		bad("Type is %q; want %q", truncate(env.Type, 32), TypeNotification)
	}
	dec, err := message.Decode(env.Message, env.MessageAttributes)
	problems = append(problems, message.Problems(err)...)
	ev := Event{ID: dec.ID, Source: dec.Source, Type: dec.Type, ReceivedAt: dec.ReceivedAt, Message: env.Message,
		Attributes: env.MessageAttributes, SNSMessageID: env.MessageID}
	if env.Timestamp != "" {
		t, err := time.Parse(time.RFC3339Nano, env.Timestamp)
		if err != nil {
			bad("Timestamp %q is not an RFC 3339 time", truncate(env.Timestamp, 64))
		}
		ev.PublishedAt = t
	}
	if len(problems) > 0 {
		return Event{}, fmt.Errorf("%w: %w", ErrMalformed, errors.Join(problems...))
	}
	return ev, nil
}

// Decode reads the event's message through the message codec
// (message.Decode): what could be read, and the codec's error.
func (e Event) Decode() (message.Event, error) { return message.Decode(e.Message, e.Attributes) }

// Envelope returns the record an event is archived as.
func (e Event) Envelope() Envelope {
	return Envelope{
		Type:              TypeNotification,
		MessageID:         e.SNSMessageID,
		Message:           e.Message,
		Timestamp:         e.PublishedAt.UTC().Format(message.ReceivedAtLayout),
		MessageAttributes: e.Attributes,
	}
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
