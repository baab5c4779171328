package reconcile

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/provider"
)

// FuzzStripePage: whatever a page holds, parsing never panics, and every
// event it keeps names itself as ingest would accept: an id of Stripe's
// shape, a type that can travel as an attribute, a creation time, and its
// body is the element as listed.
func FuzzStripePage(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"id":"evt_1","object":"event","type":"a.b","created":1700000000}],"has_more":false}`))
	f.Add([]byte(`{"object":"list","data":[{"id":"evt_1","id":"evt_2","object":"event","type":"a","created":1}],"has_more":true}`))
	f.Add([]byte(`{"object":"list","data":[{"id":"evt_\u0000","object":"event","type":"a\u2028","created":-1}, 7, null, "x"]}`))
	f.Add([]byte(`{"object":"list","data":null,"has_more":true}`))
	f.Add([]byte(`[]`))
	kind, _ := provider.Lookup(provider.Stripe)
	f.Fuzz(func(t *testing.T, body []byte) {
		events, last, more, err := parseStripePage(body, kind, provider.Params{}, "stripe")
		if err != nil {
			if len(events) != 0 || last != "" || more {
				t.Fatalf("error %v with results", err)
			}
			return
		}
		for _, e := range events {
			if e.err != nil {
				continue
			}
			if !validStripeID(e.ProviderID) || !message.ValidAttribute(e.Type) || !message.ValidID(e.ID) || e.At.Unix() <= 0 || !json.Valid(e.Body) {
				t.Fatalf("kept %+v", e.found)
			}
		}
		if last != "" && !validStripeID(last) {
			t.Fatalf("cursor %q", last)
		}
	})
}

// FuzzGitHubPage: parsing never panics, and every attempt it keeps has a
// positive id, a guid of hex and '-', a type of lowercase letters, '_'
// and at most one '.'.
func FuzzGitHubPage(f *testing.F) {
	f.Add([]byte(`[{"id":1,"guid":"0b989ba4-242f-11e5-81e1-c7b6966d2516","delivered_at":"2026-12-01T10:00:00Z","status_code":200,"event":"push","action":null}]`))
	f.Add([]byte(`[{"id":-1,"guid":"","delivered_at":"","event":"","action":"x y"}, 1, "a", null]`))
	f.Add([]byte(`{"id":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		attempts, _, err := parseGitHubPage(body)
		if err != nil && len(attempts) != 0 {
			t.Fatalf("error %v with attempts", err)
		}
		for _, a := range attempts {
			if a.id <= 0 || !githubGUID.MatchString(a.guid) || !message.ValidAttribute(a.typ) || strings.Count(a.typ, ".") > 1 || a.at.IsZero() {
				t.Fatalf("kept %+v", a)
			}
		}
	})
}

// FuzzNextLink: a next link is followed only on the API's own origin.
func FuzzNextLink(f *testing.F) {
	f.Add(`<https://api.github.com/x?cursor=1>; rel="next"`)
	f.Add(`<https://evil.example/x>; rel="next", <https://api.github.com/y>; rel="prev"`)
	f.Add(`<//evil.example/x>; rel="next"`)
	api := mustURL(f, "https://api.github.com")
	f.Fuzz(func(t *testing.T, link string) {
		h := map[string][]string{"Link": {link}}
		u, err := nextLink(h, api)
		if err == nil && u != nil && !sameOrigin(api, u) {
			t.Fatalf("followed %s", u)
		}
	})
}

// An App's credential becomes an RS256 token GitHub accepts: iss the
// App's id, issued a minute back, expiring within ten minutes, signed
// with its key.
func TestGitHubAppToken(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	pemKey := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	secret, _ := json.Marshal(map[string]any{"appId": 1234, "privateKey": string(pemKey)})
	at := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	tok, err := githubAuth(string(secret), at)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		t.Fatalf("token %q is not a JWT", tok)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(&key.PublicKey, crypto.SHA256, sum[:], sig); err != nil {
		t.Fatalf("signature: %v", err)
	}
	claims, _ := base64.RawURLEncoding.DecodeString(parts[1])
	var c struct{ Iat, Exp, Iss int64 }
	if err := json.Unmarshal(claims, &c); err != nil || c.Iss != 1234 || c.Iat != at.Unix()-60 || c.Exp-at.Unix() > 600 || c.Exp <= at.Unix() {
		t.Errorf("claims %s (%v)", claims, err)
	}
	for _, bad := range []string{``, `tok en`, `{"appId": 0, "privateKey": "x"}`, `{"appId": 5, "privateKey": "not pem"}`, `{"appId": "x"}`} {
		if _, err := githubAuth(bad, at); err == nil {
			t.Errorf("credential %q accepted", bad)
		}
	}
	if got, err := githubAuth("  ghp_abc\n", at); err != nil || got != "ghp_abc" {
		t.Errorf("token: %q, %v", got, err)
	}
}

func mustURL(tb testing.TB, raw string) *url.URL {
	tb.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return u
}
