package provider

import (
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// GitHub's headers for the event.
const (
	headerGitHubDelivery = "X-GitHub-Delivery"
	headerGitHubEvent    = "X-GitHub-Event"
	headerGitHubSHA1     = "X-Hub-Signature" // the legacy signature, sent alongside
)

// githubKind: X-Hub-Signature-256 over the body; X-GitHub-Delivery and
// X-GitHub-Event, plus "." and the body's "action" when the body is a JSON
// object with a string action. A body that is not JSON (a form-encoded
// payload) keeps the bare event type.
var githubKind = Kind{
	Name:       GitHub,
	Body:       JSONDefault,
	TypeHeader: headerGitHubEvent,
	Verifier: func(Params) (verify.Verifier, error) {
		return verify.GitHub(), nil
	},
	Identify: func(_ Params, h verify.Header, body []byte) (Identity, error) {
		id := Identity{ID: first(h, headerGitHubDelivery), Type: first(h, headerGitHubEvent)}
		switch {
		case id.ID == "":
			return Identity{}, ErrIDMissing
		case id.Type == "":
			return Identity{}, ErrTypeMissing
		}
		f, text, err := readFields(body, []string{"action"})
		switch {
		case errors.Is(err, ErrNotJSON):
			return id, nil
		case err != nil:
			return Identity{}, err
		}
		id.JSONText = text
		action, err := f[0].str(ErrTypeMissing, ErrTypeInvalid)
		switch {
		case errors.Is(err, ErrTypeInvalid):
			return Identity{}, err
		case err == nil && action != "":
			id.Type += "." + action
		}
		return id, nil
	},
	Sign: func(_ Params, h http.Header, body []byte, _ time.Time, secrets []string) error {
		key := []byte(secrets[0])
		h.Set(verify.HeaderGitHubSignature, "sha256="+hex.EncodeToString(mac(sha256.New, key, body)))
		h.Set(headerGitHubSHA1, "sha1="+hex.EncodeToString(mac(sha1.New, key, body)))
		return nil
	},
	EventID: fixed(Place{Header: headerGitHubDelivery}),
	// The signature alone: X-GitHub-Delivery and X-GitHub-Event are not
	// signed, and one body is never sent as two events (each event type
	// has its own payload), so a copy re-typed to reach other destinations
	// is a replay too.
	Fingerprint: func(_ Params, h verify.Header, _ []byte) ([]byte, error) {
		return fingerprintBySignature(verify.GitHub(), h)
	},
}
