// Package provider registers the kinds of webhook sender Hookfan accepts.
// A kind is one unit: its name, whether it signs a timestamp, which verify
// settings a source may give it, how to build its verifier, where its
// requests carry the event's id and type, and how to sign a sample request
// the way the provider does. Config validation, ingest and the sample
// signer in events/ all read this table, so a new kind is a new file here
// and one line in kinds.
package provider

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// Kind.Body values.
const (
	JSONRequired = "required"
	JSONDefault  = "default"
)

// Names of the kinds (a source's verify.kind).
const (
	Stripe           = "stripe"
	GitHub           = "github"
	Shopify          = "shopify"
	Slack            = "slack"
	StandardWebhooks = "standard-webhooks"
	HMAC             = "hmac"
	Token            = "token"
)

// kinds is the registration table, in the order the docs present them
// (read-only).
var kinds = []Kind{stripeKind, githubKind, shopifyKind, slackKind, standardKind, hmacKind, tokenKind}

// DefaultTolerance is the clock skew a timestamped kind accepts when its
// source sets none.
const DefaultTolerance = 300 * time.Second

// DefaultType is the event type of a request that names none where its
// kind allows that (a generic kind without a type place, a Standard
// Webhooks body without "type").
const DefaultType = "webhook"

// Kind is one registered kind of webhook sender.
type Kind struct {
	Name string
	// Timestamped kinds sign a timestamp; Params.Tolerance bounds its skew.
	Timestamped bool
	// HeaderCarries says what the request header a source names carries
	// ("signature" or "token"); empty when the kind's headers are fixed.
	HeaderCarries string
	// Algorithms and Encodings are the Params.Algorithm and Params.Encoding
	// values the kind accepts, its default first; nil when it takes none.
	Algorithms, Encodings []string
	// Prefix reports whether the kind accepts Params.Prefix.
	Prefix bool
	// Places reports whether a source says where its requests carry the
	// event id and type (Params.Event); the others have fixed places.
	Places bool
	// Body says whether the kind's bodies are JSON, so that an ordering
	// key can be read in them: JSONRequired when ingest refuses any other
	// body (it reads the id or type there), JSONDefault when the provider
	// sends JSON unless told otherwise (GitHub's form encoding, Shopify's
	// XML format: such a body carries no key); "" for a kind with Places,
	// whose bodies are JSON when its source reads a field there.
	Body string
	// TypeHeader is the request header a kind with fixed places carries
	// the event type in; "" when it reads the body (a kind with Places:
	// its source names its own, Params.Event.TypeHeader).
	TypeHeader string

	// Verifier builds the kind's verifier from a source's settings.
	Verifier func(p Params) (verify.Verifier, error)
	// Identify reads the event's id and type from a verified request. Its
	// errors wrap ErrNotJSON, ErrDuplicateKey, ErrIDMissing, ErrIDInvalid,
	// ErrTypeMissing or ErrTypeInvalid.
	Identify func(p Params, h verify.Header, body []byte) (Identity, error)
	// Sign adds to h the signature headers the provider would send with
	// body at time at, one signature per secret where the scheme carries
	// several, else with the first secret (of at least one).
	Sign func(p Params, h http.Header, body []byte, at time.Time, secrets []string) error
	// EventID says where a request carries the provider's own event id; a
	// zero Place when the id is derived from the body.
	EventID func(p Params) Place
	// Fingerprint returns what identifies one verified request of a kind that
	// signs no timestamp, for replay protection: ingest remembers the
	// SHA-256 of the source name and these bytes (shared/replayguard), and
	// answers a later request with the same ones as the original. The
	// bytes depend on what the kind's signature covers and nothing else —
	// never on an unsigned header (an event id, a type, a topic), which a
	// replayer rewrites without the secret — so it is not given what
	// Identify read. It is nil for the timestamped kinds, whose tolerance
	// already refuses a replayed request. Called only after the request
	// verified.
	Fingerprint func(p Params, h verify.Header, body []byte) ([]byte, error)
}

// Params is what a source's configuration says to its kind.
type Params struct {
	// Tolerance bounds the clock skew of a timestamped kind (default
	// DefaultTolerance).
	Tolerance time.Duration
	// Header names the request header carrying the signature or token.
	Header string
	// Algorithm, Encoding and Prefix shape a generic digest; empty
	// Algorithm and Encoding mean the kind's defaults.
	Algorithm, Encoding, Prefix string
	// Event says where a generic kind finds the event id and type.
	Event Places
}

// Places locates a generic kind's event id and type: a header or a
// dot-separated path of JSON object keys, at most one of each pair.
type Places struct {
	IDHeader, IDField, TypeHeader, TypeField string
}

// Place is where a request carries a value: a header, or the field at a
// path of nested JSON objects.
type Place struct {
	Header string
	Field  []string
}

// Identity is what a verified request says about its event.
type Identity struct {
	// ID is the provider's own event id; Type the event type.
	ID, Type string
	// Handshake marks a request that is answered and never published
	// (Slack's url_verification), with the Challenge it must echo ("" when
	// it carries none).
	Handshake bool
	Challenge string
	// JSONText reports that the kind read the body as one JSON document
	// of valid UTF-8, which holds no control character but JSON's white
	// space: of the characters SQS refuses, only U+FFFE and U+FFFF remain
	// to look for (message.JSONText).
	JSONText bool
}

// Errors of Identify.
var (
	ErrNotJSON      = errors.New("body is not one JSON document")
	ErrDuplicateKey = errors.New("body repeats a key the event id or type is read from")
	ErrIDMissing    = errors.New("event id missing")
	ErrIDInvalid    = errors.New("event id is not valid UTF-8")
	ErrTypeMissing  = errors.New("event type missing")
	ErrTypeInvalid  = errors.New("event type is not valid UTF-8")
)

// Lookup returns the kind called name.
func Lookup(name string) (Kind, bool) {
	for _, k := range kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// All returns every kind, in the order the docs present them.
func All() []Kind { return append([]Kind(nil), kinds...) }

// Names returns the names of the kinds for which keep reports true (all
// when keep is nil), in the order the docs present them.
func Names(keep func(Kind) bool) []string {
	var out []string
	for _, k := range kinds {
		if keep == nil || keep(k) {
			out = append(out, k.Name)
		}
	}
	return out
}

func (p Params) tolerance() time.Duration {
	if p.Tolerance == 0 {
		return DefaultTolerance
	}
	return p.Tolerance
}

// fixed is the EventID of a kind whose id always travels at the same place.
func fixed(pl Place) func(Params) Place { return func(Params) Place { return pl } }

// first returns a header's first value, trimmed, or "".
func first(h verify.Header, name string) string {
	if vs := h.Values(name); len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// bodyID is the provider id of an event that carries none: the hex SHA-256
// of the body, the same for a retry of the same body.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// fingerprintBySignature is the Fingerprint of a kind whose signature is an HMAC of
// the body alone: the decoded digest (never the header's spelling, which
// hex case and base64 alphabets vary) identifies the body under the
// source's secret.
func fingerprintBySignature(d *verify.Digest, h verify.Header) ([]byte, error) {
	return d.Signature(h)
}

// mac is the HMAC of parts under key, for signing samples.
func mac(newHash func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(newHash, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}
