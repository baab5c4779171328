package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// stripeKind: Stripe-Signature over "<t>.<body>"; the body's "id" and
// "type".
var stripeKind = Kind{
	Name:        Stripe,
	Body:        JSONRequired,
	Timestamped: true,
	Verifier: func(p Params) (verify.Verifier, error) {
		return &verify.Stripe{Tolerance: p.tolerance()}, nil
	},
	Identify: func(_ Params, _ verify.Header, body []byte) (Identity, error) {
		f, text, err := readFields(body, []string{"id"}, []string{"type"})
		if err != nil {
			return Identity{}, err
		}
		id := Identity{JSONText: text}
		if id.ID, err = f[0].str(ErrIDMissing, ErrIDInvalid); err != nil {
			return Identity{}, err
		}
		if id.Type, err = f[1].str(ErrTypeMissing, ErrTypeInvalid); err != nil {
			return Identity{}, err
		}
		return id, nil
	},
	Sign: func(_ Params, h http.Header, body []byte, at time.Time, secrets []string) error {
		h.Set(verify.HeaderStripeSignature, StripeSignature(body, at, secrets...))
		return nil
	},
	EventID: fixed(Place{Field: []string{"id"}}),
}

// StripeSignature returns a Stripe-Signature value for body at time at:
// the timestamp and one v1 signature per secret (the whole "whsec_…"
// string is the key), as Stripe sends while an endpoint secret rolls.
func StripeSignature(body []byte, at time.Time, secrets ...string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range secrets {
		b.WriteString(",v1=" + hex.EncodeToString(mac(sha256.New, []byte(s), []byte(ts+"."), body)))
	}
	return b.String()
}
