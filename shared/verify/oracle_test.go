package verify_test

import (
	"errors"
	"fmt"
	"net/http"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookfan/hookfan/shared/verify"
)

// TestStripeAcceptsStripeGo checks that headers made by stripe-go's own test
// helper verify, and that stripe-go and we agree on what is rejected.
func TestStripeAcceptsStripeGo(t *testing.T) {
	v := &verify.Stripe{Tolerance: 300 * time.Second}
	now := time.Now()
	tests := []struct {
		name    string
		payload string
		secret  string
		at      time.Time
	}{
		{"event", `{"id":"evt_1","object":"event","type":"invoice.paid"}`, "whsec_test_secret", now},
		{"one minute old", `{"id":"evt_2","type":"charge.refunded"}`, "whsec_0123456789abcdef", now.Add(-time.Minute)},
		{"unicode body", `{"id":"evt_3","type":"customer.created","data":{"name":"Zoë Åström"}}`, "whsec_ünïcode", now.Add(30 * time.Second)},
		{"binary-ish body", "\x00\xff{not json", "whsec_x", now},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(tt.payload), Secret: tt.secret, Timestamp: tt.at})
			r := &verify.Request{Header: header("Stripe-Signature", sp.Header), Body: sp.Payload, Now: now}
			if err := v.Verify(r, []string{tt.secret}); err != nil {
				t.Fatalf("Verify(stripe-go header %q) = %v, want nil", sp.Header, err)
			}
			if err := v.Verify(r, []string{tt.secret + "x"}); !errors.Is(err, verify.ErrMismatch) {
				t.Fatalf("Verify with another secret = %v, want ErrMismatch", err)
			}
			// A rolled secret: Stripe sends one v1 per active secret.
			other := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(tt.payload), Secret: "whsec_previous", Timestamp: tt.at})
			rolled := fmt.Sprintf("%s,v1=%x", other.Header, sp.Signature)
			if err := webhook.ValidatePayload(sp.Payload, rolled, tt.secret); err != nil {
				t.Fatalf("stripe-go rejects the rolled header: %v", err)
			}
			r.Header = header("Stripe-Signature", rolled)
			if err := v.Verify(r, []string{tt.secret}); err != nil {
				t.Fatalf("Verify(second of two v1) = %v, want nil", err)
			}
			// A v0-only header: stripe-go rejects it, so do we.
			v0 := webhook.GenerateTestSignedPayload(&webhook.UnsignedPayload{Payload: []byte(tt.payload), Secret: tt.secret, Timestamp: tt.at, Scheme: "v0"})
			if webhook.ValidatePayload(v0.Payload, v0.Header, tt.secret) == nil {
				t.Fatalf("stripe-go accepts a v0-only header")
			}
			r.Header = header("Stripe-Signature", v0.Header)
			if err := v.Verify(r, []string{tt.secret}); !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("Verify(v0 only) = %v, want ErrMalformed", err)
			}
		})
	}
}

// TestStandardWebhooksLibrary checks against the Standard Webhooks Go library
// its signatures verify with us (events/sign_test.go checks that the
// library verifies the signatures our signer makes).
func TestStandardWebhooksLibrary(t *testing.T) {
	v := &verify.StandardWebhooks{Tolerance: 300 * time.Second}
	const secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	for _, payload := range []string{`{"type":"invoice.paid","data":{}}`, `{"test": 2432232314}`, "plain text"} {
		sig, err := wh.Sign("msg_2p8QnDcrW6hFJ3vS0zY4xK9aTqE", now, []byte(payload))
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{}
		h.Set(standardwebhooks.HeaderWebhookID, "msg_2p8QnDcrW6hFJ3vS0zY4xK9aTqE")
		h.Set(standardwebhooks.HeaderWebhookTimestamp, fmt.Sprint(now.Unix()))
		h.Set(standardwebhooks.HeaderWebhookSignature, sig)
		r := &verify.Request{Header: h, Body: []byte(payload), Now: now}
		if err := v.Verify(r, []string{secret}); err != nil {
			t.Errorf("Verify(library signature for %q) = %v, want nil", payload, err)
		}
		if err := wh.Verify([]byte(payload), h); err != nil {
			t.Errorf("library rejects its own signature: %v", err)
		}
	}
}
