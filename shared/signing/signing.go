// Package signing signs outgoing deliveries per the Standard Webhooks
// specification: webhook-signature carries "v1,<base64 HMAC-SHA256>" of
// "{webhook-id}.{webhook-timestamp}.{body}", one signature per active secret,
// space-separated, so a destination secret rotates without downtime.
//
// Secrets are parsed once, when a Signer is built; each signature takes a
// new keyed HMAC (hmac.New), as the Standard Webhooks library does.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// SecretPrefix starts every Standard Webhooks secret.
const SecretPrefix = "whsec_"

// MinKeyBytes is the shortest key accepted: the specification asks for
// 24 to 64 random bytes.
const MinKeyBytes = 24

// MaxKeyBytes is the longest key accepted.
const MaxKeyBytes = 64

var (
	// ErrNoSecret means no secret value was given.
	ErrNoSecret = errors.New("no signing secret")
	// ErrInvalidSecret means a value is neither "whsec_<base64>" nor raw
	// base64, or its key is shorter than MinKeyBytes or longer than MaxKeyBytes.
	ErrInvalidSecret = errors.New("invalid signing secret")
)

// Signer signs with every active secret. It is safe for concurrent use.
type Signer struct {
	keys [][]byte
}

// New parses the active secret values, in the order their signatures are
// emitted. Errors say which value (by position) is wrong, never its content.
func New(secrets []string) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, ErrNoSecret
	}
	s := &Signer{keys: make([][]byte, 0, len(secrets))}
	for i, v := range secrets {
		raw, err := ParseSecret(v)
		if err != nil {
			return nil, fmt.Errorf("secret value %d of %d: %w", i+1, len(secrets), err)
		}
		s.keys = append(s.keys, raw)
	}
	return s, nil
}

// ParseSecret returns the key of one secret value: "whsec_" followed by
// standard base64, or the base64 alone.
func ParseSecret(v string) ([]byte, error) {
	b64 := strings.TrimPrefix(strings.TrimSpace(v), SecretPrefix)
	if b64 == "" {
		return nil, fmt.Errorf("empty value: %w", ErrInvalidSecret)
	}
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return nil, fmt.Errorf("not %s followed by standard base64: %w", SecretPrefix, ErrInvalidSecret)
	}
	if len(raw) < MinKeyBytes || len(raw) > MaxKeyBytes {
		return nil, fmt.Errorf("key is %d bytes, want %d to %d: %w", len(raw), MinKeyBytes, MaxKeyBytes, ErrInvalidSecret)
	}
	return raw, nil
}

// Keys is the number of active secrets, hence of signatures per header.
func (s *Signer) Keys() int { return len(s.keys) }

// Sign returns the webhook-signature header value for one delivery:
// "v1,<sig>" per active secret, separated by single spaces, where sig is
// the base64 HMAC-SHA256 of "{id}.{unix seconds}.{body}".
func (s *Signer) Sign(id string, ts time.Time, body []byte) string {
	prefix := []byte(id + "." + strconv.FormatInt(ts.Unix(), 10) + ".")
	sigs := make([]string, len(s.keys))
	for i, key := range s.keys {
		m := hmac.New(sha256.New, key)
		m.Write(prefix)
		m.Write(body)
		sigs[i] = "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	return strings.Join(sigs, " ")
}
