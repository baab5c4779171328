package delivery

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/message"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"
)

func TestParseMessage(t *testing.T) {
	good := sqsRecord("evt_1", 2)
	good.Attributes["SentTimestamp"] = "1764504000000"
	good.MessageAttributes[message.AttrReceivedAt] = events.SQSMessageAttribute{StringValue: ptr("2026-11-30T12:00:00.123Z")}
	got, err := ParseMessage(good)
	if err != nil {
		t.Fatal(err)
	}
	want := Message{
		MessageID: "msg-evt_1-2", ReceiptHandle: "rh-evt_1", ID: "evt_1", Source: "stripe", Type: "invoice.paid",
		ContentType: "application/json", ReceivedAt: time.Date(2026, 11, 30, 12, 0, 0, 123e6, time.UTC),
		Body: []byte(good.Body), Attempt: 2, SentAt: time.UnixMilli(1764504000000),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("ParseMessage (-want +got):\n%s", diff)
	}

	b64 := sqsRecord("evt_2", 1)
	b64.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: ptr("base64")}
	b64.Body = "AP8="
	if m, err := ParseMessage(b64); err != nil || string(m.Body) != "\x00\xff" {
		t.Errorf("base64 body = %q, %v; want the decoded bytes", m.Body, err)
	}
}

func TestParseMessageMalformed(t *testing.T) {
	set := func(name, v string) func(*events.SQSMessage) {
		return func(m *events.SQSMessage) {
			m.MessageAttributes[name] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
		}
	}
	drop := func(name string) func(*events.SQSMessage) {
		return func(m *events.SQSMessage) { delete(m.MessageAttributes, name) }
	}
	tests := []struct {
		name   string
		change func(*events.SQSMessage)
		want   string // in the error
	}{
		{"no id", drop(message.AttrID), "attribute id is missing"},
		{"empty id", set(message.AttrID, ""), "attribute id is missing"},
		{"id with a dot", set(message.AttrID, "a.b"), "attribute id is not"},
		{"id with a space", set(message.AttrID, "a b"), "attribute id is not"},
		{"id too long", set(message.AttrID, strings.Repeat("x", 257)), "attribute id is not"},
		{"no source", drop(message.AttrSource), "attribute source is missing"},
		{"bad source", set(message.AttrSource, "Stripe!"), "attribute source is not"},
		{"no type", drop(message.AttrType), "attribute type is missing"},
		{"type with a newline", set(message.AttrType, "a\r\nx-injected: 1"), "attribute type is not"},
		{"no content type", drop(message.AttrContentType), "attribute content_type is missing"},
		{"no received_at", drop(message.AttrReceivedAt), "attribute received_at is missing"},
		{"bad received_at", set(message.AttrReceivedAt, "yesterday"), "attribute received_at is not"},
		{"unknown encoding", set(message.AttrEncoding, "gzip"), "attribute encoding is \"gzip\""},
		{"bad base64", func(m *events.SQSMessage) { set(message.AttrEncoding, "base64")(m); m.Body = "!!" }, "body is not the standard base64"},
		{"no receive count", func(m *events.SQSMessage) { delete(m.Attributes, "ApproximateReceiveCount") }, "ApproximateReceiveCount"},
		{"zero receive count", func(m *events.SQSMessage) { m.Attributes["ApproximateReceiveCount"] = "0" }, "ApproximateReceiveCount"},
		{"binary attribute", func(m *events.SQSMessage) {
			m.MessageAttributes[message.AttrID] = events.SQSMessageAttribute{BinaryValue: []byte("x"), DataType: "Binary"}
		}, `attribute id has type "Binary"; want String`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := sqsRecord("evt_1", 1)
			tt.change(&m)
			_, err := ParseMessage(m)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error = %v, want %v", err, ErrMalformed)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %q, want it to mention %q", err, tt.want)
			}
		})
	}
	_, err := ParseMessage(events.SQSMessage{MessageId: "x"})
	for _, want := range []string{"id", "source", "type", "content_type", "received_at", "ApproximateReceiveCount"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("empty record error %v does not report %s", err, want)
		}
	}
}

// FuzzParseMessage: any record either parses into a message whose header
// fields are safe to send, or fails with ErrMalformed; it never panics.
func FuzzParseMessage(f *testing.F) {
	f.Add("evt_1", "stripe", "invoice.paid", "2026-11-30T12:00:00.000Z", "application/json", "", `{"a":1}`, "1")
	f.Add("gh-1", "github", "push", "2026-11-30T12:00:00Z", "application/json", "base64", "AP8=", "3")
	f.Add("a.b", "Stripe", "x\r\ny", "not a time", "", "gzip", "!!", "-1")
	f.Add("", "", "", "", "", "", "", "")
	f.Fuzz(func(t *testing.T, id, source, typ, receivedAt, contentType, encoding, body, count string) {
		attrs := map[string]events.SQSMessageAttribute{}
		for name, v := range map[string]string{message.AttrID: id, message.AttrSource: source, message.AttrType: typ, message.AttrReceivedAt: receivedAt, message.AttrContentType: contentType, message.AttrEncoding: encoding} {
			if v != "" {
				attrs[name] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
			}
		}
		m, err := ParseMessage(events.SQSMessage{MessageId: "m", Body: body, MessageAttributes: attrs, Attributes: map[string]string{"ApproximateReceiveCount": count}})
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if m.Attempt < 1 || m.ID == "" || strings.ContainsAny(m.ID, ". \r\n") {
			t.Fatalf("accepted attempt %d id %q", m.Attempt, m.ID)
		}
		for _, h := range []string{m.ID, m.Source, m.Type, m.ContentType} {
			if !utf8.ValidString(h) || strings.ContainsAny(h, "\r\n\x00") {
				t.Fatalf("accepted a header value %q", h)
			}
		}
		if encoding == "" && string(m.Body) != body {
			t.Fatalf("body changed without an encoding")
		}
	})
}
