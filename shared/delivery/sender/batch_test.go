package sender

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestBatchBody(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 0, 0, 123e6, time.UTC)
	ds := []Delivery{
		{ID: "e1", Source: "stripe", Type: "invoice.paid", ContentType: "application/json; charset=utf-8", Body: []byte("{ \"a\": 1 }\n"), ReceivedAt: at},
		{ID: "e2", Source: "gh", Type: "push", ContentType: "application/x-www-form-urlencoded", Body: []byte("a=1"), ReceivedAt: at},
		{ID: "e3", Source: "s", Type: "t", ContentType: "application/json", Body: []byte(`{"broken"`), Reconciled: true},
		{ID: "e4", Source: "s", Type: "t", ContentType: "application/cloudevents+json", Body: []byte(`[1,"\u00e9"]`)},
		{ID: "e5", Source: "s", Type: "t", ContentType: "application/json", Body: []byte{'"', 0xff, '"'}},
	}
	b, err := BatchBody(ds)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"events":[` +
		`{"id":"e1","type":"invoice.paid","source":"stripe","accepted_at":"2026-12-03T10:00:00.123Z","content_type":"application/json; charset=utf-8","data":{ "a": 1 }` + "\n" + `},` +
		`{"id":"e2","type":"push","source":"gh","accepted_at":"2026-12-03T10:00:00.123Z","content_type":"application/x-www-form-urlencoded","data_base64":"YT0x"},` +
		`{"id":"e3","type":"t","source":"s","content_type":"application/json","reconciled":true,"data_base64":"eyJicm9rZW4i"},` +
		`{"id":"e4","type":"t","source":"s","content_type":"application/cloudevents+json","data":[1,"\u00e9"]},` +
		`{"id":"e5","type":"t","source":"s","content_type":"application/json","data_base64":"Iv8i"}]}`
	if string(b) != want {
		t.Errorf("body\n%s\nwant\n%s", b, want)
	}
	if !json.Valid(b) {
		t.Error("the envelope is not JSON")
	}
	sizes := make([]int, len(ds))
	for i, d := range ds {
		item, _ := BatchItem(d)
		sizes[i] = len(item)
	}
	if BatchBytes(sizes...) != len(b) {
		t.Errorf("BatchBytes %d, body %d bytes", BatchBytes(sizes...), len(b))
	}
	if _, err := BatchBody(nil); !errors.Is(err, ErrEmptyBatch) {
		t.Errorf("empty batch: %v", err)
	}
}

func TestBatchID(t *testing.T) {
	a := BatchID([]Delivery{{ID: "e1"}, {ID: "e2"}})
	if a != BatchID([]Delivery{{ID: "e1", Attempt: 3}, {ID: "e2"}}) {
		t.Error("the same events make another id")
	}
	for _, other := range [][]Delivery{{{ID: "e2"}, {ID: "e1"}}, {{ID: "e1"}}, {{ID: "e1e2"}}, {{ID: "e1"}, {ID: "e2"}, {ID: "e3"}}} {
		if BatchID(other) == a {
			t.Errorf("%v has the id of e1,e2", other)
		}
	}
	if !strings.HasPrefix(a, BatchIDPrefix) || strings.Contains(a, ".") || len(a) != len(BatchIDPrefix)+32 {
		t.Errorf("id %q", a)
	}
}
