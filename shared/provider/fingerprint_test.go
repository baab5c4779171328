package provider_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/provider"
)

// TestFingerprintOnlyWithoutTimestamp: every kind either signs a timestamp or
// says what identifies one of its requests for replay protection, never
// both and never neither.
func TestFingerprintOnlyWithoutTimestamp(t *testing.T) {
	for _, k := range provider.All() {
		if k.Timestamped == (k.Fingerprint != nil) {
			t.Errorf("kind %q: Timestamped %v with Fingerprint set %v; exactly one of them", k.Name, k.Timestamped, k.Fingerprint != nil)
		}
	}
}

// TestFingerprint: for each kind that signs no timestamp, what
// identifies a signed request survives everything a replayer can change
// without the secret (a new event id, for GitHub and the generic kinds a
// new type or topic, the header's spelling) and changes with the body.
func TestFingerprint(t *testing.T) {
	now := time.Now()
	material := func(t *testing.T, k provider.Kind, p provider.Params, h http.Header, body []byte) []byte {
		t.Helper()
		if _, err := k.Identify(p, h, body); err != nil {
			t.Fatalf("Identify = %v", err)
		}
		m, err := k.Fingerprint(p, h, body)
		if err != nil {
			t.Fatalf("Fingerprint = %v", err)
		}
		return m
	}
	tests := []struct {
		kind, sample string
		params       provider.Params
		// edits a replayer can make that must not change the material
		same map[string]func(h http.Header)
		// edits that must change it (besides the body)
		differ map[string]func(h http.Header)
	}{
		{provider.GitHub, "push", provider.Params{}, map[string]func(http.Header){
			"new delivery id": func(h http.Header) { h.Set("X-GitHub-Delivery", "11111111-2222-4333-8444-555555555555") },
			"re-typed":        func(h http.Header) { h.Set("X-GitHub-Event", "release") },
			"upper-case hex": func(h http.Header) {
				h.Set("X-Hub-Signature-256", "sha256="+strings.ToUpper(strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")))
			},
		}, nil},
		{provider.Shopify, "orders.create", provider.Params{}, map[string]func(http.Header){
			"new webhook id": func(h http.Header) { h.Set("X-Shopify-Webhook-Id", "new-webhook-id") },
			"url-safe base64": func(h http.Header) {
				h.Set("X-Shopify-Hmac-Sha256", strings.NewReplacer("+", "-", "/", "_").Replace(h.Get("X-Shopify-Hmac-Sha256")))
			},
			"unpadded base64": func(h http.Header) {
				h.Set("X-Shopify-Hmac-Sha256", strings.TrimRight(h.Get("X-Shopify-Hmac-Sha256"), "="))
			},
			"new triggered-at": func(h http.Header) { h.Set("X-Shopify-Triggered-At", "2030-01-01T00:00:00Z") },
			"another topic":    func(h http.Header) { h.Set("X-Shopify-Topic", "orders/paid") },
			"re-cased topic":   func(h http.Header) { h.Set("X-Shopify-Topic", "orders/Create") },
			"topic and a dot":  func(h http.Header) { h.Set("X-Shopify-Topic", "orders/create.") },
		}, nil},
		{provider.HMAC, "order.created", provider.Params{Header: "X-Sig", Prefix: "sha256=", Event: provider.Places{IDHeader: "X-Id", TypeHeader: "X-Type"}}, map[string]func(http.Header){
			"new id header":   func(h http.Header) { h.Set("X-Id", "another") },
			"new type header": func(h http.Header) { h.Set("X-Type", "another.type") },
		}, nil},
		{provider.Token, "build.finished", provider.Params{Header: "X-Hook-Token", Event: provider.Places{IDHeader: "X-Request-Id", TypeField: "event_type"}}, map[string]func(http.Header){
			"new request id": func(h http.Header) { h.Set("X-Request-Id", "another") },
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.kind, func(t *testing.T) {
			k, _ := provider.Lookup(tt.kind)
			s := events.MustLoad(tt.kind, tt.sample)
			h := s.Header.Clone()
			if tt.params.Event.IDHeader != "" && h.Get(tt.params.Event.IDHeader) == "" {
				h.Set(tt.params.Event.IDHeader, "original")
			}
			if tt.params.Event.TypeHeader != "" {
				h.Set(tt.params.Event.TypeHeader, "original.type")
			}
			if err := k.Sign(tt.params, h, s.Body, now, []string{secretFor(tt.kind)}); err != nil {
				t.Fatal(err)
			}
			orig := material(t, k, tt.params, h, s.Body)
			if len(orig) == 0 {
				t.Fatal("empty material")
			}
			for name, edit := range tt.same {
				c := h.Clone()
				edit(c)
				if got := material(t, k, tt.params, c, s.Body); !bytes.Equal(got, orig) {
					t.Errorf("%s: material changed", name)
				}
			}
			for name, edit := range tt.differ {
				c := h.Clone()
				edit(c)
				if got := material(t, k, tt.params, c, s.Body); bytes.Equal(got, orig) {
					t.Errorf("%s: material unchanged", name)
				}
			}
			// Another body, signed as the provider would sign it.
			trimmed := bytes.TrimSpace(s.Body)
			body := append(bytes.Clone(trimmed[:len(trimmed)-1]), []byte(`,"other":1}`)...)
			c := s.Header.Clone()
			for k, v := range h {
				c[k] = v
			}
			if err := k.Sign(tt.params, c, body, now, []string{secretFor(tt.kind)}); err != nil {
				t.Fatal(err)
			}
			if got := material(t, k, tt.params, c, body); bytes.Equal(got, orig) {
				t.Error("another body: material unchanged")
			}
		})
	}
}
