package events

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

// Sign returns a copy of the sample's headers with the signature headers of
// verification v added, as the provider would send them at time at: the
// kind's own signer (shared/provider) does the work.
//
// Stripe and Standard Webhooks carry one signature per secret, so pass
// several secrets to imitate a secret being rotated; the other kinds sign
// with the first secret. For the hmac and token kinds, v names the header and
// (hmac) the algorithm, encoding and prefix.
func Sign(v config.Verify, s Sample, at time.Time, secrets ...string) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, errors.New("sign: no secret given")
	}
	k, ok := provider.Lookup(v.Kind)
	if !ok {
		return nil, fmt.Errorf("sign: unknown verification kind %q", v.Kind)
	}
	h := s.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	if err := k.Sign(v.Params(), h, s.Body, at, secrets); err != nil {
		return nil, fmt.Errorf("sign %s/%s as %s: %w", s.Kind, s.Name, v.Kind, err)
	}
	return h, nil
}

// ContentType is the sample's Content-Type, or "" when it sends none.
func (s Sample) ContentType() string { return s.Header.Get("Content-Type") }
