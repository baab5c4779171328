// Package signing signs outgoing deliveries per the Standard Webhooks
// specification: webhook-signature carries "v1,<base64 HMAC-SHA256>" of
// "{webhook-id}.{webhook-timestamp}.{body}", one signature per active secret,
// space-separated, so a destination secret rotates without downtime.
//
// Secrets are parsed once, when a Signer is built; signing itself allocates
// only the header value it returns.
package signing

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"hash"
	"strconv"
	"strings"
	"sync"
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
	keys []*key
}

// key is one secret with a pool of HMAC states keyed with it, so a hot
// path never rebuilds the inner and outer pads.
type key struct {
	raw  []byte
	pool sync.Pool // *state
}

type state struct {
	mac     hash.Hash
	scratch []byte
	sum     []byte
}

// New parses the active secret values, in the order their signatures are
// emitted. Errors say which value (by position) is wrong, never its content.
func New(secrets []string) (*Signer, error) {
	if len(secrets) == 0 {
		return nil, ErrNoSecret
	}
	s := &Signer{keys: make([]*key, 0, len(secrets))}
	for i, v := range secrets {
		raw, err := ParseSecret(v)
		if err != nil {
			return nil, fmt.Errorf("secret value %d of %d: %w", i+1, len(secrets), err)
		}
		k := &key{raw: raw}
		k.pool.New = func() any {
			return &state{mac: hmac.New(sha256.New, k.raw), scratch: make([]byte, 0, 128), sum: make([]byte, 0, sha256.Size)}
		}
		s.keys = append(s.keys, k)
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

// sigLen is the length of one "v1,<base64>" signature.
const sigLen = len("v1,") + 44

// Sign returns the webhook-signature header value for one delivery:
// "v1,<sig>" per active secret, separated by single spaces. The returned
// string is its only allocation.
func (s *Signer) Sign(id string, ts time.Time, body []byte) string {
	var b strings.Builder
	b.Grow(len(s.keys)*(sigLen+1) - 1)
	var sum [sha256.Size]byte
	var enc [44]byte // base64 of a SHA-256 sum
	for i, k := range s.keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		k.sum(&sum, id, ts.Unix(), body)
		base64.StdEncoding.Encode(enc[:], sum[:])
		b.WriteString("v1,")
		b.Write(enc[:])
	}
	return b.String()
}

// sum writes HMAC-SHA256("{id}.{unix}.{body}") to dst.
func (k *key) sum(dst *[sha256.Size]byte, id string, unix int64, body []byte) {
	st := k.pool.Get().(*state)
	st.mac.Reset()
	st.scratch = append(st.scratch[:0], id...)
	st.scratch = append(st.scratch, '.')
	st.scratch = strconv.AppendInt(st.scratch, unix, 10)
	st.scratch = append(st.scratch, '.')
	st.mac.Write(st.scratch)
	st.mac.Write(body)
	st.sum = st.mac.Sum(st.sum[:0])
	copy(dst[:], st.sum)
	k.pool.Put(st)
}
