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
	Name: Shopify,
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
	// The signature and the topic: Shopify sends one resource's body under
	// several topics (orders/create, orders/updated and orders/paid can
	// carry the same order bytes), so the signature alone would drop real
	// events. The digest has a fixed length, so digest + topic is
	// unambiguous.
	Fingerprint: func(_ Params, h verify.Header, _ []byte, id Identity) ([]byte, error) {
		sig, err := fingerprintBySignature(verify.Shopify(), h)
		if err != nil {
			return nil, err
		}
		return append(sig, id.Type...), nil
	},
}
