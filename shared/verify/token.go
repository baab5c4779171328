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

// Key keeps the SHA-256 of the expected token.
func (t *Token) Key(secret string) (Key, error) {
	if secret == "" {
		return Key{}, fmt.Errorf("empty secret value: %w", ErrNoKey)
	}
	sum := sha256.Sum256([]byte(secret))
	return Key{raw: sum[:]}, nil
}

// Verify compares the header with each token in constant time. Both sides
// are hashed first, so the comparison takes the same time whatever the
// lengths and reveals neither.
func (t *Token) Verify(r *Request, keys []Key) error {
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
		match |= subtle.ConstantTimeCompare(got[:], k.raw)
	}
	if match == 1 {
		return nil
	}
	if len(keys) == 0 {
		return fmt.Errorf("%s: %w", t.Header, ErrNoKey)
	}
	return fmt.Errorf("%s does not match: %w", t.Header, ErrMismatch)
}
