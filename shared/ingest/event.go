package ingest

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/verify"
)

// Provider headers that carry an event's id and type.
const (
	headerGitHubDelivery = "X-GitHub-Delivery"
	headerGitHubEvent    = "X-GitHub-Event"
	headerShopifyID      = "X-Shopify-Webhook-Id"
	headerShopifyTopic   = "X-Shopify-Topic"
)

// DefaultType is the type of a generic (hmac, token) event whose source
// configures no type header or field.
const DefaultType = "webhook"

// maxAttributeBytes bounds an event id or type taken from a request.
const maxAttributeBytes = 256

// slackURLVerification is the type of Slack's endpoint handshake.
const slackURLVerification = "url_verification"

// identity is what a request says about its event.
type identity struct {
	providerID string // the provider's own event id
	typ        string
	// challenge is set for Slack's url_verification handshake, which is
	// answered and never published.
	challenge    string
	isChallenge  bool
	challengeSet bool
}

// identifier derives a verified request's identity, or the code of the
// reason it cannot.
type identifier func(h verify.Header, body []byte) (identity, string)

// EventID is the Hookfan event id: "evt_" and the first 32 hex digits of
// SHA-256(source + "\x00" + provider event id). A provider's retry of an
// event gets the same id; it never contains '.'.
func EventID(source, providerID string) string {
	var out [eventIDLen]byte
	putEventID(&out, source, providerID)
	return string(out[:])
}

// eventIDLen is the length of every event id.
const eventIDLen = len("evt_") + 32

// putEventID writes EventID(source, providerID) into out.
func putEventID(out *[eventIDLen]byte, source, providerID string) {
	var buf [512]byte // sources are at most 64 bytes, validated ids 256: no allocation
	in := append(append(append(buf[:0], source...), 0), providerID...)
	sum := sha256.Sum256(in)
	copy(out[:], "evt_")
	hex.Encode(out[4:], sum[:16])
}

// bodyID is the provider id of an event that has none: the hex SHA-256 of
// the body, identical for a retry of the same body.
func bodyID(body []byte) string {
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// newIdentifier builds the identifier of a source's kind.
func newIdentifier(src config.Source) identifier {
	switch src.Verify.Kind {
	case config.KindStripe:
		return identifyStripe
	case config.KindGitHub:
		return identifyGitHub
	case config.KindShopify:
		return identifyShopify
	case config.KindSlack:
		return identifySlack
	case config.KindStandardWebhooks:
		return identifyStandard
	default:
		return genericIdentifier(src.Event)
	}
}

var (
	pathsStripe   = []jsonPath{{"id"}, {"type"}}
	pathsGitHub   = []jsonPath{{"action"}}
	pathsSlack    = []jsonPath{{"event_id"}, {"type"}, {"event", "type"}, {"challenge"}}
	pathsStandard = []jsonPath{{"type"}}
)

func identifyStripe(_ verify.Header, body []byte) (identity, string) {
	var v [2]jsonValue
	if scanJSON(body, pathsStripe, v[:]) != nil {
		return identity{}, CodeBodyNotJSON
	}
	id, ok := v[0].text()
	if !ok || v[0].kind != 's' {
		return identity{}, CodeEventIDMissing
	}
	typ, ok := v[1].text()
	if !ok || v[1].kind != 's' {
		return identity{}, CodeEventTypeMissing
	}
	return identity{providerID: id, typ: typ}, ""
}

// identifyGitHub takes X-GitHub-Delivery and X-GitHub-Event, and appends
// "." + the body's "action" when the body is a JSON object with a string
// action. A body that is not JSON is still accepted with the bare type.
func identifyGitHub(h verify.Header, body []byte) (identity, string) {
	id := first(h, headerGitHubDelivery)
	if id == "" {
		return identity{}, CodeEventIDMissing
	}
	typ := first(h, headerGitHubEvent)
	if typ == "" {
		return identity{}, CodeEventTypeMissing
	}
	var v [1]jsonValue
	if scanJSON(body, pathsGitHub, v[:]) == nil && v[0].kind == 's' {
		if action, ok := v[0].text(); ok && action != "" {
			typ += "." + action
		}
	}
	return identity{providerID: id, typ: typ}, ""
}

func identifyShopify(h verify.Header, _ []byte) (identity, string) {
	id := first(h, headerShopifyID)
	if id == "" {
		return identity{}, CodeEventIDMissing
	}
	typ := first(h, headerShopifyTopic)
	if typ == "" {
		return identity{}, CodeEventTypeMissing
	}
	return identity{providerID: id, typ: typ}, ""
}

// identifySlack reads event_id and event.type. Envelopes without an event
// (app_rate_limited) take the top-level type and, having no id, the body's
// SHA-256. url_verification is flagged for the handshake answer.
func identifySlack(_ verify.Header, body []byte) (identity, string) {
	var v [4]jsonValue
	if scanJSON(body, pathsSlack, v[:]) != nil {
		return identity{}, CodeBodyNotJSON
	}
	top, _ := v[1].text()
	if v[1].kind == 's' && top == slackURLVerification {
		challenge, ok := v[3].text()
		return identity{isChallenge: true, challenge: challenge, challengeSet: ok && v[3].kind == 's'}, ""
	}
	var out identity
	if id, ok := v[0].text(); ok && v[0].kind == 's' {
		out.providerID = id
	} else {
		out.providerID = bodyID(body)
	}
	switch typ, ok := v[2].text(); {
	case ok && v[2].kind == 's':
		out.typ = typ
	case v[1].kind == 's':
		out.typ = top
	default:
		return identity{}, CodeEventTypeMissing
	}
	return out, ""
}

// identifyStandard takes webhook-id (or svix-id) and the body's "type",
// falling back to DefaultType: the spec recommends but does not require it.
func identifyStandard(h verify.Header, body []byte) (identity, string) {
	idHeader, _, _ := verify.StandardHeaders(h)
	id := first(h, idHeader)
	if id == "" {
		return identity{}, CodeEventIDMissing
	}
	var v [1]jsonValue
	if scanJSON(body, pathsStandard, v[:]) != nil {
		return identity{}, CodeBodyNotJSON
	}
	typ := DefaultType
	if t, ok := v[0].text(); ok && v[0].kind == 's' {
		typ = t
	}
	return identity{providerID: id, typ: typ}, ""
}

// genericIdentifier reads the id and type where the source's event block
// says: a header, a JSON field (string or number), or by default the body's
// SHA-256 and DefaultType. A configured place that holds nothing is an error.
func genericIdentifier(ev config.EventFields) identifier {
	var paths []jsonPath
	idField, typeField := -1, -1
	if ev.IDField != "" {
		idField = len(paths)
		paths = append(paths, strings.Split(ev.IDField, "."))
	}
	if ev.TypeField != "" {
		typeField = len(paths)
		paths = append(paths, strings.Split(ev.TypeField, "."))
	}
	return func(h verify.Header, body []byte) (identity, string) {
		var v [2]jsonValue
		if len(paths) > 0 && scanJSON(body, paths, v[:]) != nil {
			return identity{}, CodeBodyNotJSON
		}
		var out identity
		switch {
		case ev.IDHeader != "":
			out.providerID = first(h, ev.IDHeader)
		case idField >= 0:
			out.providerID, _ = v[idField].text()
		default:
			out.providerID = bodyID(body)
		}
		if out.providerID == "" {
			return identity{}, CodeEventIDMissing
		}
		switch {
		case ev.TypeHeader != "":
			out.typ = first(h, ev.TypeHeader)
		case typeField >= 0:
			out.typ, _ = v[typeField].text()
		default:
			out.typ = DefaultType
		}
		if out.typ == "" {
			return identity{}, CodeEventTypeMissing
		}
		return out, ""
	}
}

// first returns a header's first value, or "".
func first(h verify.Header, name string) string {
	if vs := h.Values(name); len(vs) > 0 {
		return strings.TrimSpace(vs[0])
	}
	return ""
}

// validAttribute reports whether s may travel as an SNS string attribute and
// be matched by filter policies: 1 to 256 bytes of valid UTF-8 without
// control characters.
func validAttribute(s string) bool {
	if s == "" || len(s) > maxAttributeBytes {
		return false
	}
	ascii := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f {
			return false
		} else if c >= utf8.RuneSelf {
			ascii = false
		}
	}
	if ascii {
		return true // the common case: nothing to decode
	}
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}
