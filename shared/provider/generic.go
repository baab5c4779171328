package provider

import (
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// hmacKind: a digest of the body in a header the source names, with the
// algorithm, encoding and prefix it names; the event id and type where the
// source says (Params.Event).
var hmacKind = Kind{
	Name:          HMAC,
	HeaderCarries: "signature",
	Algorithms:    hmacAlgorithms,
	Encodings:     hmacEncodings,
	Prefix:        true,
	Places:        true,
	Verifier: func(p Params) (verify.Verifier, error) {
		return verify.NewHMAC(p.Header, p.algorithm(), p.encoding(), p.Prefix)
	},
	Identify: identifyGeneric,
	// The signature alone, as GitHub's: an id or type header is not signed.
	Fingerprint: func(p Params, h verify.Header, _ []byte) ([]byte, error) {
		d, err := verify.NewHMAC(p.Header, p.algorithm(), p.encoding(), p.Prefix)
		if err != nil {
			return nil, err
		}
		return fingerprintBySignature(d, h)
	},
	Sign: func(p Params, h http.Header, body []byte, _ time.Time, secrets []string) error {
		newHash, ok := map[string]func() hash.Hash{"sha1": sha1.New, "sha256": sha256.New, "sha512": sha512.New}[p.algorithm()]
		if !ok {
			return fmt.Errorf("hmac algorithm %q is not supported", p.Algorithm)
		}
		if p.Header == "" {
			return errors.New("hmac needs the name of its signature header")
		}
		sum := mac(newHash, []byte(secrets[0]), body)
		enc := hex.EncodeToString(sum)
		if p.encoding() == verify.EncodingBase64 {
			enc = base64.StdEncoding.EncodeToString(sum)
		}
		h.Set(p.Header, p.Prefix+enc)
		return nil
	},
	EventID: genericID,
}

// The generic digest's settings, the defaults first.
var (
	hmacAlgorithms = []string{"sha256", "sha1", "sha512"}
	hmacEncodings  = []string{verify.EncodingHex, verify.EncodingBase64}
)

// tokenKind: a static shared token in a header the source names; the event
// id and type where the source says.
var tokenKind = Kind{
	Name:          Token,
	HeaderCarries: "token",
	Places:        true,
	Verifier: func(p Params) (verify.Verifier, error) {
		if p.Header == "" {
			return nil, errors.New("token verification needs a header name")
		}
		return &verify.Token{Header: p.Header}, nil
	},
	Identify: identifyGeneric,
	// The body's SHA-256: the token is the same in every request, so it
	// identifies nothing. The same body sent twice is one event resent;
	// whoever holds the token can still send any other body (token is the
	// weakest kind).
	Fingerprint: func(_ Params, _ verify.Header, body []byte) ([]byte, error) {
		sum := sha256.Sum256(body)
		return sum[:], nil
	},
	Sign: func(p Params, h http.Header, _ []byte, _ time.Time, secrets []string) error {
		if p.Header == "" {
			return errors.New("token needs the name of its header")
		}
		h.Set(p.Header, secrets[0])
		return nil
	},
	EventID: genericID,
}

func (p Params) algorithm() string {
	if p.Algorithm == "" {
		return hmacAlgorithms[0]
	}
	return p.Algorithm
}

func (p Params) encoding() string {
	if p.Encoding == "" {
		return hmacEncodings[0]
	}
	return p.Encoding
}

// identifyGeneric reads the id and type where the source's places say: a
// header, a JSON field (a string or a number), or by default the body's
// SHA-256 and DefaultType. A configured place that holds nothing is an
// error.
func identifyGeneric(p Params, h verify.Header, body []byte) (Identity, error) {
	ev := p.Event
	var paths [][]string
	idField, typeField := -1, -1
	if ev.IDField != "" {
		idField, paths = len(paths), append(paths, strings.Split(ev.IDField, "."))
	}
	if ev.TypeField != "" {
		typeField, paths = len(paths), append(paths, strings.Split(ev.TypeField, "."))
	}
	var id Identity
	var f []field
	var err error
	if len(paths) > 0 {
		var text bool
		if f, text, err = readFields(body, paths...); err != nil {
			return Identity{}, err
		}
		id.JSONText = text
	}
	switch {
	case ev.IDHeader != "":
		if id.ID = first(h, ev.IDHeader); id.ID == "" {
			return Identity{}, ErrIDMissing
		}
	case idField >= 0:
		if id.ID, err = f[idField].strOrNumber(ErrIDMissing, ErrIDInvalid); err != nil {
			return Identity{}, err
		}
	default:
		id.ID = bodyID(body)
	}
	switch {
	case ev.TypeHeader != "":
		if id.Type = first(h, ev.TypeHeader); id.Type == "" {
			return Identity{}, ErrTypeMissing
		}
	case typeField >= 0:
		if id.Type, err = f[typeField].strOrNumber(ErrTypeMissing, ErrTypeInvalid); err != nil {
			return Identity{}, err
		}
	default:
		id.Type = DefaultType
	}
	return id, nil
}

// genericID: the id header or field the source names. Without one the id
// is derived from the body.
func genericID(p Params) Place {
	switch {
	case p.Event.IDHeader != "":
		return Place{Header: p.Event.IDHeader}
	case p.Event.IDField != "":
		return Place{Field: strings.Split(p.Event.IDField, ".")}
	}
	return Place{}
}
