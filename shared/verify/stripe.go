package verify

import (
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// HeaderStripeSignature carries Stripe's signature.
const HeaderStripeSignature = "Stripe-Signature"

// maxStripeSignatures bounds how many v1 signatures one header may carry.
// Stripe sends one per active endpoint secret: two while a secret rolls.
const maxStripeSignatures = 8

// Stripe verifies Stripe-Signature: "t=<unix>,v1=<hex>[,v1=<hex>…][,v0=…]",
// where each v1 is the hex HMAC-SHA256 of "<t>.<body>" under the endpoint
// secret (the whole "whsec_…" string is the key). Only v1 signatures count;
// any of them may match.
type Stripe struct {
	Tolerance time.Duration
}

// StripeHeader is a parsed Stripe-Signature header.
type StripeHeader struct {
	Timestamp int64
	// V1 holds the decoded v1 signatures; N of them are set.
	V1 [maxStripeSignatures][sha256.Size]byte
	N  int
}

// Verify checks the Stripe-Signature header.
func (s *Stripe) Verify(r *Request, secrets []string) error {
	vs := r.Header.Values(HeaderStripeSignature)
	if len(vs) == 0 || (len(vs) == 1 && strings.TrimSpace(vs[0]) == "") {
		return fmt.Errorf("%s header absent or empty: %w", HeaderStripeSignature, ErrMissing)
	}
	var h StripeHeader
	if err := ParseStripeHeader(&h, distinct(vs)...); err != nil {
		return err
	}
	if err := checkTolerance(h.Timestamp, r.Now, s.Tolerance); err != nil {
		return err
	}
	signed := strconv.AppendInt(nil, h.Timestamp, 10)
	signed = append(signed, '.')
	usable := 0
	for _, secret := range secrets { // the whole "whsec_…" string is the key
		if secret == "" {
			continue
		}
		usable++
		got := mac(sha256.New, []byte(secret), signed, r.Body)
		for i := range h.N {
			if hmac.Equal(got, h.V1[i][:]) {
				return nil
			}
		}
	}
	return noMatch("no v1 signature in "+HeaderStripeSignature, usable)
}

// ParseStripeHeader parses one or more Stripe-Signature values (a header
// repeated is read as one comma-separated list). Items are "key=value",
// optionally surrounded by spaces. Exactly one t is required; v1 values that
// are not 64 hex digits are ignored, as are other schemes (v0) and unknown
// keys; at least one valid v1 is required.
func ParseStripeHeader(h *StripeHeader, values ...string) error {
	*h = StripeHeader{}
	seenT := false
	for _, v := range values {
		for rest, more := v, true; more; {
			var item string
			item, rest, more = strings.Cut(rest, ",")
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			key, val, ok := strings.Cut(item, "=")
			if !ok {
				return fmt.Errorf("%s has an item without '=': %w", HeaderStripeSignature, ErrMalformed)
			}
			switch key {
			case "t":
				if seenT {
					return fmt.Errorf("%s has more than one t: %w", HeaderStripeSignature, ErrMalformed)
				}
				ts, ok := ParseUnix(val)
				if !ok {
					return fmt.Errorf("%s t is not decimal Unix seconds: %w", HeaderStripeSignature, ErrMalformed)
				}
				h.Timestamp, seenT = ts, true
			case "v1":
				if h.N == maxStripeSignatures {
					return fmt.Errorf("%s carries more than %d v1 signatures: %w", HeaderStripeSignature, maxStripeSignatures, ErrMalformed)
				}
				if decodeHex(h.V1[h.N][:], val) {
					h.N++
				}
			}
		}
	}
	if !seenT {
		return fmt.Errorf("%s has no t: %w", HeaderStripeSignature, ErrMalformed)
	}
	if h.N == 0 {
		return fmt.Errorf("%s carries no valid v1 signature: %w", HeaderStripeSignature, ErrMalformed)
	}
	return nil
}
