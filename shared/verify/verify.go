// Package verify authenticates incoming webhook requests: one Verifier per
// verification kind (stripe, github, shopify, slack, standard-webhooks, hmac,
// token), built once from a source's config and used for every request.
//
// Verifiers fail closed. Signatures are compared in constant time, every
// active secret value is tried (rotation), and timestamped schemes reject
// timestamps outside the tolerance in either direction. Errors never quote a
// secret or a signature: they wrap one of the sentinel errors below with a
// fixed description of what was wrong.
package verify

import (
	"crypto/hmac"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Sentinel errors. Every error a Verifier returns wraps exactly one of them.
var (
	// ErrMissing means a header the scheme needs is absent or empty.
	ErrMissing = errors.New("signature missing")
	// ErrMalformed means a header is present but cannot be parsed, or it
	// carries no signature of a version this scheme accepts.
	ErrMalformed = errors.New("signature malformed")
	// ErrTimestamp means the signed timestamp is outside the tolerance.
	ErrTimestamp = errors.New("timestamp out of tolerance")
	// ErrMismatch means the request is well formed but no signature matches
	// any secret value. Only this error may be cured by a fresher secret.
	ErrMismatch = errors.New("signature invalid")
	// ErrNoKey means none of the secret values can be used as a key of this
	// scheme (for example a standard-webhooks secret that is not base64).
	ErrNoKey = errors.New("no usable secret value")
)

// Header gives a verifier the request's headers.
type Header interface {
	// Values returns every value sent for the header called name, matched
	// without regard to case, in the order received; nil when absent.
	Values(name string) []string
}

// Request is what a verifier checks.
type Request struct {
	Header Header
	// Body is the exact request body. Verifiers only read it.
	Body []byte
	// Now is the time the request arrived, for timestamp tolerance.
	Now time.Time
}

// Verifier authenticates requests of one verification kind.
type Verifier interface {
	// Key turns one secret value into the key this scheme uses. Callers
	// convert each value once and keep the result while the secret is
	// unchanged.
	Key(secret string) (Key, error)
	// Verify returns nil when a signature in r matches one of keys, and an
	// error wrapping ErrMissing, ErrMalformed, ErrTimestamp, ErrMismatch or
	// ErrNoKey otherwise.
	Verify(r *Request, keys []Key) error
}

// Key is one secret value prepared for a scheme: the key bytes and, for the
// HMAC schemes, a pool of HMAC states already keyed with them, so a request
// pays neither for hmac.New nor for hashing the key pads again.
type Key struct {
	raw     []byte
	newHash func() hash.Hash
	pool    *sync.Pool // of *macState
}

// macState is a keyed HMAC with the scratch memory of one computation.
type macState struct {
	h      hash.Hash
	signed []byte            // what is signed before the body
	out    [sha512.Size]byte // the sum
}

func newHMACKey(raw []byte, newHash func() hash.Hash) Key {
	return Key{raw: raw, newHash: newHash, pool: &sync.Pool{}}
}

// state returns a keyed HMAC state, reset; give it back with release.
func (k Key) state() *macState {
	if st, ok := k.pool.Get().(*macState); ok {
		return st
	}
	return &macState{h: hmac.New(k.newHash, k.raw), signed: make([]byte, 0, 128)}
}

func (k Key) release(st *macState) {
	st.h.Reset()
	k.pool.Put(st)
}

// sum computes the HMAC of the prefix parts followed by body and copies it
// into dst, which must hold the hash's size; it returns the filled part of
// dst. The prefix parts are copied into the state's memory and written at
// once, so neither they nor dst escape: verifying allocates nothing.
func (k Key) sum(dst, body []byte, prefix ...[]byte) []byte {
	st := k.state()
	if len(prefix) > 0 {
		st.signed = st.signed[:0]
		for _, p := range prefix {
			st.signed = append(st.signed, p...)
		}
		st.h.Write(st.signed)
	}
	st.h.Write(body)
	n := copy(dst, st.h.Sum(st.out[:0]))
	k.release(st)
	return dst[:n]
}

// New builds the verifier of a source's verify block. The block is expected
// to have passed config validation; New still rejects what it cannot build.
func New(v config.Verify) (Verifier, error) {
	tol := v.Tolerance()
	switch v.Kind {
	case config.KindStripe:
		return &Stripe{Tolerance: tol}, nil
	case config.KindGitHub:
		return GitHub(), nil
	case config.KindShopify:
		return Shopify(), nil
	case config.KindSlack:
		return &Slack{Tolerance: tol}, nil
	case config.KindStandardWebhooks:
		return &StandardWebhooks{Tolerance: tol}, nil
	case config.KindHMAC:
		return NewHMAC(v.Header, v.HMACAlgorithm(), v.HMACEncoding(), v.Prefix)
	case config.KindToken:
		if v.Header == "" {
			return nil, errors.New("token verification needs a header name")
		}
		return &Token{Header: v.Header}, nil
	default:
		return nil, fmt.Errorf("unknown verification kind %q", v.Kind)
	}
}

// rawKey is the Key of the HMAC schemes that use the secret's bytes as they are.
func rawKey(secret string, newHash func() hash.Hash) (Key, error) {
	if secret == "" {
		return Key{}, fmt.Errorf("empty secret value: %w", ErrNoKey)
	}
	return newHMACKey([]byte(secret), newHash), nil
}

// single returns the one value of a header that must not repeat. A header
// sent several times with the same value is accepted; differing values are
// ambiguous and rejected.
func single(h Header, name string) (string, error) {
	vs := h.Values(name)
	if len(vs) == 0 || vs[0] == "" {
		return "", fmt.Errorf("%s header absent or empty: %w", name, ErrMissing)
	}
	for _, v := range vs[1:] {
		if v != vs[0] {
			return "", fmt.Errorf("%s header sent several times with different values: %w", name, ErrMalformed)
		}
	}
	return vs[0], nil
}

// maxTimestampDigits bounds a Unix-seconds header; 12 digits reach the year 33658.
const maxTimestampDigits = 12

// ParseUnix reads a timestamp header: canonical decimal Unix seconds (ASCII
// digits, no sign, no leading zero, no spaces). Rejecting other spellings
// keeps the signed text and the parsed number the same thing.
func ParseUnix(s string) (int64, bool) {
	if s == "" || len(s) > maxTimestampDigits || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	var n int64
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// checkTolerance rejects a timestamp more than tol before or after now.
func checkTolerance(ts int64, now time.Time, tol time.Duration) error {
	d := now.Unix() - ts
	if d < 0 {
		d = -d
	}
	if d > int64(tol/time.Second) {
		return fmt.Errorf("timestamp %d is %ds away from now, tolerance %s: %w", ts, d, tol, ErrTimestamp)
	}
	return nil
}

// distinct drops repeats of a header value sent several times (a proxy may
// duplicate a header); the order of first appearance is kept.
func distinct(vs []string) []string {
	if len(vs) < 2 {
		return vs
	}
	out := vs[:1:1]
	for _, v := range vs[1:] {
		dup := false
		for _, o := range out {
			if o == v {
				dup = true
				break
			}
		}
		if !dup {
			out = append(out, v)
		}
	}
	return out
}
