package events_test

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
)

// TestWithEventIDDistinctBodies: under replay protection a body sent again
// under a new header id is a replay, so for those kinds each id gets its
// own body — the sample's bytes with only its Vary member's value changed,
// in the shape it had, no member added — while the same id gives the same
// body (a provider's retry); kinds that sign a timestamp keep the sample's
// body.
func TestWithEventIDDistinctBodies(t *testing.T) {
	tests := []struct {
		kind, name string
		ev         config.EventFields
		varied     bool
		shape      *regexp.Regexp // of the varied value
	}{
		{"github", "push", config.EventFields{}, true, regexp.MustCompile(`^"[0-9a-f]{40}"$`)},
		{"github", "pull_request.opened", config.EventFields{}, true, regexp.MustCompile(`^[1-9][0-9]{9}$`)},
		{"shopify", "orders.create", config.EventFields{}, true, regexp.MustCompile(`^[1-9][0-9]{17}$`)},
		{"token", "build.finished", config.EventFields{IDHeader: "X-Request-Id"}, true, regexp.MustCompile(`^[1-9][0-9]{2}$`)},
		{"hmac", "order.created", config.EventFields{IDHeader: "X-Id"}, true, regexp.MustCompile(`^"ord_[0-9A-Z]{10}"$`)},
		{"standard-webhooks", "invoice.paid", config.EventFields{}, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.kind+"/"+tt.name, func(t *testing.T) {
			s := events.MustLoad(tt.kind, tt.name)
			a, err := events.WithEventID(s, "id-a", tt.ev)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := events.WithEventID(s, "id-b", tt.ev)
			again, _ := events.WithEventID(s, "id-a", tt.ev)
			if !bytes.Equal(a.Body, again.Body) {
				t.Error("the same id gave two bodies")
			}
			if !tt.varied {
				if !bytes.Equal(a.Body, s.Body) || !bytes.Equal(b.Body, s.Body) {
					t.Error("the body of a timestamped kind changed")
				}
				return
			}
			if bytes.Equal(a.Body, b.Body) {
				t.Error("two ids gave one body")
			}
			if !json.Valid(a.Body) || bytes.Contains(a.Body, []byte(events.SampleIDKey)) {
				t.Fatalf("varied body is not JSON, or has a member added: %s", a.Body)
			}
			// The bodies differ in one run of bytes, the varied value.
			i := 0
			for i < len(s.Body) && s.Body[i] == a.Body[i] {
				i++
			}
			j := 0
			for j < len(s.Body)-i && s.Body[len(s.Body)-1-j] == a.Body[len(a.Body)-1-j] {
				j++
			}
			if len(a.Body) != len(s.Body) {
				t.Fatalf("varied body is %d bytes, the sample %d: the value's shape changed", len(a.Body), len(s.Body))
			}
			// Widen the differing run to the whole JSON value it lies in.
			start, end := i, len(a.Body)-j
			for start > 0 && !bytes.ContainsRune([]byte(":, "), rune(a.Body[start-1])) {
				start--
			}
			for end < len(a.Body) && !bytes.ContainsRune([]byte(",}\n"), rune(a.Body[end])) {
				end++
			}
			if v := a.Body[start:end]; !tt.shape.Match(v) {
				t.Errorf("varied value %s, want the shape %s", v, tt.shape)
			}
		})
	}
	empty := events.Sample{Kind: "github", Name: "empty", Body: []byte(" { } "), Header: map[string][]string{}}
	got, _ := events.WithEventID(empty, "x", config.EventFields{})
	if string(got.Body) != ` {"hookfan_sample_id":"x" } ` {
		t.Errorf("empty object stamped as %q", got.Body)
	}
	form := events.Sample{Kind: "github", Name: "form", Body: []byte("payload=%7B%7D"), Header: map[string][]string{}}
	if got, _ := events.WithEventID(form, "x", config.EventFields{}); string(got.Body) != "payload=%7B%7D" {
		t.Errorf("a form body changed: %q", got.Body)
	}
}

// TestWithEventIDKeepsTheBodysBytes: a body id is replaced where it
// stands; the provider's key order, spacing and other values stay as sent.
func TestWithEventIDKeepsTheBodysBytes(t *testing.T) {
	s := events.MustLoad("stripe", "payment_intent.succeeded")
	got, err := events.WithEventID(s, "evt_1NewIdForTheTest0000000", config.EventFields{})
	if err != nil {
		t.Fatal(err)
	}
	want := bytes.Replace(s.Body, []byte(`"id": "evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R"`), []byte(`"id": "evt_1NewIdForTheTest0000000"`), 1)
	if bytes.Equal(want, s.Body) {
		t.Fatal("the sample's id is not where the test expects it")
	}
	if !bytes.Equal(got.Body, want) {
		t.Errorf("body:\n%s\nwant the sample with only its id changed:\n%s", got.Body, want)
	}
	nested := events.Sample{Kind: "hmac", Name: "nested", Body: []byte(`{"a": 1, "meta": {"b": [1, {"id": 2}], "id" : "old"}, "z": true}`)}
	got, err = events.WithEventID(nested, "new", config.EventFields{IDField: "meta.id"})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"a": 1, "meta": {"b": [1, {"id": 2}], "id" : "new"}, "z": true}`; string(got.Body) != want {
		t.Errorf("nested: %s, want %s", got.Body, want)
	}
}
