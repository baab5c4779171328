package events

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Signature headers the signer writes. They match what each provider sends;
// shared/verify reads the same names.
const (
	headerStripe          = "Stripe-Signature"
	headerGitHub256       = "X-Hub-Signature-256"
	headerGitHubSHA1      = "X-Hub-Signature"
	headerShopify         = "X-Shopify-Hmac-Sha256"
	headerSlackSignature  = "X-Slack-Signature"
	headerSlackTimestamp  = "X-Slack-Request-Timestamp"
	headerStdID           = "webhook-id"
	headerStdTimestamp    = "webhook-timestamp"
	headerStdSignature    = "webhook-signature"
	standardSecretPrefix  = "whsec_"
	defaultContentTypeKey = "Content-Type"
)

// Sign returns a copy of the sample's headers with the signature headers of
// verification v added, as the provider would send them at time at.
//
// Stripe and Standard Webhooks carry one signature per secret, so pass
// several secrets to imitate a secret being rotated; the other kinds sign
// with the first secret. For the hmac and token kinds, v names the header and
// (hmac) the algorithm, encoding and prefix.
func Sign(v config.Verify, s Sample, at time.Time, secrets ...string) (http.Header, error) {
	if len(secrets) == 0 {
		return nil, errors.New("sign: no secret given")
	}
	h := s.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	ts := strconv.FormatInt(at.Unix(), 10)
	switch v.Kind {
	case config.KindStripe:
		h.Set(headerStripe, StripeHeader(s.Body, at, secrets...))
	case config.KindGitHub:
		h.Set(headerGitHub256, "sha256="+hex.EncodeToString(mac(sha256.New, secrets[0], s.Body)))
		h.Set(headerGitHubSHA1, "sha1="+hex.EncodeToString(mac(sha1.New, secrets[0], s.Body)))
	case config.KindShopify:
		h.Set(headerShopify, base64.StdEncoding.EncodeToString(mac(sha256.New, secrets[0], s.Body)))
	case config.KindSlack:
		h.Set(headerSlackTimestamp, ts)
		h.Set(headerSlackSignature, "v0="+hex.EncodeToString(mac(sha256.New, secrets[0], []byte("v0:"+ts+":"), s.Body)))
	case config.KindStandardWebhooks:
		id := h.Get(headerStdID)
		if id == "" {
			return nil, fmt.Errorf("sign %s/%s: the sample has no %s header", s.Kind, s.Name, headerStdID)
		}
		sig, err := StandardSignature(id, at, s.Body, secrets...)
		if err != nil {
			return nil, err
		}
		h.Set(headerStdTimestamp, ts)
		h.Set(headerStdSignature, sig)
	case config.KindHMAC:
		newHash, err := hashFor(v.HMACAlgorithm())
		if err != nil {
			return nil, err
		}
		sum := mac(newHash, secrets[0], s.Body)
		enc := hex.EncodeToString(sum)
		if v.HMACEncoding() == "base64" {
			enc = base64.StdEncoding.EncodeToString(sum)
		}
		if v.Header == "" {
			return nil, errors.New("sign: hmac needs verify.header")
		}
		h.Set(v.Header, v.Prefix+enc)
	case config.KindToken:
		if v.Header == "" {
			return nil, errors.New("sign: token needs verify.header")
		}
		h.Set(v.Header, secrets[0])
	default:
		return nil, fmt.Errorf("sign: unknown verification kind %q", v.Kind)
	}
	return h, nil
}

// StripeHeader returns a Stripe-Signature value for body at time at: the
// timestamp and one v1 signature per secret (the whole "whsec_…" string is
// the HMAC key).
func StripeHeader(body []byte, at time.Time, secrets ...string) string {
	ts := strconv.FormatInt(at.Unix(), 10)
	var b strings.Builder
	b.WriteString("t=" + ts)
	for _, s := range secrets {
		b.WriteString(",v1=" + hex.EncodeToString(mac(sha256.New, s, []byte(ts+"."), body)))
	}
	return b.String()
}

// StandardSignature returns a webhook-signature value: one "v1,<base64>"
// per secret, space-separated. Secrets are "whsec_<base64>" (prefix optional).
func StandardSignature(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for _, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, standardSecretPrefix))
		if err != nil {
			return "", errors.New("sign: a standard-webhooks secret is not whsec_ followed by base64")
		}
		m := hmac.New(sha256.New, key)
		m.Write([]byte(id + "." + ts + "."))
		m.Write(body)
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(sigs, " "), nil
}

// ContentType is the sample's Content-Type, or "" when it sends none.
func (s Sample) ContentType() string { return s.Header.Get(defaultContentTypeKey) }

func mac(newHash func() hash.Hash, secret string, parts ...[]byte) []byte {
	m := hmac.New(newHash, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return m.Sum(nil)
}

func hashFor(algorithm string) (func() hash.Hash, error) {
	switch algorithm {
	case "sha1":
		return sha1.New, nil
	case "sha256":
		return sha256.New, nil
	case "sha512":
		return sha512.New, nil
	}
	return nil, fmt.Errorf("sign: hmac algorithm %q is not supported", algorithm)
}
