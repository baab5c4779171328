//go:build integration

package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/config"
)

// withAPIType runs the stack's gateway in the given API type's shape.
func withAPIType(apiType string) envOption {
	return func(o *devstack.Options) { o.Config.API.Type = apiType }
}

// post signs s as source and POSTs it through the gateway with the given
// content type, returning the status and the answer.
func (e *env) post(source string, s events.Sample, contentType string) (int, []byte) {
	e.t.Helper()
	src, ok := e.cfg.Source(source)
	var h http.Header
	if ok {
		secret := map[string]string{"stripe": stripeSecret, "github": githubSecret}[source]
		var err error
		if h, err = events.Sign(src.Verify, s, time.Now(), secret); err != nil {
			e.t.Fatal(err)
		}
	} else {
		h = http.Header{}
	}
	h.Set("Content-Type", contentType)
	req, _ := http.NewRequest(http.MethodPost, e.gateway.URL+"/webhooks/"+source, bytes.NewReader(s.Body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, body
}

// TestHTTPAPIShape: with api.type "http" the local gateway speaks the HTTP
// API's payload format 2.0 (lowercased headers, text bodies as text, others
// base64) and ingest's contract holds unchanged: signed events from both
// providers are accepted on their per-source routes and delivered byte for
// byte, whatever their content type; an unknown source on the catch-all
// route gets the same 404.
func TestHTTPAPIShape(t *testing.T) {
	t.Parallel()
	all := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("all", all, "")}, map[string]*receiver{"all": all}, withAPIType(config.APITypeHTTP))
	if e.cfg.API.Kind() != config.APITypeHTTP {
		t.Fatalf("api type %q", e.cfg.API.Kind())
	}

	fresh := func(kind, sample, id string) events.Sample {
		src, _ := e.cfg.Source(kind)
		s, err := events.WithEventID(events.MustLoad(kind, sample), id, src.Event)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	stripe := fresh("stripe", "payment_intent.succeeded", "evt_http_api_1")
	push := fresh("github", "push", "5e7c1a2b-0000-4000-8000-00000000a001")
	// GitHub's form-encoded delivery: not a text type, so it travels
	// base64-encoded through the HTTP API.
	form := fresh("github", "push", "5e7c1a2b-0000-4000-8000-00000000a002")
	form.Body = append([]byte("payload="), form.Body...)
	// Non-ASCII UTF-8 in a JSON body, sent as text.
	var doc map[string]any
	if err := json.Unmarshal(push.Body, &doc); err != nil {
		t.Fatal(err)
	}
	doc["zen"] = "Café ☃ — ship it"
	unicode := fresh("github", "push", "5e7c1a2b-0000-4000-8000-00000000a003")
	unicode.Body, _ = json.Marshal(doc)

	want := map[string][]byte{}
	for _, tt := range []struct {
		source, contentType string
		s                   events.Sample
	}{
		{"stripe", "application/json; charset=utf-8", stripe},
		{"github", "application/json", push},
		{"github", "application/x-www-form-urlencoded", form},
		{"github", "application/json", unicode},
	} {
		status, answer := e.post(tt.source, tt.s, tt.contentType)
		var out struct{ ID string }
		if status != http.StatusAccepted || json.Unmarshal(answer, &out) != nil || out.ID == "" {
			t.Fatalf("%s %s: %d %s, want 202 with an id", tt.source, tt.contentType, status, answer)
		}
		want[out.ID] = tt.s.Body
	}

	status, answer := e.post("gitlab", push, "application/json")
	var rejected struct{ Error struct{ Code string } }
	if status != http.StatusNotFound || json.Unmarshal(answer, &rejected) != nil || rejected.Error.Code != "unknown_source" {
		t.Errorf("unknown source: %d %s, want 404 unknown_source", status, answer)
	}

	waitFor(t, 30*time.Second, "four deliveries", func() bool { return len(all.deliveries()) >= len(want) })
	e.settled()
	got := all.deliveries()
	if len(got) != len(want) {
		t.Fatalf("got %d deliveries, want %d", len(got), len(want))
	}
	for _, d := range got {
		id := d.header.Get("webhook-id")
		body, ok := want[id]
		if !ok || !d.verified || !bytes.Equal(d.body, body) {
			t.Errorf("delivery %s (verified %v): body %q, want %q", id, d.verified, d.body, body)
		}
	}
}
