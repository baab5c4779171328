package events

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

// WithEventID returns a copy of the sample carrying id as the provider's own
// event id, where the sample's kind keeps it (shared/provider): a body
// field (Stripe "id", Slack "event_id"), a header (GitHub, Shopify,
// Standard Webhooks), or for the generic kinds the place ev names. A
// generic source without an id place derives its id from the body, so the
// body's top-level "id" is set instead. For a kind with replay protection
// (it signs no timestamp: github, shopify, hmac, token) a body sent again
// under a new header id is a replay, answered as the original; two real
// events never share a body, so the sample's Vary member (a commit, an order
// id) gets a value derived from the id, in the shape of the one it replaces,
// and the body is otherwise kept byte for byte. A body without one (not a
// sample's) gets the id as its first key, SampleIDKey, instead. The local
// sender and the load test use it to make each send a distinct event;
// sending the same id twice imitates a provider's retry.
func WithEventID(s Sample, id string, ev config.EventFields) (Sample, error) {
	k, ok := provider.Lookup(s.Kind)
	if !ok {
		return s, fmt.Errorf("sample %s/%s: unknown kind", s.Kind, s.Name)
	}
	s = s.Clone()
	switch place := k.EventID(provider.Params{Event: ev.Places()}); {
	case place.Header != "" && k.Fingerprint != nil:
		s.Header.Set(place.Header, id)
		if start, end, ok := valueSpan(s.Body, s.Vary); ok {
			body := slices.Concat(s.Body[:start], shaped(s.Body[start:end], id), s.Body[end:])
			s.Body = body
			return s, nil
		}
		return stamp(s, id), nil
	case place.Header != "":
		s.Header.Set(place.Header, id)
		return s, nil
	case len(place.Field) > 0:
		return setBodyField(s, place.Field, id)
	default:
		return setBodyField(s, []string{"id"}, id)
	}
}

// shaped is a JSON value like raw (a string or a number), its letters and
// digits replaced by ones drawn from id's SHA-256: digits stay digits (a
// number's first not 0), a hexadecimal string stays hexadecimal, letters
// keep their case, and a prefix up to the last '_' stays ("ord_").
func shaped(raw []byte, id string) []byte {
	out := slices.Clone(raw)
	from := 0
	if i := bytes.LastIndexByte(raw, '_'); i >= 0 {
		from = i + 1
	}
	// A string of hexadecimal digits with a letter among them (a commit).
	hexOnly := raw[0] == '"' && bytes.ContainsAny(raw[from:], "abcdef")
	for _, c := range raw[from:] {
		if c != '"' && !strings.ContainsRune("0123456789abcdef", rune(c)) {
			hexOnly = false
		}
	}
	sum := sha256.Sum256([]byte(id))
	pool := sum[:]
	for i := from; i < len(out); i++ {
		if len(pool) == 0 {
			next := sha256.Sum256(sum[:])
			sum, pool = next, next[:]
		}
		b := pool[0]
		switch c := out[i]; {
		case hexOnly && (c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
			out[i] = "0123456789abcdef"[b%16]
		case c >= '0' && c <= '9':
			out[i] = '0' + b%10
			if i == 0 {
				out[i] = '1' + b%9
			}
		case c >= 'a' && c <= 'z':
			out[i] = 'a' + b%26
		case c >= 'A' && c <= 'Z':
			out[i] = 'A' + b%26
		default:
			continue
		}
		pool = pool[1:]
	}
	return out
}

// SampleIDKey is the key WithEventID writes a header id under in the body
// of a kind with replay protection.
const SampleIDKey = "hookfan_sample_id"

// stamp writes "SampleIDKey": id as the first member of a JSON object
// body, leaving every other byte as it was (re-encoding would turn large
// integers such as Shopify's ids into floats). Other bodies are returned
// unchanged.
func stamp(s Sample, id string) Sample {
	trimmed := bytes.TrimLeft(s.Body, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' || !json.Valid(s.Body) {
		return s
	}
	at := len(s.Body) - len(trimmed) + 1 // just after the '{'
	member, _ := json.Marshal(SampleIDKey)
	value, _ := json.Marshal(id)
	member = append(append(member, ':'), value...)
	if rest := bytes.TrimLeft(s.Body[at:], " \t\r\n"); rest[0] != '}' {
		member = append(member, ',')
	}
	body := make([]byte, 0, len(s.Body)+len(member))
	body = append(append(append(body, s.Body[:at]...), member...), s.Body[at:]...)
	s.Body = body
	return s
}

// setBodyField sets a string at a path of a JSON object body. A member
// the body has is replaced where it stands, every other byte kept (the
// provider's key order, spacing and numbers); a missing one is added,
// creating intermediate objects as needed, which re-encodes the body.
func setBodyField(s Sample, path []string, value string) (Sample, error) {
	v, _ := json.Marshal(value)
	if start, end, ok := valueSpan(s.Body, path); ok {
		body := make([]byte, 0, len(s.Body)-(end-start)+len(v))
		body = append(append(append(body, s.Body[:start]...), v...), s.Body[end:]...)
		s.Body = body
		return s, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(s.Body, &doc); err != nil {
		return s, fmt.Errorf("sample %s/%s: body is not a JSON object: %w", s.Kind, s.Name, err)
	}
	obj := doc
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
	body, err := json.Marshal(doc)
	if err != nil {
		return s, err
	}
	s.Body = body
	return s, nil
}

// valueSpan finds the bytes of the value at path in a JSON object body:
// [start, end). ok is false when the body is not valid JSON or has no such
// member.
func valueSpan(body []byte, path []string) (start, end int, ok bool) {
	if len(path) == 0 || !json.Valid(body) {
		return 0, 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0, 0, false
	}
	for depth := 0; ; {
		if !dec.More() {
			return 0, 0, false
		}
		t, err := dec.Token()
		if err != nil {
			return 0, 0, false
		}
		key, _ := t.(string)
		if key != path[depth] {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return 0, 0, false
			}
			continue
		}
		if depth == len(path)-1 {
			// The value starts after the colon and any space.
			at := int(dec.InputOffset())
			for at < len(body) && (body[at] == ':' || body[at] == ' ' || body[at] == '\t' || body[at] == '\r' || body[at] == '\n') {
				at++
			}
			var raw json.RawMessage
			if dec.Decode(&raw) != nil {
				return 0, 0, false
			}
			return at, int(dec.InputOffset()), true
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return 0, 0, false
		}
		depth++
	}
}
