package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strings"
	"time"
)

// Slack's signature headers.
const (
	HeaderSlackSignature = "X-Slack-Signature"
	HeaderSlackTimestamp = "X-Slack-Request-Timestamp"
)

// Slack verifies X-Slack-Signature: "v0=" + hex HMAC-SHA256 of
// "v0:<X-Slack-Request-Timestamp>:<body>" under the app's signing secret.
type Slack struct {
	Tolerance time.Duration
}

// Key uses the secret's bytes as the HMAC key.
func (s *Slack) Key(secret string) (Key, error) { return rawKey(secret, sha256.New) }

// Verify checks the Slack signature and timestamp headers.
func (s *Slack) Verify(r *Request, keys []Key) error {
	sig, err := single(r.Header, HeaderSlackSignature)
	if err != nil {
		return err
	}
	tsText, err := single(r.Header, HeaderSlackTimestamp)
	if err != nil {
		return err
	}
	var want [sha256.Size]byte
	if err := ParseSlackSignature(want[:], sig); err != nil {
		return err
	}
	ts, ok := ParseUnix(tsText)
	if !ok {
		return fmt.Errorf("%s is not decimal Unix seconds: %w", HeaderSlackTimestamp, ErrMalformed)
	}
	if err := checkTolerance(ts, r.Now, s.Tolerance); err != nil {
		return err
	}
	var base [3 + maxTimestampDigits + 1]byte
	signed := append(append(append(base[:0], "v0:"...), tsText...), ':')
	var sum [sha256.Size]byte
	for _, k := range keys {
		if hmac.Equal(k.sum(sum[:], r.Body, signed), want[:]) {
			return nil
		}
	}
	if len(keys) == 0 {
		return fmt.Errorf("%s: %w", HeaderSlackSignature, ErrNoKey)
	}
	return fmt.Errorf("%s does not match: %w", HeaderSlackSignature, ErrMismatch)
}

// ParseSlackSignature decodes "v0=<64 hex>" into dst (32 bytes).
func ParseSlackSignature(dst []byte, v string) error {
	hexSig, ok := strings.CutPrefix(strings.TrimSpace(v), "v0=")
	if !ok {
		return fmt.Errorf("%s does not start with v0=: %w", HeaderSlackSignature, ErrMalformed)
	}
	if !decodeHex(dst[:sha256.Size], hexSig) {
		return fmt.Errorf("%s is not v0= and 64 hex digits: %w", HeaderSlackSignature, ErrMalformed)
	}
	return nil
}
