package verify

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"strings"
)

// Token verifies a static shared token sent in a header. When the header is
// Authorization, a "Bearer " scheme before the token is accepted too.
type Token struct {
	Header string
}

// Key uses the secret's bytes as the expected token.
func (t *Token) Key(secret string) ([]byte, error) { return rawKey(secret) }

// Verify compares the header with each token in constant time. Both sides
// are hashed first, so the comparison takes the same time whatever the
// lengths and reveals neither.
func (t *Token) Verify(r *Request, keys [][]byte) error {
	v, err := single(r.Header, t.Header)
	if err != nil {
		return err
	}
	if strings.EqualFold(t.Header, "Authorization") && len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	got := sha256.Sum256([]byte(v))
	match := 0
	for _, k := range keys {
		want := sha256.Sum256(k)
		match |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	if match == 1 {
		return nil
	}
	if len(keys) == 0 {
		return fmt.Errorf("%s: %w", t.Header, ErrNoKey)
	}
	return fmt.Errorf("%s does not match: %w", t.Header, ErrMismatch)
}
