package events_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
)

// TestWithEventIDDistinctBodies: under replay protection a body sent again
// under a new header id is a replay, so for those kinds each id gets its
// own body — the original bytes with one member added — while the same id
// gives the same body (a provider's retry); kinds that sign a timestamp
// keep the sample's body.
func TestWithEventIDDistinctBodies(t *testing.T) {
	tests := []struct {
		kind, name string
		ev         config.EventFields
		stamped    bool
	}{
		{"github", "push", config.EventFields{}, true},
		{"shopify", "orders.create", config.EventFields{}, true},
		{"token", "build.finished", config.EventFields{IDHeader: "X-Request-Id"}, true},
		{"hmac", "order.created", config.EventFields{IDHeader: "X-Id"}, true},
		{"standard-webhooks", "invoice.paid", config.EventFields{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
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
			if !tt.stamped {
				if !bytes.Equal(a.Body, s.Body) || !bytes.Equal(b.Body, s.Body) {
					t.Error("the body of a timestamped kind changed")
				}
				return
			}
			if bytes.Equal(a.Body, b.Body) {
				t.Error("two ids gave one body")
			}
			if !json.Valid(a.Body) {
				t.Fatalf("stamped body is not JSON: %s", a.Body)
			}
			member := `"` + events.SampleIDKey + `":"id-a",`
			if got := bytes.Replace(a.Body, []byte(member), nil, 1); !bytes.Equal(got, s.Body) {
				t.Errorf("stamped body differs from the sample by more than %s:\n%s", member, a.Body)
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
