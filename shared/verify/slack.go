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

// Verify checks the Slack signature and timestamp headers.
func (s *Slack) Verify(r *Request, secrets []string) error {
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
	signed := []byte("v0:" + tsText + ":")
	usable := 0
	for _, secret := range secrets {
		if secret == "" {
			continue
		}
		usable++
		if hmac.Equal(mac(sha256.New, []byte(secret), signed, r.Body), want[:]) {
			return nil
		}
	}
	return noMatch(HeaderSlackSignature, usable)
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
