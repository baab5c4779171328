package provider

import (
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// Shopify's headers for the event.
const (
	headerShopifyID    = "X-Shopify-Webhook-Id"
	headerShopifyTopic = "X-Shopify-Topic"
)

// shopifyKind: X-Shopify-Hmac-Sha256 over the body; X-Shopify-Webhook-Id
// and X-Shopify-Topic.
var shopifyKind = Kind{
	Name:       Shopify,
	Body:       JSONDefault,
	TypeHeader: headerShopifyTopic,
	Verifier: func(Params) (verify.Verifier, error) {
		return verify.Shopify(), nil
	},
	Identify: func(_ Params, h verify.Header, _ []byte) (Identity, error) {
		id := Identity{ID: first(h, headerShopifyID), Type: first(h, headerShopifyTopic)}
		switch {
		case id.ID == "":
			return Identity{}, ErrIDMissing
		case id.Type == "":
			return Identity{}, ErrTypeMissing
		}
		return id, nil
	},
	Sign: func(_ Params, h http.Header, body []byte, _ time.Time, secrets []string) error {
		h.Set(verify.HeaderShopifySignature, base64.StdEncoding.EncodeToString(mac(sha256.New, []byte(secrets[0]), body)))
		return nil
	},
	EventID: fixed(Place{Header: headerShopifyID}),
	// The signature alone, as GitHub's: it covers the body and nothing
	// else, so the topic and the webhook id are whatever a replayer writes
	// (orders/create re-sent as orders/paid would reach another
	// destination). One order's bytes sent under two topics are therefore
	// one event: the first topic's (docs/security.md#replay-protection).
	Fingerprint: func(_ Params, h verify.Header, _ []byte) ([]byte, error) {
		return fingerprintBySignature(verify.Shopify(), h)
	},
}
