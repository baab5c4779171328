// Package verify authenticates incoming webhook requests: one Verifier per
// signature scheme (Stripe, GitHub, Shopify, Slack, Standard Webhooks, a
// generic HMAC digest, a static token), built once per source and used for
// every request. shared/provider says which verifier each kind uses.
//
// Verifiers fail closed. Signatures are compared in constant time, every
// active secret value is tried (rotation), and timestamped schemes reject
// timestamps outside the tolerance in either direction. Errors never quote a
// secret or a signature: they wrap one of the sentinel errors below with a
// fixed description of what was wrong.
package verify

import (
	"crypto/hmac"
	"errors"
	"fmt"
	"hash"
	"time"
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
	// Verify returns nil when a signature in r matches one of the secret
	// values (any one of them: a secret rotates without downtime), and an
	// error wrapping ErrMissing, ErrMalformed, ErrTimestamp, ErrMismatch or
	// ErrNoKey otherwise. Values the scheme cannot use as a key are
	// skipped; ErrNoKey means none was usable.
	Verify(r *Request, secrets []string) error
}

// mac returns the HMAC of parts under key: a new keyed state per try, as
// the providers' own libraries do.
func mac(newHash func() hash.Hash, key []byte, parts ...[]byte) []byte {
	m := hmac.New(newHash, key)
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

// noMatch is the error of a request whose signature matched no secret
// value: ErrNoKey when none of the values was usable, ErrMismatch
// otherwise.
func noMatch(what string, usable int) error {
	if usable == 0 {
		return fmt.Errorf("%s: %w", what, ErrNoKey)
	}
	return fmt.Errorf("%s does not match: %w", what, ErrMismatch)
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
