// Package eventbridgetarget is the sender of an eventbridge destination:
// each event is put on the bus the destination's target names.
package eventbridgetarget

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// API is the part of the EventBridge client an eventbridge target uses.
type API interface {
	PutEvents(ctx context.Context, in *eventbridge.PutEventsInput, optFns ...func(*eventbridge.Options)) (*eventbridge.PutEventsOutput, error)
}

// NewClient builds, on cfg, the EventBridge client a target calls
// (shared/delivery gives cfg the target's region).
func NewClient(cfg aws.Config) API { return eventbridge.NewFromConfig(cfg) }

// EventSourcePrefix starts the Source of every event put on a bus:
// "hookfan.<source>".
const EventSourcePrefix = "hookfan."

// WrappedDetail is the Detail of an event whose body is not a JSON object
// (EventBridge takes only an object): the body as text or base64.
type WrappedDetail struct {
	Wrapped WrappedBody `json:"hookfan_wrapped"`
}

// WrappedBody is a body that does not travel as it is.
type WrappedBody struct {
	ContentType string `json:"content_type,omitempty"`
	Encoding    string `json:"encoding"` // sender.EncodingText or sender.EncodingBase64
	Body        string `json:"body"`
}

// Sender puts each event on the bus: Source hookfan.<source>, DetailType
// the event type, Detail the body (Detail), Time when ingest received it.
// An entry the bus refuses (FailedEntryCount) is a failed attempt with the
// entry's ErrorCode and ErrorMessage. With tracing, the event's X-Ray trace
// header goes on to the bus, as an https lane sends traceparent.
type Sender struct {
	api     API
	bus     string
	tracing bool
}

// New is d's sender on api.
func New(api API, d config.Destination, tracing bool) (sender.Sender, error) {
	if _, err := config.ParseARN(d.Target); err != nil {
		return nil, fmt.Errorf("target: %w", err)
	}
	if api == nil {
		return nil, errors.New("the destination is of type eventbridge but no EventBridge client was given")
	}
	return Sender{api: api, bus: d.Target, tracing: tracing}, nil
}

// Prepare has nothing to read: the lane role's credentials sign the call.
func (Sender) Prepare(context.Context) error { return nil }

// Detail is the Detail of an event: the body itself when it is a JSON
// object, the WrappedDetail otherwise.
func Detail(d sender.Delivery) string {
	if jsonObject(d.Body) {
		return string(d.Body)
	}
	body, enc := sender.EncodeBody(d.Body)
	b, _ := json.Marshal(WrappedDetail{Wrapped: WrappedBody{ContentType: d.ContentType, Encoding: enc, Body: body}})
	return string(b)
}

// jsonObject reports whether b is one JSON object of valid UTF-8.
func jsonObject(b []byte) bool {
	s := strings.TrimLeft(string(b), " \t\r\n")
	return strings.HasPrefix(s, "{") && utf8.Valid(b) && json.Valid(b)
}

// entry is d as the bus gets it, alone or in a batch.
func (t Sender) entry(d sender.Delivery) ebtypes.PutEventsRequestEntry {
	entry := ebtypes.PutEventsRequestEntry{
		EventBusName: aws.String(t.bus), Source: aws.String(EventSourcePrefix + d.Source),
		DetailType: aws.String(d.Type), Detail: aws.String(Detail(d)), Time: aws.Time(d.ReceivedAt),
	}
	if t.tracing && d.TraceHeader != "" {
		entry.TraceHeader = aws.String(d.TraceHeader)
	}
	return entry
}

// Send puts the event.
func (t Sender) Send(ctx context.Context, d sender.Delivery) sender.Result {
	entry := t.entry(d)
	return sender.Call(ctx, d.Timeout, "eventbridge", func(ctx context.Context) error {
		out, err := t.api.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: []ebtypes.PutEventsRequestEntry{entry}})
		if err != nil {
			return err
		}
		if out.FailedEntryCount == 0 && (len(out.Entries) == 0 || out.Entries[0].ErrorCode == nil) {
			return nil
		}
		e := &sender.TargetError{Service: "eventbridge", Code: "FailedEntry"}
		if len(out.Entries) > 0 {
			e.Code, e.Message = aws.ToString(out.Entries[0].ErrorCode), sender.Clip(aws.ToString(out.Entries[0].ErrorMessage), sender.MaxErrorMessage)
		}
		return e
	})
}

// What one PutEvents takes: 10 entries, and 256 KiB of entries in all
// (as EntrySize counts them).
const (
	MaxBatchEntries = 10
	MaxBatchBytes   = 256 * 1024
)

// EntrySize is an entry's size as EventBridge counts it against a call's
// limit: 14 bytes for its Time, and the bytes of its Source, DetailType
// and Detail (it sets no Resources).
func EntrySize(e ebtypes.PutEventsRequestEntry) int {
	n := len(aws.ToString(e.Source)) + len(aws.ToString(e.DetailType)) + len(aws.ToString(e.Detail))
	if e.Time != nil {
		n += 14
	}
	return n
}

// SendBatch puts the events with PutEvents, as few calls as the API's
// limits allow (MaxBatchEntries, MaxBatchBytes), each entry the one Send
// puts, and gives each event its own outcome from the answer's entry at
// its position: 200 with an EventId, the entry's ErrorCode and
// ErrorMessage when the bus refused it (FailedEntryCount counts those),
// the call's error for every event of a call that failed. A bus keeps no
// order, so the calls run up to sender.MaxCallsInFlight at once.
func (t Sender) SendBatch(ctx context.Context, ds []sender.Delivery) []sender.Result {
	if len(ds) == 0 {
		return nil
	}
	entries := make([]ebtypes.PutEventsRequestEntry, len(ds))
	sizes := make([]int, len(ds))
	for i, d := range ds {
		entries[i] = t.entry(d)
		sizes[i] = EntrySize(entries[i])
	}
	chunks := sender.Chunks(sizes, MaxBatchEntries, MaxBatchBytes)
	return sender.RunBatch(ctx, ds[0].Timeout, len(ds), chunks, false, nil, func(ctx context.Context, idx []int, results []sender.Result) {
		in := &eventbridge.PutEventsInput{}
		for _, i := range idx {
			in.Entries = append(in.Entries, entries[i])
		}
		var out *eventbridge.PutEventsOutput
		call := sender.Timed(ctx, "eventbridge", func(ctx context.Context) (err error) {
			out, err = t.api.PutEvents(ctx, in)
			return err
		})
		for k, i := range idx {
			switch {
			case call.Err != nil:
				results[i] = call
			case k >= len(out.Entries):
				results[i] = sender.EntryFailed("eventbridge", "FailedEntry", "the answer has no entry for the event", call.Latency)
			case out.Entries[k].ErrorCode != nil:
				results[i] = sender.EntryFailed("eventbridge", aws.ToString(out.Entries[k].ErrorCode), aws.ToString(out.Entries[k].ErrorMessage), call.Latency)
			default:
				results[i] = call
			}
		}
	})
}

var _ sender.BatchSender = Sender{}
