package ingest_test

import (
	"net/http"
	"testing"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/provider"
)

// TestIdentityEdges covers the id and type rules docs/providers.md#how-requests-are-read documents for
// bodies the samples do not show.
func TestIdentityEdges(t *testing.T) {
	jsonHeader := func(kv ...string) http.Header {
		h := http.Header{"Content-Type": {"application/json"}}
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	rateLimited := `{"token":"x","type":"app_rate_limited","team_id":"T1","minute_rate_limited":1518467820,"api_app_id":"A1"}`
	tests := []struct {
		name, source, kind, body string
		header                   http.Header
		providerID, typ          string
	}{
		{"slack envelope without event", "slack", provider.Slack, rateLimited, jsonHeader(), bodySHA([]byte(rateLimited)), "app_rate_limited"},
		{"standard-webhooks without type", "standard-webhooks", provider.StandardWebhooks, `{"data":{}}`, jsonHeader("webhook-id", "msg_1"), "msg_1", "webhook"},
		{"github body not JSON", "github", provider.GitHub, "payload=%7B%7D", jsonHeader("X-GitHub-Delivery", "d-1", "X-GitHub-Event", "push"), "d-1", "push"},
		{"github action not a string", "github", provider.GitHub, `{"action":{"x":1}}`, jsonHeader("X-GitHub-Delivery", "d-2", "X-GitHub-Event", "check_run"), "d-2", "check_run"},
		{"github body JSON with garbage after it: not JSON, bare type", "github", provider.GitHub, `{"action":"created"} x`, jsonHeader("X-GitHub-Delivery", "d-3", "X-GitHub-Event", "label"), "d-3", "label"},
		{"stripe case variants off the path", "stripe", provider.Stripe, `{"id":"evt_1","Data":{"ID":"x"},"data":{},"type":"charge.succeeded"}`, jsonHeader(), "evt_1", "charge.succeeded"},
		{"stripe escaped key", "stripe", provider.Stripe, `{"\u0069d":"evt_2","type":"charge.succeeded"}`, jsonHeader(), "evt_2", "charge.succeeded"},
		{"stripe duplicate keys off the path", "stripe", provider.Stripe, `{"id":"evt_3","type":"t","data":{"x":1,"x":2},"id_":1,"object":"a","object":"b"}`, jsonHeader(), "evt_3", "t"},
		{"stripe wanted keys nested elsewhere", "stripe", provider.Stripe, `{"data":{"id":"nested","type":"nested"},"id":"evt_4","type":"top"}`, jsonHeader(), "evt_4", "top"},
		{"stripe escaped type", "stripe", provider.Stripe, `{"id":"evt_5","type":"caf\u00e9.paid"}`, jsonHeader(), "evt_5", "café.paid"},
		{"slack envelope and event type", "slack", provider.Slack, `{"type":"event_callback","event_id":"Ev1","event":{"type":"app_mention","user":"U1"}}`, jsonHeader(), "Ev1", "app_mention"},
		{"generic nested field and its parent", "hmac", provider.HMAC, `{"id":"o2","event":"order.paid","x":{"event":"no"}}`, jsonHeader(), "o2", "order.paid"},
		{"generic numeric id field", "hmac", provider.HMAC, `{"id":820982911946154508,"event":"order.paid"}`, jsonHeader(), "820982911946154508", "order.paid"},
		{"generic escaped type", "hmac", provider.HMAC, `{"id":"o1","event":"caf\u00e9.\u0070aid"}`, jsonHeader(), "o1", "café.paid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRig(t, testSources())
			s := events.Sample{Kind: tt.kind, Name: tt.name, Body: []byte(tt.body), Header: tt.header}
			id := acceptedID(t, r.do(t, signSample(t, tt.source, s, r.now)))
			if want := wantID(tt.source, tt.providerID); id != want {
				t.Errorf("id = %s, want %s (provider id %q)", id, want, tt.providerID)
			}
			if got := attr(r.pub.published()[0], "type"); got != tt.typ {
				t.Errorf("type = %q, want %q", got, tt.typ)
			}
		})
	}
}

func TestSvixHeaders(t *testing.T) {
	r := newRig(t, testSources())
	s := events.MustLoad("standard-webhooks", "invoice.paid")
	req := signSample(t, "standard-webhooks", s, r.now)
	// Rename webhook-* to svix-*, as Svix itself sends them.
	for _, name := range []string{"Webhook-Id", "Webhook-Timestamp", "Webhook-Signature"} {
		svix := "Svix" + name[len("Webhook"):]
		req.Headers[svix], req.MultiValueHeaders[svix] = req.Headers[name], req.MultiValueHeaders[name]
		delete(req.Headers, name)
		delete(req.MultiValueHeaders, name)
	}
	id := acceptedID(t, r.do(t, req))
	if want := wantID("standard-webhooks", "msg_2p8QnDcrW6hFJ3vS0zY4xK9aTqE"); id != want {
		t.Errorf("id = %s, want %s", id, want)
	}
}
