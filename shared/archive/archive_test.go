package archive

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"
)

// renderFirehose expands the timestamp expressions of a Firehose prefix
// the way Firehose does (Java DateTimeFormatter patterns, UTC).
func renderFirehose(prefix string, t time.Time) string {
	t = t.UTC()
	patterns := map[string]string{"yyyy": "2006", "MM": "01", "dd": "02", "HH": "15"}
	return regexp.MustCompile(`!\{timestamp:([A-Za-z]+)\}`).ReplaceAllStringFunc(prefix, func(m string) string {
		p := strings.TrimSuffix(strings.TrimPrefix(m, "!{timestamp:"), "}")
		return t.Format(patterns[p])
	})
}

func TestFirehosePrefixRendersAsPartitionPrefix(t *testing.T) {
	for _, at := range []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 999e6, time.UTC),
		time.Date(2026, 6, 1, 0, 30, 0, 0, time.FixedZone("CEST", 2*3600)), // 2026-05-31T22:30Z
	} {
		if got, want := renderFirehose(FirehosePrefix, at), PartitionPrefix(at); got != want {
			t.Errorf("at %s: Firehose writes %q, readers list %q", at, got, want)
		}
	}
	if got, want := PartitionPrefix(time.Date(2026, 6, 1, 0, 30, 0, 0, time.FixedZone("CEST", 2*3600))), "events/year=2026/month=05/day=31/hour=22/"; got != want {
		t.Errorf("PartitionPrefix = %q, want %q (UTC)", got, want)
	}
	if !strings.HasPrefix(FirehoseErrorPrefix, ErrorsPrefix) || strings.HasPrefix(FirehoseErrorPrefix, EventsPrefix) {
		t.Errorf("error prefix %q must sit outside %q", FirehoseErrorPrefix, EventsPrefix)
	}
	key := ObjectKey("hookfan-dev-archive", time.Date(2026, 5, 1, 13, 2, 3, 0, time.UTC), "ab12")
	if want := "events/year=2026/month=05/day=01/hour=13/hookfan-dev-archive-1-2026-05-01-13-02-03-ab12.gz"; key != want {
		t.Errorf("ObjectKey = %q, want %q", key, want)
	}
}

// envelope renders an archived record as SNS writes it.
func envelope(id, source, typ string, received time.Time, body string, extra map[string]Attribute) []byte {
	attrs := map[string]Attribute{
		"id":           {Type: "String", Value: id},
		"source":       {Type: "String", Value: source},
		"type":         {Type: "String", Value: typ},
		"received_at":  {Type: "String", Value: received.UTC().Format("2006-01-02T15:04:05.000Z")},
		"content_type": {Type: "String", Value: "application/json"},
	}
	for k, v := range extra {
		attrs[k] = v
	}
	b, err := json.Marshal(map[string]any{
		"Type": "Notification", "MessageId": "m-" + id, "TopicArn": "arn:aws:sns:us-east-1:123456789012:t",
		"Message": body, "Timestamp": received.Add(20 * time.Millisecond).UTC().Format("2006-01-02T15:04:05.000Z"),
		"SignatureVersion": "1", "Signature": "x", "UnsubscribeURL": "https://sns.example/unsubscribe",
		"MessageAttributes": attrs,
	})
	if err != nil {
		panic(err)
	}
	return b
}

func TestParseRecord(t *testing.T) {
	at := time.Date(2026, 5, 1, 13, 0, 0, 123e6, time.UTC)
	good := envelope("evt_1", "stripe", "invoice.paid", at, `{"id":"in_1"}`, map[string]Attribute{"encoding": {Type: "String", Value: "base64"}})
	ev, err := ParseRecord(good)
	if err != nil {
		t.Fatalf("ParseRecord: %v", err)
	}
	got := []any{ev.ID, ev.Source, ev.Type, ev.ReceivedAt, ev.Message, ev.SNSMessageID, ev.PublishedAt, len(ev.Attributes), ev.Attributes["encoding"].Value}
	want := []any{"evt_1", "stripe", "invoice.paid", at, `{"id":"in_1"}`, "m-evt_1", at.Add(20 * time.Millisecond), 6, "base64"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("event (-want +got):\n%s", diff)
	}
	// moto's SQS body for a non-raw subscription: the same envelope, indented.
	var indented bytes.Buffer
	_ = json.Indent(&indented, good, "", "  ")
	if ev2, err := ParseRecord(indented.Bytes()); err != nil || !cmp.Equal(ev, ev2) {
		t.Errorf("indented envelope: %v, %v", ev2, err)
	}

	edit := func(f func(m map[string]any)) []byte {
		var m map[string]any
		_ = json.Unmarshal(good, &m)
		f(m)
		b, _ := json.Marshal(m)
		return b
	}
	attrs := func(m map[string]any) map[string]any { return m["MessageAttributes"].(map[string]any) }
	bad := []struct {
		name   string
		record []byte
		want   string
	}{
		{"not JSON", []byte(`{"Type":`), "malformed archive record: not an SNS notification envelope: unexpected end of JSON input"},
		{"array", []byte(`[1]`), "malformed archive record: not an SNS notification envelope: json: cannot unmarshal array into Go value of type archive.Envelope"},
		{"subscription confirmation", edit(func(m map[string]any) { m["Type"] = "SubscriptionConfirmation" }), `malformed archive record: Type is "SubscriptionConfirmation"; want "Notification"`},
		{"no id", edit(func(m map[string]any) { delete(attrs(m), "id") }), "malformed archive record: attribute id is missing"},
		{"binary id", edit(func(m map[string]any) { attrs(m)["id"] = map[string]any{"Type": "Binary", "Value": "ZXZ0"} }), "malformed archive record: attribute id has type \"Binary\"; want String"},
		{"id with a dot", edit(func(m map[string]any) { attrs(m)["id"] = map[string]any{"Type": "String", "Value": "evt.1"} }), "malformed archive record: attribute id is not 1 to 256 visible ASCII characters without '.'"},
		// The deliverer's id check, the codec's one: the archive used to
		// refuse only '.' and the space.
		{"id with a control character", edit(func(m map[string]any) { attrs(m)["id"] = map[string]any{"Type": "String", "Value": "evt\u0001"} }), "malformed archive record: attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"id too long", edit(func(m map[string]any) {
			attrs(m)["id"] = map[string]any{"Type": "String", "Value": strings.Repeat("e", 257)}
		}), "malformed archive record: attribute id is not 1 to 256 visible ASCII characters without '.'"},
		{"source not a source name", edit(func(m map[string]any) { attrs(m)["source"] = map[string]any{"Type": "String", "Value": "Stripe!"} }), "malformed archive record: attribute source is not 1 to 64 lowercase letters, digits or hyphens"},
		{"bad received_at", edit(func(m map[string]any) {
			attrs(m)["received_at"] = map[string]any{"Type": "String", "Value": "yesterday"}
		}), "malformed archive record: attribute received_at is not an RFC 3339 time"},
		{"unknown attribute type", edit(func(m map[string]any) { attrs(m)["x"] = map[string]any{"Type": "Blob", "Value": "1"} }), `malformed archive record: attribute x has unknown type "Blob"`},
		{"bad timestamp", edit(func(m map[string]any) { m["Timestamp"] = "later" }), `malformed archive record: Timestamp "later" is not an RFC 3339 time`},
		{"no attributes at all", edit(func(m map[string]any) { delete(m, "MessageAttributes") }), "malformed archive record: attribute id is missing\nattribute source is missing\nattribute type is missing\nattribute received_at is missing\nattribute content_type is missing"},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseRecord(tt.record)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("got %v, want ErrMalformed", err)
			}
			if err.Error() != tt.want {
				t.Errorf("error:\n got %q\nwant %q", err, tt.want)
			}
		})
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	at := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	ev, err := ParseRecord(envelope("evt_2", "github", "push", at, "body", nil))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ev.Envelope())
	back, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ev, back); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
}

// archiveOf writes events into a memory bucket as objects of the given
// records, each at its arrival time.
func writeObject(t *testing.T, b *MemoryBucket, arrived time.Time, records ...[]byte) string {
	t.Helper()
	key, err := NewWriter(b, "bucket", "test-stream").Write(context.Background(), records, arrived)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

func putRaw(t *testing.T, b *MemoryBucket, key string, body []byte) {
	t.Helper()
	if _, err := b.PutObject(context.Background(), &s3.PutObjectInput{Key: aws.String(key), Body: bytes.NewReader(body)}); err != nil {
		t.Fatal(err)
	}
}

func ids(evs []Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

func TestScan(t *testing.T) {
	b := NewMemoryBucket()
	b.PageSize = 2 // exercise pagination
	base := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	at := func(minutes int) time.Time { return base.Add(time.Duration(minutes) * time.Minute) }
	// 10:00-10:59: four events in two objects; evt_a archived twice (a provider retry).
	writeObject(t, b, at(1),
		envelope("evt_a", "stripe", "invoice.paid", at(1), "a", nil),
		envelope("evt_b", "stripe", "charge.refunded", at(2), "b", nil))
	writeObject(t, b, at(30),
		envelope("evt_c", "github", "push", at(30), "c", nil),
		envelope("evt_a", "stripe", "invoice.paid", at(31), "a-again", nil))
	// An object written in hour 11 whose last record was received in hour 12
	// (Firehose partitions by the oldest record).
	writeObject(t, b, at(119),
		envelope("evt_d", "stripe", "invoice.created", at(119), "d", nil),
		envelope("evt_e", "stripe", "invoice.paid", at(125), "e", nil))
	// Hour 13: one good record between a line that is not JSON and one that is not an envelope.
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	fmt.Fprintf(zw, "{not json\n%s\n{\"Type\":\"Notification\"}\n", envelope("evt_f", "github", "pull_request.opened", at(190), "f", nil))
	zw.Close()
	putRaw(t, b, PartitionPrefix(at(190))+"corrupt.gz", raw.Bytes())
	// Hour 14: an uncompressed object whose records have no delimiter.
	putRaw(t, b, PartitionPrefix(at(250))+"plain",
		append(envelope("evt_g", "stripe", "invoice.paid", at(250), "g", nil), envelope("evt_h", "stripe", "invoice.paid", at(251), "h", nil)...))

	tests := []struct {
		name      string
		q         Query
		want      []string
		unreadble int
	}{
		{"everything, each once", Query{Since: base, Until: at(300)}, []string{"evt_a", "evt_b", "evt_c", "evt_d", "evt_e", "evt_f", "evt_g", "evt_h"}, 2},
		{"by source", Query{Since: base, Until: at(300), Source: "github"}, []string{"evt_c", "evt_f"}, 2},
		{"by exact type", Query{Since: base, Until: at(300), Type: "invoice.paid"}, []string{"evt_a", "evt_e", "evt_g", "evt_h"}, 2},
		{"by type prefix", Query{Since: base, Until: at(300), Type: "invoice.*"}, []string{"evt_a", "evt_d", "evt_e", "evt_g", "evt_h"}, 2},
		{"window: since inclusive, until exclusive", Query{Since: at(2), Until: at(119)}, []string{"evt_b", "evt_c", "evt_a"}, 0},
		{"a record in a later hour than its object", Query{Since: at(121), Until: at(130)}, []string{"evt_e"}, 0},
		{"by id", Query{Since: base, Until: at(300), ID: "evt_h"}, []string{"evt_h"}, 2},
		{"nothing there", Query{Since: at(600), Until: at(700)}, nil, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []Event
			var bad []BadRecord
			var progress []Progress
			p, err := NewReader(b, "bucket").Scan(context.Background(), tt.q, func(e Event) error {
				got = append(got, e)
				return nil
			}, Options{OnBadRecord: func(r BadRecord) { bad = append(bad, r) }, OnProgress: func(p Progress) { progress = append(progress, p) }})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
			if len(bad) != tt.unreadble || p.Unreadable != tt.unreadble {
				t.Errorf("unreadable: %d reported, %d counted, want %d: %v", len(bad), p.Unreadable, tt.unreadble, bad)
			}
			if len(progress) != p.HoursTotal || p.Hours != p.HoursTotal {
				t.Errorf("progress reported %d times for %d of %d hours", len(progress), p.Hours, p.HoursTotal)
			}
		})
	}

	// The duplicate's first copy wins.
	var first Event
	_, _ = NewReader(b, "bucket").Scan(context.Background(), Query{Since: base, Until: at(300), ID: "evt_a"}, func(e Event) error { first = e; return nil }, Options{})
	if first.Message != "a" {
		t.Errorf("evt_a: got the copy %q, want the first one", first.Message)
	}
	// Bad records name the object and the line.
	var bad []BadRecord
	_, _ = NewReader(b, "bucket").Scan(context.Background(), Query{Since: at(180), Until: at(200)}, func(Event) error { return nil }, Options{OnBadRecord: func(r BadRecord) { bad = append(bad, r) }})
	var lines []string
	for _, r := range bad {
		lines = append(lines, fmt.Sprintf("%s:%d:%v", strings.TrimPrefix(r.Key, PartitionPrefix(at(190))), r.Line, errors.Is(r.Err, ErrMalformed)))
	}
	if diff := cmp.Diff([]string{"corrupt.gz:1:true", "corrupt.gz:3:true"}, lines); diff != "" {
		t.Errorf("bad records (-want +got):\n%s", diff)
	}
}

func TestScanStopsAndFails(t *testing.T) {
	b := NewMemoryBucket()
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	writeObject(t, b, at, envelope("evt_1", "s", "t", at, "1", nil), envelope("evt_2", "s", "t", at, "2", nil))
	r := NewReader(b, "bucket")
	n := 0
	if _, err := r.Scan(context.Background(), Query{Since: at, Until: at.Add(time.Hour)}, func(Event) error { n++; return ErrStop }, Options{}); err != nil || n != 1 {
		t.Errorf("ErrStop: %d visits, error %v; want 1 and none", n, err)
	}
	boom := errors.New("boom")
	if _, err := r.Scan(context.Background(), Query{Since: at, Until: at.Add(time.Hour)}, func(Event) error { return boom }, Options{}); !errors.Is(err, boom) {
		t.Errorf("visitor error: got %v", err)
	}
	for _, q := range []Query{{}, {Since: at}, {Since: at, Until: at}, {Since: at.Add(time.Hour), Until: at}} {
		if _, err := r.Scan(context.Background(), q, func(Event) error { return nil }, Options{}); err == nil || !strings.Contains(err.Error(), "want since before until") {
			t.Errorf("query %+v: got %v, want a window error", q, err)
		}
	}
}

func TestFind(t *testing.T) {
	b := NewMemoryBucket()
	base := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	writeObject(t, b, base.Add(time.Hour), envelope("evt_x", "s", "t", base.Add(time.Hour), "early copy", nil))
	writeObject(t, b, base.Add(5*time.Hour), envelope("evt_y", "s", "t", base.Add(5*time.Hour), "y", nil), envelope("evt_x", "s", "t", base.Add(5*time.Hour), "late copy", nil))
	r := NewReader(b, "bucket")
	var hours []int
	ev, ok, p, err := r.Find(context.Background(), "evt_x", base, base.Add(10*time.Hour), Options{OnProgress: func(p Progress) { hours = append(hours, p.Hours) }})
	if err != nil || !ok {
		t.Fatalf("Find: %v, %v", ok, err)
	}
	if ev.Message != "late copy" {
		t.Errorf("found %q, want the newest hour's copy", ev.Message)
	}
	// Searching back from hour 10 (plus the buffering margin) stops in hour 5.
	if p.HoursTotal != 12 || p.Objects != 1 || p.Hours != len(hours) {
		t.Errorf("progress %+v (%d reports), want the search to stop in the sixth hour listed", p, len(hours))
	}
	_, ok, _, err = r.Find(context.Background(), "evt_none", base, base.Add(10*time.Hour), Options{})
	if ok || err != nil {
		t.Errorf("missing event: %v, %v", ok, err)
	}
	if _, _, _, err := r.Find(context.Background(), "", base, base, Options{}); err == nil {
		t.Error("Find with no id: no error")
	}
}

func TestTooLongRecordIsSkipped(t *testing.T) {
	b := NewMemoryBucket()
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	long := `{"Type":"` + strings.Repeat("x", MaxRecordBytes) + `"}`
	body := string(envelope("evt_1", "s", "t", at, "1", nil)) + "\n" + long + "\n" + string(envelope("evt_2", "s", "t", at, "2", nil)) + "\n" + long
	putRaw(t, b, PartitionPrefix(at)+"long", []byte(body))
	var got []Event
	var bad []BadRecord
	_, err := NewReader(b, "bucket").Scan(context.Background(), Query{Since: at, Until: at.Add(time.Minute)}, func(e Event) error { got = append(got, e); return nil },
		Options{OnBadRecord: func(r BadRecord) { bad = append(bad, r) }})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"evt_1", "evt_2"}, ids(got)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(bad) != 2 || !errors.Is(bad[0].Err, ErrRecordTooLong) || bad[0].Line != 2 || bad[1].Line != 4 {
		t.Errorf("bad records %v, want lines 2 and 4 too long", bad)
	}
}

func TestEncodeObjectRejectsNonJSON(t *testing.T) {
	if _, err := EncodeObject([][]byte{[]byte(`{}`), []byte(`nope`)}); err == nil || !strings.HasPrefix(err.Error(), "record 1: ") {
		t.Errorf("got %v, want an error naming record 1", err)
	}
	if key, err := NewWriter(NewMemoryBucket(), "b", "w").Write(context.Background(), nil, time.Now()); key != "" || err != nil {
		t.Errorf("writing no records: %q, %v; want nothing", key, err)
	}
}

func TestHoursBetween(t *testing.T) {
	from := time.Date(2026, 5, 1, 22, 59, 0, 0, time.UTC)
	got := HoursBetween(from, from.Add(61*time.Minute))
	want := []time.Time{from.Truncate(time.Hour), from.Truncate(time.Hour).Add(time.Hour), from.Truncate(time.Hour).Add(2 * time.Hour)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("hours (-want +got):\n%s", diff)
	}
}

func FuzzParseRecord(f *testing.F) {
	at := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	f.Add(envelope("evt_1", "stripe", "invoice.paid", at, `{"id":"in_1"}`, nil))
	f.Add([]byte(`{"Type":"Notification","MessageAttributes":{"id":{"Type":"String","Value":"a.b"}}}`))
	f.Add([]byte(`{}`))
	f.Add([]byte(`null`))
	f.Fuzz(func(t *testing.T, record []byte) {
		ev, err := ParseRecord(record)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not match ErrMalformed", err)
			}
			return
		}
		if ev.ID == "" || ev.Source == "" || ev.Type == "" || ev.ReceivedAt.IsZero() {
			t.Fatalf("accepted a record without id, source, type or time: %+v", ev)
		}
		// What was accepted survives being archived again.
		b, err := json.Marshal(ev.Envelope())
		if err != nil {
			t.Fatal(err)
		}
		again, err := ParseRecord(b)
		if err != nil || again.ID != ev.ID || again.Message != ev.Message {
			t.Fatalf("re-archived record reads back as %+v, %v", again, err)
		}
	})
}

func FuzzReadObject(f *testing.F) {
	at := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	obj, _ := EncodeObject([][]byte{envelope("evt_1", "s", "t", at, "x", nil)})
	f.Add(obj)
	f.Add(append(envelope("evt_1", "s", "t", at, "x", nil), '\n', '{'))
	f.Add([]byte{0x1f, 0x8b, 0})
	f.Fuzz(func(t *testing.T, body []byte) {
		n := 0
		_ = readObject("k", bytes.NewReader(body), func(Event) error { n++; return nil }, func(b BadRecord) {
			if b.Line < 1 || b.Err == nil {
				t.Fatalf("bad record without a line or error: %+v", b)
			}
		})
		if n > len(body) {
			t.Fatalf("%d events from %d bytes", n, len(body))
		}
	})
}
