package events_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/verify"
)

// sampleVerify is the verify block each sample kind is signed with here.
var sampleVerify = map[string]config.Verify{
	provider.Stripe:           {Kind: provider.Stripe},
	provider.GitHub:           {Kind: provider.GitHub},
	provider.Shopify:          {Kind: provider.Shopify},
	provider.Slack:            {Kind: provider.Slack},
	provider.StandardWebhooks: {Kind: provider.StandardWebhooks},
	provider.HMAC:             {Kind: provider.HMAC, Header: "X-Acme-Signature", Algorithm: "sha512", Encoding: "base64", Prefix: "sha512="},
	provider.Token:            {Kind: provider.Token, Header: "X-Hook-Token"},
}

func secretFor(kind string) string {
	if kind == provider.StandardWebhooks {
		return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	}
	return "test-secret-for-" + kind
}

func TestSamplesCoverEveryKind(t *testing.T) {
	samples, err := events.Samples()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range samples {
		got[s.Kind]++
		if len(s.Body) == 0 {
			t.Errorf("%s/%s: empty body", s.Kind, s.Name)
		}
		if s.ContentType() != "application/json" && s.ContentType() != "application/json; charset=utf-8" {
			t.Errorf("%s/%s: Content-Type %q, want JSON", s.Kind, s.Name, s.ContentType())
		}
		if !json.Valid(s.Body) {
			t.Errorf("%s/%s: body is not valid JSON", s.Kind, s.Name)
		}
	}
	for _, kind := range provider.Names(nil) {
		if got[kind] == 0 {
			t.Errorf("no sample for kind %q", kind)
		}
	}
}

func TestLoad(t *testing.T) {
	s, err := events.Load("github", "pull_request.opened")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.Header.Get("X-GitHub-Event"), "pull_request"; got != want {
		t.Errorf("X-GitHub-Event = %q, want %q", got, want)
	}
	for _, bad := range [][2]string{{"github", "nope"}, {"../events", "x"}, {"github", "../stripe/payment_intent.succeeded"}} {
		if _, err := events.Load(bad[0], bad[1]); err == nil {
			t.Errorf("Load(%q, %q) = nil error, want one", bad[0], bad[1])
		}
	}
}

// TestSignVerifies signs every sample and checks the result with our
// verifiers: the signer and the verifier were written separately.
func TestSignVerifies(t *testing.T) {
	samples, err := events.Samples()
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, s := range samples {
		t.Run(s.Kind+"/"+s.Name, func(t *testing.T) {
			cfg := sampleVerify[s.Kind]
			h, err := events.Sign(cfg, s, now, secretFor(s.Kind))
			if err != nil {
				t.Fatal(err)
			}
			kind, _ := provider.Lookup(cfg.Kind)
			v, err := kind.Verifier(cfg.Params())
			if err != nil {
				t.Fatal(err)
			}
			if err := v.Verify(&verify.Request{Header: h, Body: s.Body, Now: now}, []string{secretFor(s.Kind)}); err != nil {
				t.Fatalf("Verify(signed sample) = %v", err)
			}
			if s.Header.Get("Stripe-Signature")+s.Header.Get("X-Hub-Signature-256")+s.Header.Get("webhook-signature") != "" {
				t.Fatalf("Sign modified the sample's own headers")
			}
		})
	}
}

// TestStripeSignaturesPassStripeGo: what our signer makes, stripe-go accepts.
func TestStripeSignaturesPassStripeGo(t *testing.T) {
	s := events.MustLoad("stripe", "payment_intent.succeeded")
	now := time.Now()
	for _, at := range []time.Time{now, now.Add(-4 * time.Minute)} {
		h, err := events.Sign(config.Verify{Kind: provider.Stripe}, s, at, "whsec_current", "whsec_previous")
		if err != nil {
			t.Fatal(err)
		}
		for _, secret := range []string{"whsec_current", "whsec_previous"} {
			if err := webhook.ValidatePayload(s.Body, h.Get("Stripe-Signature"), secret); err != nil {
				t.Errorf("stripe-go ValidatePayload(secret %s, at %v) = %v", secret, at, err)
			}
		}
		if err := webhook.ValidatePayload(s.Body, h.Get("Stripe-Signature"), "whsec_other"); err == nil {
			t.Errorf("stripe-go accepts a header for another secret")
		}
	}
}

// TestStandardSignaturesPassLibrary: what our signer makes, the Standard
// Webhooks library accepts.
func TestStandardSignaturesPassLibrary(t *testing.T) {
	s := events.MustLoad("standard-webhooks", "invoice.paid")
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	h, err := events.Sign(config.Verify{Kind: provider.StandardWebhooks}, s, time.Now(), "whsec_c2Vjb25kIGtleQ==", secret)
	if err != nil {
		t.Fatal(err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	if err := wh.Verify(s.Body, h); err != nil {
		t.Fatalf("library Verify = %v", err)
	}
}

// TestGitHubPublishedExample checks the signer against GitHub's example.
func TestGitHubPublishedExample(t *testing.T) {
	s := events.Sample{Kind: "github", Name: "example", Body: []byte("Hello, World!"), Header: http.Header{}}
	h, err := events.Sign(config.Verify{Kind: provider.GitHub}, s, time.Now(), "It's a Secret to Everybody")
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Get("X-Hub-Signature-256"), "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"; got != want {
		t.Fatalf("X-Hub-Signature-256 = %s, want %s", got, want)
	}
}

func TestProxyRequest(t *testing.T) {
	h := http.Header{}
	h.Add("X-Multi", "a")
	h.Add("X-Multi", "b")
	req := events.ProxyRequest("stripe", h, []byte("{}"))
	if req.Headers["X-Multi"] != "b" || len(req.MultiValueHeaders["X-Multi"]) != 2 {
		t.Errorf("headers = %v / %v, want last value single and both multi", req.Headers, req.MultiValueHeaders)
	}
	if req.PathParameters["source"] != "stripe" || req.HTTPMethod != http.MethodPost || req.Body != "{}" {
		t.Errorf("request = %+v", req)
	}
}

func TestSignErrors(t *testing.T) {
	s := events.MustLoad("standard-webhooks", "invoice.paid")
	tests := []struct {
		name    string
		cfg     config.Verify
		sample  events.Sample
		secrets []string
	}{
		{"no secret", config.Verify{Kind: provider.Stripe}, s, nil},
		{"unknown kind", config.Verify{Kind: "md5"}, s, []string{"x"}},
		{"standard secret not base64", config.Verify{Kind: provider.StandardWebhooks}, s, []string{"whsec_***"}},
		{"standard sample without id", config.Verify{Kind: provider.StandardWebhooks}, events.Sample{Body: s.Body, Header: http.Header{}}, []string{"whsec_c2Vj"}},
		{"hmac without header", config.Verify{Kind: provider.HMAC}, s, []string{"x"}},
		{"token without header", config.Verify{Kind: provider.Token}, s, []string{"x"}},
	}
	for _, tt := range tests {
		if _, err := events.Sign(tt.cfg, tt.sample, time.Now(), tt.secrets...); err == nil {
			t.Errorf("%s: Sign = nil error, want one", tt.name)
		}
	}
}
