package verify

import (
	"crypto/sha256"
	"crypto/subtle"
	"strings"
)

// Token verifies a static shared token sent in a header. When the header is
// Authorization, a "Bearer " scheme before the token is accepted too.
type Token struct {
	Header string
}

// Verify compares the header with each token in constant time. Both sides
// are hashed first, so the comparison takes the same time whatever the
// lengths and reveals neither.
func (t *Token) Verify(r *Request, secrets []string) error {
	v, err := single(r.Header, t.Header)
	if err != nil {
		return err
	}
	if strings.EqualFold(t.Header, "Authorization") && len(v) > 7 && strings.EqualFold(v[:7], "bearer ") {
		v = strings.TrimSpace(v[7:])
	}
	got := sha256.Sum256([]byte(v))
	match, usable := 0, 0
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		usable++
		want := sha256.Sum256([]byte(secret))
		match |= subtle.ConstantTimeCompare(got[:], want[:])
	}
	if match == 1 {
		return nil
	}
	return noMatch(t.Header, usable)
}
