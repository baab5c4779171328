package message_test

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"
)

// fixture is a message as SNS's notification JSON carries it (the archive
// keeps it so): the body and the attributes.
type fixture struct {
	Message           string             `json:"Message"`
	MessageAttributes message.Attributes `json:"MessageAttributes"`
}

func readFixture(t *testing.T, name string) fixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "messages", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fixture
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return f
}

// TestEventRoundTrip: each fixture, one per shape of message, decodes to
// the event it stands for, its body to the provider's bytes, and encodes
// back to exactly the fixture; and the event, encoded from scratch as a
// writer does, gives the fixture too.
func TestEventRoundTrip(t *testing.T) {
	at := time.Date(2026, 5, 1, 13, 0, 0, 123e6, time.UTC)
	base := message.Event{ID: "evt_5f1c2a9e0b7d4c3a8e6f1b2d3c4a5e6f", Source: "stripe", Type: "invoice.paid", ContentType: "application/json", ReceivedAt: at}
	with := func(f func(*message.Event)) message.Event {
		e := base
		f(&e)
		return e
	}
	binary := []byte("\x00\xff\xfe\x01 png-ish \x89PNG\r\n\x1a\n")
	tests := []struct {
		name  string
		event message.Event // without its Body, which is the fixture's
		bytes []byte        // the provider's bytes; nil for a stored body
	}{
		{"json", base, []byte(`{"id":"evt_1","type":"invoice.paid","data":{"object":{"id":"in_1","amount":1200}}}`)},
		{"text", with(func(e *message.Event) {
			e.Source, e.Type, e.ContentType = "hmac-text", "note.created", "text/plain; charset=utf-8"
		}), []byte("caf\u00e9 au lait\r\n\ttab")},
		{"binary", with(func(e *message.Event) {
			e.Source, e.Type, e.ContentType, e.Encoding = "uploads", "file.uploaded", "application/octet-stream", message.Base64
		}), binary},
		{"stored", with(func(e *message.Event) { e.Encoding = message.Stored }), nil},
		{"ordered", with(func(e *message.Event) {
			e.Type, e.OrderingKey = "customer.updated", "body:data.object.customer"
		}), []byte(`{"id":"evt_2","type":"customer.updated","data":{"object":{"customer":"cus_9"}}}`)},
		{"replay", with(func(e *message.Event) { e.Replay = "rpl_20260501T130000Z_a1b2c3" }), []byte(`{"id":"evt_1","type":"invoice.paid"}`)},
		{"held", with(func(e *message.Event) {
			e.Attempted = message.Attempted{Attempts: 3, At: time.UnixMilli(1777640400000)}
		}), []byte(`{"id":"evt_1","type":"invoice.paid"}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := readFixture(t, tt.name)
			got, err := message.Decode(f.Message, f.MessageAttributes)
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			want := tt.event
			want.Body = f.Message
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Decode (-want +got):\n%s", diff)
			}
			b, err := got.Bytes()
			switch {
			case tt.bytes == nil:
				if !errors.Is(err, message.ErrStored) {
					t.Errorf("Bytes of a stored body: %v, want ErrStored", err)
				}
				if _, err := payload.ParseReference(got.Body); err != nil {
					t.Errorf("the stored body is not a payload reference: %v", err)
				}
			case err != nil || string(b) != string(tt.bytes):
				t.Errorf("Bytes = %q, %v; want %q", b, err, tt.bytes)
			}

			body, attrs := got.Encode()
			if body != f.Message {
				t.Errorf("Encode body = %q, want %q", body, f.Message)
			}
			if diff := cmp.Diff(f.MessageAttributes, attrs); diff != "" {
				t.Errorf("Encode attributes (-fixture +got):\n%s", diff)
			}
			if n := attrs.Size(); n <= 0 || n > 1024 {
				t.Errorf("Size = %d", n)
			}

			// A writer's way: the provider's bytes through EncodeBody.
			if tt.bytes != nil {
				e := tt.event
				e.Body, e.Encoding = message.EncodeBody(tt.bytes)
				if e.Encoding != tt.event.Encoding {
					t.Errorf("EncodeBody chose encoding %d, want %d", e.Encoding, tt.event.Encoding)
				}
				body, attrs := e.Encode()
				if body != f.Message || !cmp.Equal(attrs, f.MessageAttributes) {
					t.Errorf("encoded from the bytes: %q %v; want the fixture", body, attrs)
				}
			}
		})
	}
}

// TestDecodeKeepsExtraAttributes: attributes the codec does not know are
// carried through, of any of SQS's data types.
func TestDecodeKeepsExtraAttributes(t *testing.T) {
	f := readFixture(t, "json")
	f.MessageAttributes["n"] = message.Attribute{Type: "Number", Value: "42"}
	f.MessageAttributes["b"] = message.Attribute{Type: "Binary.gzip", Value: "aGk="}
	f.MessageAttributes["s"] = message.Attribute{Type: "String.custom", Value: "x"}
	ev, err := message.Decode(f.Message, f.MessageAttributes)
	if err != nil {
		t.Fatal(err)
	}
	want := message.Attributes{"n": f.MessageAttributes["n"], "b": f.MessageAttributes["b"], "s": f.MessageAttributes["s"]}
	if diff := cmp.Diff(want, ev.Extra); diff != "" {
		t.Errorf("Extra (-want +got):\n%s", diff)
	}
	if _, attrs := ev.Encode(); !cmp.Equal(attrs, f.MessageAttributes) {
		t.Errorf("Encode dropped or changed an extra attribute: %v", attrs)
	}
}

// TestDecodeBad: each bad input gets its stable error, which matches
// ErrMalformed and is a *DecodeError; what could be read is returned.
func TestDecodeBad(t *testing.T) {
	str := func(v string) message.Attribute { return message.Attribute{Type: "String", Value: v} }
	set := func(name string, a message.Attribute) func(message.Attributes) {
		return func(m message.Attributes) { m[name] = a }
	}
	drop := func(name string) func(message.Attributes) { return func(m message.Attributes) { delete(m, name) } }
	tests := []struct {
		name   string
		change func(message.Attributes)
		want   string
	}{
		{"no id", drop("id"), "attribute id is missing"},
		{"empty id", set("id", str("")), "attribute id is missing"},
		{"binary id", set("id", message.Attribute{Type: "Binary", Value: "ZXZ0"}), `attribute id has type "Binary"; want String`},
		{"id of no type", set("id", message.Attribute{Value: "evt_1"}), `attribute id has type ""; want String`},
		{"id with a dot", set("id", str("evt.1")), "attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"id with a space", set("id", str("evt 1")), "attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"id with a control character", set("id", str("evt\x00")), "attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"id not ASCII", set("id", str("évt")), "attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"id oversized", set("id", str(strings.Repeat("e", 257))), "attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"no source", drop("source"), "attribute source is missing"},
		{"source in capitals", set("source", str("Stripe")), "attribute source is not 1 to 64 lowercase letters, digits or hyphens"},
		{"source oversized", set("source", str(strings.Repeat("s", 65))), "attribute source is not 1 to 64 lowercase letters, digits or hyphens"},
		{"no type", drop("type"), "attribute type is missing"},
		{"type with a header injection", set("type", str("a\r\nx-injected: 1")), "attribute type is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"type of invalid UTF-8", set("type", str("invoice.\xff")), "attribute type is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"type oversized", set("type", str(strings.Repeat("t", 257))), "attribute type is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"no received_at", drop("received_at"), "attribute received_at is missing"},
		{"received_at not a time", set("received_at", str("yesterday")), "attribute received_at is not an RFC 3339 time"},
		{"received_at oversized", set("received_at", str("2026-05-01T13:00:00."+strings.Repeat("1", 60)+"Z")), "attribute received_at is not an RFC 3339 time"},
		{"no content_type", drop("content_type"), "attribute content_type is missing"},
		{"content_type of invalid UTF-8", set("content_type", str("text/\xc3")), "attribute content_type is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"content_type oversized", set("content_type", str(strings.Repeat("c", 257))), "attribute content_type is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"unknown encoding", set("encoding", str("gzip")), `attribute encoding is "gzip"; want base64 or none`},
		{"encoding oversized", set("encoding", str(strings.Repeat("g", 100))), `attribute encoding is "` + strings.Repeat("g", 32) + `…"; want base64 or none`},
		{"binary encoding", set("encoding", message.Attribute{Type: "Binary", Value: "YmFzZTY0"}), `attribute encoding has type "Binary"; want String`},
		{"unknown payload", set("payload", str("dynamodb")), `attribute payload is "dynamodb" with encoding ""; want s3 without an encoding`},
		{"payload with an encoding", func(m message.Attributes) { m["payload"], m["encoding"] = str("s3"), str("base64") },
			`attribute payload is "s3" with encoding "base64"; want s3 without an encoding`},
		{"bad replay id", set("replay", str("replay 1")), "attribute replay is not a replay id (rpl_ and 1 to 60 letters, digits, '-' or '_')"},
		{"replay id oversized", set("replay", str("rpl_"+strings.Repeat("r", 61))), "attribute replay is not a replay id (rpl_ and 1 to 60 letters, digits, '-' or '_')"},
		{"ordering_key with a newline", set("ordering_key", str("body:a\nb")), "attribute ordering_key is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"ordering_key of invalid UTF-8", set("ordering_key", str("body:\xff")), "attribute ordering_key is not 1 to 256 bytes of UTF-8 text without control characters"},
		{"attempted without its time", set("attempted", str("3")), "attribute attempted is not <attempts>@<Unix milliseconds>"},
		{"attempted oversized", set("attempted", str("12345@1")), "attribute attempted is not <attempts>@<Unix milliseconds>"},
		{"paced zero", set("paced", str("0")), "attribute paced is not a whole number from 1 to 999999"},
		{"paced negative", set("paced", str("-2")), "attribute paced is not a whole number from 1 to 999999"},
		{"paced too large", set("paced", str("1000000")), "attribute paced is not a whole number from 1 to 999999"},
		{"paced not a number", set("paced", str("twice")), "attribute paced is not a whole number from 1 to 999999"},
		{"extra of an unknown type", set("x", message.Attribute{Type: "Blob", Value: "1"}), `attribute x has unknown type "Blob"`},
		{"extra binary not base64", set("x", message.Attribute{Type: "Binary", Value: "%%"}), "attribute x: binary value is not base64"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := readFixture(t, "json")
			tt.change(f.MessageAttributes)
			ev, err := message.Decode(f.Message, f.MessageAttributes)
			var de *message.DecodeError
			if !errors.Is(err, message.ErrMalformed) || !errors.As(err, &de) {
				t.Fatalf("error = %v, want a *DecodeError matching ErrMalformed", err)
			}
			if got, want := err.Error(), "malformed message: "+tt.want; got != want {
				t.Errorf("error:\n got %q\nwant %q", got, want)
			}
			if ev.Body != f.Message {
				t.Error("the body was not returned with the error")
			}
		})
	}

	// Every problem is reported, in a stable order.
	_, err := message.Decode("", message.Attributes{"encoding": {Type: "String", Value: "zip"}, "b": {Type: "Blob"}, "a": {Type: "Blob"}})
	want := "malformed message: attribute id is missing\nattribute source is missing\nattribute type is missing\nattribute received_at is missing\n" +
		"attribute content_type is missing\nattribute encoding is \"zip\"; want base64 or none\nattribute a has unknown type \"Blob\"\nattribute b has unknown type \"Blob\""
	if err == nil || err.Error() != want {
		t.Errorf("error:\n got %q\nwant %q", err, want)
	}

	// A body that is not the base64 its attribute announces fails in Bytes.
	f := readFixture(t, "binary")
	ev, err := message.Decode("!!not base64", f.MessageAttributes)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ev.Bytes(); !errors.Is(err, message.ErrMalformed) || err.Error() != "malformed message: body is not the standard base64 its encoding attribute announces" {
		t.Errorf("Bytes of a bad base64 body: %v", err)
	}
}

// TestEncodeBodyPicksBase64 for bodies SQS would refuse, or not UTF-8.
func TestEncodeBodyPicksBase64(t *testing.T) {
	for _, b := range []string{"\x00", "\xff", "a\uFFFEb", "form\ffeed"} {
		if body, enc := message.EncodeBody([]byte(b)); enc != message.Base64 || !utf8.ValidString(body) {
			t.Errorf("EncodeBody(%q) = %q, %d; want base64", b, body, enc)
		}
	}
	if body, enc := message.EncodeBody([]byte("{}")); enc != message.Raw || body != "{}" {
		t.Errorf("EncodeBody({}) = %q, %d", body, enc)
	}
}

// FuzzDecode: any message either decodes, to an event whose header values
// are safe to send and which encodes back to itself, or fails with a
// *DecodeError matching ErrMalformed; it never panics. The seed corpus is
// in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	f.Add("evt_1", "stripe", "invoice.paid", "2026-11-30T12:00:00.000Z", "application/json", "", "", "", "", "", `{"a":1}`)
	f.Fuzz(func(t *testing.T, id, source, typ, receivedAt, contentType, encoding, pl, replay, orderingKey, attempted, body string) {
		attrs := message.Attributes{}
		for name, v := range map[string]string{
			message.AttrID: id, message.AttrSource: source, message.AttrType: typ, message.AttrReceivedAt: receivedAt,
			message.AttrContentType: contentType, message.AttrEncoding: encoding, message.AttrPayload: pl,
			message.AttrReplay: replay, message.AttrOrderingKey: orderingKey, message.AttrAttempted: attempted,
		} {
			if v != "" {
				attrs[name] = message.Attribute{Type: "String", Value: v}
			}
		}
		ev, err := message.Decode(body, attrs)
		if err != nil {
			var de *message.DecodeError
			if !errors.Is(err, message.ErrMalformed) || !errors.As(err, &de) || len(de.Problems) == 0 {
				t.Fatalf("error %v is not a *DecodeError matching ErrMalformed", err)
			}
			return
		}
		for _, h := range []string{ev.ID, ev.Source, ev.Type, ev.ContentType} {
			if h == "" || !utf8.ValidString(h) || strings.ContainsAny(h, "\r\n\x00") {
				t.Fatalf("accepted a header value %q", h)
			}
		}
		if strings.ContainsAny(ev.ID, ". ") {
			t.Fatalf("accepted id %q", ev.ID)
		}
		b, berr := ev.Bytes()
		switch {
		case ev.Encoding == message.Raw && (berr != nil || string(b) != body):
			t.Fatalf("a raw body changed: %q, %v", b, berr)
		case ev.Encoding == message.Stored && !errors.Is(berr, message.ErrStored):
			t.Fatalf("Bytes of a stored body: %v", berr)
		case berr != nil && !errors.Is(berr, message.ErrMalformed) && !errors.Is(berr, message.ErrStored):
			t.Fatalf("Bytes: %v", berr)
		}
		// What was accepted encodes to a message that decodes to it again
		// (received_at is written to the millisecond, in UTC).
		again, err := message.Decode(ev.Encode())
		if err != nil {
			t.Fatalf("the encoded event does not decode: %v", err)
		}
		if !again.ReceivedAt.Equal(ev.ReceivedAt.Truncate(time.Millisecond)) {
			t.Fatalf("received_at %v became %v", ev.ReceivedAt, again.ReceivedAt)
		}
		again.ReceivedAt = ev.ReceivedAt
		if !again.Attempted.At.Equal(ev.Attempted.At) {
			t.Fatalf("attempted %v became %v", ev.Attempted, again.Attempted)
		}
		again.Attempted.At = ev.Attempted.At
		if diff := cmp.Diff(ev, again); diff != "" {
			t.Fatalf("round trip (-decoded +again):\n%s", diff)
		}
	})
}

// A paced lane's copy carries how often the event was deferred, through
// Encode and Decode.
func TestPacedRoundTrips(t *testing.T) {
	ev := message.Event{ID: "evt_1", Source: "stripe", Type: "t", ContentType: "application/json",
		ReceivedAt: time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC), Body: "{}", Paced: 3}
	body, attrs := ev.Encode()
	if got := attrs[message.AttrPaced]; got.Value != "3" || got.Type != message.TypeString {
		t.Fatalf("paced attribute = %+v, want String 3", got)
	}
	back, err := message.Decode(body, attrs)
	if err != nil || back.Paced != 3 {
		t.Fatalf("decoded paced = %d (%v), want 3", back.Paced, err)
	}
	ev.Paced = 0
	if _, attrs := ev.Encode(); len(attrs[message.AttrPaced].Value) != 0 {
		t.Fatalf("an unpaced event carries paced=%q", attrs[message.AttrPaced].Value)
	}
}

// A reconciled event carries reconciled=true through Encode and Decode;
// any other value is refused.
func TestReconciledRoundTrips(t *testing.T) {
	ev := message.Event{ID: "evt_1", Source: "stripe", Type: "t", ContentType: "application/json",
		ReceivedAt: time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC), Body: "{}", Reconciled: true}
	body, attrs := ev.Encode()
	if got := attrs[message.AttrReconciled]; got.Value != "true" || got.Type != message.TypeString {
		t.Fatalf("reconciled attribute = %+v, want String true", got)
	}
	back, err := message.Decode(body, attrs)
	if err != nil || !back.Reconciled || back.Extra != nil {
		t.Fatalf("decoded reconciled = %v, extra %v (%v), want true and no extra", back.Reconciled, back.Extra, err)
	}
	attrs[message.AttrReconciled] = message.Attribute{Type: message.TypeString, Value: "yes"}
	if _, err := message.Decode(body, attrs); err == nil || !strings.Contains(err.Error(), `attribute reconciled is "yes"; want true or none`) {
		t.Fatalf("reconciled=yes decoded with %v", err)
	}
	ev.Reconciled = false
	if _, attrs := ev.Encode(); len(attrs[message.AttrReconciled].Value) != 0 {
		t.Fatalf("an ingested event carries reconciled=%q", attrs[message.AttrReconciled].Value)
	}
}
