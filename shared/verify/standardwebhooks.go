package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"
	"time"
)

// Standard Webhooks headers, and the svix-* names Svix sends for the same
// values. A request uses one family for all three.
const (
	HeaderWebhookID        = "webhook-id"
	HeaderWebhookTimestamp = "webhook-timestamp"
	HeaderWebhookSignature = "webhook-signature"

	HeaderSvixID        = "svix-id"
	HeaderSvixTimestamp = "svix-timestamp"
	HeaderSvixSignature = "svix-signature"
)

// StandardSecretPrefix precedes the base64 key of a Standard Webhooks secret.
const StandardSecretPrefix = "whsec_"

// maxStandardSignatures bounds the v1 signatures considered in one header.
const maxStandardSignatures = 8

// maxStandardIDBytes bounds webhook-id; the event id derived from it is
// checked again by ingest.
const maxStandardIDBytes = 256

// StandardWebhooks verifies the Standard Webhooks scheme: webhook-signature
// holds space-separated "v1,<base64 HMAC-SHA256>" entries over
// "<webhook-id>.<webhook-timestamp>.<body>"; the key is the base64 part of a
// "whsec_…" secret (the prefix is optional).
type StandardWebhooks struct {
	Tolerance time.Duration
}

// StandardSignatures is a parsed webhook-signature header.
type StandardSignatures struct {
	V1 [maxStandardSignatures][sha256.Size]byte
	N  int
}

// StandardKey decodes a Standard Webhooks secret into its key bytes.
func StandardKey(secret string) ([]byte, error) {
	b64 := strings.TrimPrefix(strings.TrimSpace(secret), StandardSecretPrefix)
	key, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		key, err = base64.RawStdEncoding.DecodeString(b64)
	}
	if err != nil || len(key) == 0 {
		return nil, fmt.Errorf("standard-webhooks secret is not whsec_ followed by base64: %w", ErrNoKey)
	}
	return key, nil
}

// StandardHeaders returns the id, timestamp and signature header names the
// request uses: webhook-* unless it carries only svix-*.
func StandardHeaders(h Header) (id, ts, sig string) {
	if len(h.Values(HeaderWebhookSignature)) == 0 && len(h.Values(HeaderSvixSignature)) > 0 {
		return HeaderSvixID, HeaderSvixTimestamp, HeaderSvixSignature
	}
	return HeaderWebhookID, HeaderWebhookTimestamp, HeaderWebhookSignature
}

// Verify checks the Standard Webhooks headers.
func (s *StandardWebhooks) Verify(r *Request, secrets []string) error {
	idName, tsName, sigName := StandardHeaders(r.Header)
	id, err := single(r.Header, idName)
	if err != nil {
		return err
	}
	if len(id) > maxStandardIDBytes || strings.ContainsAny(id, ". \t") {
		return fmt.Errorf("%s is longer than %d bytes or holds '.' or spaces: %w", idName, maxStandardIDBytes, ErrMalformed)
	}
	tsText, err := single(r.Header, tsName)
	if err != nil {
		return err
	}
	sigs := r.Header.Values(sigName)
	if len(sigs) == 0 || (len(sigs) == 1 && strings.TrimSpace(sigs[0]) == "") {
		return fmt.Errorf("%s header absent or empty: %w", sigName, ErrMissing)
	}
	ts, ok := ParseUnix(tsText)
	if !ok {
		return fmt.Errorf("%s is not decimal Unix seconds: %w", tsName, ErrMalformed)
	}
	var parsed StandardSignatures
	if err := ParseStandardSignatures(&parsed, distinct(sigs)...); err != nil {
		return err
	}
	if err := checkTolerance(ts, r.Now, s.Tolerance); err != nil {
		return err
	}
	signed := []byte(id + "." + tsText + ".") // canonical: ParseUnix accepted tsText
	usable := 0
	for _, secret := range secrets {
		key, err := StandardKey(secret)
		if err != nil {
			continue
		}
		usable++
		got := mac(sha256.New, key, signed, r.Body)
		for i := range parsed.N {
			if hmac.Equal(got, parsed.V1[i][:]) {
				return nil
			}
		}
	}
	return noMatch("no v1 signature in "+sigName, usable)
}

// ParseStandardSignatures parses webhook-signature values: space-separated
// "<version>,<base64>" entries. Entries of other versions, and v1 entries
// that are not the base64 of 32 bytes, are ignored; at least one valid v1 is
// required.
func ParseStandardSignatures(p *StandardSignatures, values ...string) error {
	*p = StandardSignatures{}
	for _, v := range values {
		for entry := range strings.FieldsSeq(v) {
			version, sig, ok := strings.Cut(entry, ",")
			if !ok || version != "v1" {
				continue
			}
			if p.N == maxStandardSignatures {
				return fmt.Errorf("webhook-signature carries more than %d v1 signatures: %w", maxStandardSignatures, ErrMalformed)
			}
			if n, ok := decodeBase64(p.V1[p.N][:], sig, sha256.Size); ok && n == sha256.Size {
				p.N++
			}
		}
	}
	if p.N == 0 {
		return fmt.Errorf("webhook-signature carries no valid v1 signature: %w", ErrMalformed)
	}
	return nil
}
