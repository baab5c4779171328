package verify

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"hash"
	"strings"
)

// Header names of the digest schemes.
const (
	HeaderGitHubSignature  = "X-Hub-Signature-256"
	HeaderShopifySignature = "X-Shopify-Hmac-Sha256"
)

// Encodings of a digest in a header.
const (
	EncodingHex    = "hex"
	EncodingBase64 = "base64"
)

// Digest verifies an HMAC of the body carried in one header, optionally
// after a fixed prefix: GitHub, Shopify and the generic hmac kind.
type Digest struct {
	header  string
	prefix  string
	newHash func() hash.Hash
	size    int
	base64  bool
}

// GitHub verifies X-Hub-Signature-256: "sha256=" + hex HMAC-SHA256 of the body.
func GitHub() *Digest {
	return &Digest{header: HeaderGitHubSignature, prefix: "sha256=", newHash: sha256.New, size: sha256.Size}
}

// Shopify verifies X-Shopify-Hmac-Sha256: base64 HMAC-SHA256 of the body.
func Shopify() *Digest {
	return &Digest{header: HeaderShopifySignature, newHash: sha256.New, size: sha256.Size, base64: true}
}

// NewHMAC builds the generic kind: header carries prefix + the hex or base64
// HMAC of the body with algorithm sha1, sha256 or sha512.
func NewHMAC(header, algorithm, encoding, prefix string) (*Digest, error) {
	if header == "" {
		return nil, fmt.Errorf("hmac verification needs a header name")
	}
	d := &Digest{header: header, prefix: prefix}
	switch algorithm {
	case "sha1":
		d.newHash, d.size = sha1.New, sha1.Size
	case "sha256":
		d.newHash, d.size = sha256.New, sha256.Size
	case "sha512":
		d.newHash, d.size = sha512.New, sha512.Size
	default:
		return nil, fmt.Errorf("hmac algorithm %q is not supported; use sha1, sha256 or sha512", algorithm)
	}
	switch encoding {
	case EncodingHex:
	case EncodingBase64:
		d.base64 = true
	default:
		return nil, fmt.Errorf("hmac encoding %q is not supported; use hex or base64", encoding)
	}
	return d, nil
}

// Header is the name of the header carrying the signature.
func (d *Digest) Header() string { return d.header }

// Verify checks the header's digest against an HMAC of the body under each
// secret value.
func (d *Digest) Verify(r *Request, secrets []string) error {
	v, err := single(r.Header, d.header)
	if err != nil {
		return err
	}
	var want [sha512.Size]byte
	n, err := d.Parse(v, want[:])
	if err != nil {
		return err
	}
	usable := 0
	for _, s := range secrets {
		if s == "" {
			continue
		}
		usable++
		if hmac.Equal(mac(d.newHash, []byte(s), r.Body), want[:n]) {
			return nil
		}
	}
	return noMatch(d.header, usable)
}

// Signature returns the digest a request carries, decoded: the bytes
// Verify compared, whatever the header's spelling (hex case, base64
// alphabet, padding). Replay protection keys on it (shared/provider).
func (d *Digest) Signature(h Header) ([]byte, error) {
	v, err := single(h, d.header)
	if err != nil {
		return nil, err
	}
	dst := make([]byte, d.size)
	n, err := d.Parse(v, dst)
	if err != nil {
		return nil, err
	}
	return dst[:n], nil
}

// Parse decodes a header value into dst (at least the digest size) and
// returns the digest's length. The prefix must match exactly; hex digits may
// be of either case; base64 may be standard or URL-safe, padded or not.
func (d *Digest) Parse(v string, dst []byte) (int, error) {
	enc, ok := strings.CutPrefix(strings.TrimSpace(v), d.prefix)
	if !ok {
		return 0, fmt.Errorf("%s does not start with %q: %w", d.header, d.prefix, ErrMalformed)
	}
	if d.base64 {
		if n, ok := decodeBase64(dst[:d.size], enc, d.size); ok {
			return n, nil
		}
		return 0, fmt.Errorf("%s is not the base64 of a %d-byte digest: %w", d.header, d.size, ErrMalformed)
	}
	if !decodeHex(dst[:d.size], enc) {
		return 0, fmt.Errorf("%s is not the hex of a %d-byte digest: %w", d.header, d.size, ErrMalformed)
	}
	return d.size, nil
}

// decodeHex decodes s, of either case, into dst when it is exactly
// 2*len(dst) hex digits.
func decodeHex(dst []byte, s string) bool {
	if len(s) != 2*len(dst) {
		return false
	}
	_, err := hex.Decode(dst, []byte(s))
	return err == nil
}

// Strict base64 decoders (read-only after init).
var (
	strictStd    = base64.StdEncoding.Strict()
	strictURL    = base64.URLEncoding.Strict()
	strictRawStd = base64.RawStdEncoding.Strict()
	strictRawURL = base64.RawURLEncoding.Strict()
)

// decodeBase64 decodes s into dst when it is exactly size bytes in one of the
// four base64 alphabets/paddings, canonically encoded (strict: unused
// trailing bits must be zero, so one digest has one spelling per alphabet).
func decodeBase64(dst []byte, s string, size int) (int, bool) {
	var enc *base64.Encoding
	switch {
	case len(s) == base64.StdEncoding.EncodedLen(size) && !strings.ContainsAny(s, "-_"):
		enc = strictStd
	case len(s) == base64.StdEncoding.EncodedLen(size):
		enc = strictURL
	case len(s) == base64.RawStdEncoding.EncodedLen(size) && !strings.ContainsAny(s, "-_"):
		enc = strictRawStd
	case len(s) == base64.RawStdEncoding.EncodedLen(size):
		enc = strictRawURL
	default:
		return 0, false
	}
	var src [2 * sha512.Size]byte // EncodedLen(64) = 88 fits
	var buf [sha512.Size + 2]byte // DecodedLen may exceed size by up to 2
	n, err := enc.Decode(buf[:enc.DecodedLen(len(s))], src[:copy(src[:], s)])
	if err != nil || n != size {
		return 0, false
	}
	return copy(dst, buf[:n]), true
}
