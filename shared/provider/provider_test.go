package provider_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/verify"
)

// params are the settings each kind is exercised with here.
var params = map[string]provider.Params{
	provider.HMAC:  {Header: "X-Acme-Signature", Algorithm: "sha512", Encoding: "base64", Prefix: "sha512=", Event: provider.Places{IDField: "id", TypeField: "event"}},
	provider.Token: {Header: "X-Hook-Token", Event: provider.Places{IDHeader: "X-Request-Id", TypeField: "event_type"}},
}

func secretFor(kind string) string {
	if kind == provider.StandardWebhooks {
		return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	}
	return "test-secret-for-" + kind
}

// TestEveryKindIsComplete: each registration names itself once and says
// everything config, ingest and events ask of it.
func TestEveryKindIsComplete(t *testing.T) {
	all := provider.All()
	if len(all) == 0 {
		t.Fatal("no kinds")
	}
	var names []string
	for _, k := range all {
		if k.Name == "" || k.Verifier == nil || k.Identify == nil || k.Sign == nil || k.EventID == nil {
			t.Errorf("kind %q is incomplete: %+v", k.Name, k)
		}
		if slices.Contains(names, k.Name) {
			t.Errorf("kind %q registered twice", k.Name)
		}
		names = append(names, k.Name)
		if got, ok := provider.Lookup(k.Name); !ok || got.Name != k.Name {
			t.Errorf("Lookup(%q) = %q, %v", k.Name, got.Name, ok)
		}
		if (len(k.Algorithms) > 0 || len(k.Encodings) > 0 || k.Prefix) && k.HeaderCarries == "" {
			t.Errorf("kind %q takes digest settings but no header", k.Name)
		}
		// Where its body is JSON and its type travels: a kind with fixed
		// places says both (config's ordering reads the one, the sample
		// sender the other); a kind with Places leaves them to its source.
		switch {
		case k.Places && (k.Body != "" || k.TypeHeader != ""):
			t.Errorf("kind %q has places a source names, but a fixed body %q or type header %q", k.Name, k.Body, k.TypeHeader)
		case !k.Places && k.Body != provider.JSONRequired && k.Body != provider.JSONDefault:
			t.Errorf("kind %q does not say whether its bodies are JSON (Body %q)", k.Name, k.Body)
		case !k.Places && k.Body == provider.JSONDefault && k.TypeHeader == "":
			t.Errorf("kind %q may send a body that is not JSON, but names no header for its type", k.Name)
		}
	}
	if diff := slices.Compare(names, provider.Names(nil)); diff != 0 {
		t.Errorf("Names = %v, All = %v", provider.Names(nil), names)
	}
	if _, ok := provider.Lookup("md5"); ok {
		t.Error("Lookup found an unregistered kind")
	}
}

// TestSignVerifyIdentify: for every sample, a kind's signer and its
// verifier agree (they are written separately), and the event id that
// events.WithEventID puts where EventID says is the id Identify reads.
func TestSignVerifyIdentify(t *testing.T) {
	samples, err := events.Samples()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, s := range samples {
		t.Run(s.Kind+"/"+s.Name, func(t *testing.T) {
			k, ok := provider.Lookup(s.Kind)
			if !ok {
				t.Fatalf("no kind %q", s.Kind)
			}
			p := params[s.Kind]
			ev := p.Event
			s, err := events.WithEventID(s, "pid-0123", config.EventFields{IDHeader: ev.IDHeader, IDField: ev.IDField, TypeHeader: ev.TypeHeader, TypeField: ev.TypeField})
			if err != nil {
				t.Fatal(err)
			}
			h := s.Header.Clone()
			if err := k.Sign(p, h, s.Body, now, []string{secretFor(s.Kind)}); err != nil {
				t.Fatal(err)
			}
			v, err := k.Verifier(p)
			if err != nil {
				t.Fatal(err)
			}
			r := &verify.Request{Header: h, Body: s.Body, Now: now}
			if err := v.Verify(r, []string{"wrong", secretFor(s.Kind)}); err != nil {
				t.Fatalf("Verify(signed sample) = %v", err)
			}
			tampered := append(s.Body, ' ')
			if s.Kind == provider.Token { // a token does not sign the body
				tampered = s.Body
				h.Set(p.Header, "not-"+secretFor(s.Kind))
			}
			if err := v.Verify(&verify.Request{Header: h, Body: tampered, Now: now}, []string{secretFor(s.Kind)}); !errors.Is(err, verify.ErrMismatch) {
				t.Fatalf("Verify(tampered sample) = %v, want ErrMismatch", err)
			}
			id, err := k.Identify(p, r.Header, s.Body)
			if want := s.Kind != provider.Shopify; err == nil && id.JSONText != want {
				t.Errorf("Identify reports JSONText %v, want %v (the kind reads the body: %v)", id.JSONText, want, want)
			}
			switch {
			case err != nil:
				t.Fatalf("Identify = %v", err)
			case id.Handshake:
				if id.Challenge == "" {
					t.Error("a handshake without its challenge")
				}
			case id.ID != "pid-0123" || id.Type == "":
				t.Errorf("Identify = %+v, want the id pid-0123 and a type", id)
			}
		})
	}
}

// TestJSONTextOnlyWhenRead: Identity.JSONText, on which ingest skips part
// of the SQS check, is never set for a body that is not one JSON document
// of valid UTF-8.
func TestJSONTextOnlyWhenRead(t *testing.T) {
	gh, _ := provider.Lookup(provider.GitHub)
	h := http.Header{"X-Github-Delivery": {"d"}, "X-Github-Event": {"push"}}
	for _, body := range []string{"payload=%7B%7D", `{"action":"a"} x`, "\x00{}", `{"action":"opened"}`, "{\"action\":\"opened\",\"x\":\"\xff\"}"} {
		id, err := gh.Identify(provider.Params{}, h, []byte(body))
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if want := json.Valid([]byte(body)) && utf8.ValidString(body); id.JSONText != want {
			t.Errorf("%q: JSONText = %v, json.Valid and utf8.Valid say %v", body, id.JSONText, want)
		}
	}
}

func TestSignErrors(t *testing.T) {
	std, _ := provider.Lookup(provider.StandardWebhooks)
	hmacKind, _ := provider.Lookup(provider.HMAC)
	token, _ := provider.Lookup(provider.Token)
	tests := []struct {
		name    string
		k       provider.Kind
		p       provider.Params
		h       http.Header
		secrets []string
	}{
		{"standard secret not base64", std, provider.Params{}, http.Header{"Webhook-Id": {"msg_1"}}, []string{"whsec_***"}},
		{"standard without webhook-id", std, provider.Params{}, http.Header{}, []string{"whsec_c2Vj"}},
		{"hmac without header", hmacKind, provider.Params{}, http.Header{}, []string{"x"}},
		{"hmac unknown algorithm", hmacKind, provider.Params{Header: "X-Sig", Algorithm: "md5"}, http.Header{}, []string{"x"}},
		{"token without header", token, provider.Params{}, http.Header{}, []string{"x"}},
	}
	for _, tt := range tests {
		if err := tt.k.Sign(tt.p, tt.h, []byte("{}"), time.Now(), tt.secrets); err == nil {
			t.Errorf("%s: Sign = nil error, want one", tt.name)
		}
	}
	if _, err := token.Verifier(provider.Params{}); err == nil {
		t.Error("token Verifier without a header = nil error")
	}
	if _, err := hmacKind.Verifier(provider.Params{Header: "X-Sig", Encoding: "base32"}); err == nil {
		t.Error("hmac Verifier with encoding base32 = nil error")
	}
}
