package verify_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookfan/hookfan/shared/verify"
)

// fuzzNow is the fixed "now" of the fuzz targets.
var fuzzNow = time.Unix(1764478800, 0)

// sentinel checks that a verifier's error wraps exactly one known sentinel.
func sentinel(t *testing.T, err error) {
	t.Helper()
	if err == nil {
		return
	}
	n := 0
	for _, s := range []error{verify.ErrMissing, verify.ErrMalformed, verify.ErrTimestamp, verify.ErrMismatch, verify.ErrNoKey} {
		if errors.Is(err, s) {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("error %q wraps %d sentinels, want 1", err, n)
	}
}

func mac(newHash func() hash.Hash, key []byte, parts ...string) []byte {
	m := hmac.New(newHash, key)
	for _, p := range parts {
		m.Write([]byte(p))
	}
	return m.Sum(nil)
}

func FuzzParseUnix(f *testing.F) {
	for _, s := range []string{"1764478800", "0", "01", "-1", "+1", "999999999999", "1e3", " 1", "１"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok := verify.ParseUnix(s)
		if !ok {
			return
		}
		if n < 0 || strconv.FormatInt(n, 10) != s {
			t.Fatalf("ParseUnix(%q) = %d: not the canonical spelling", s, n)
		}
	})
}

func FuzzParseStripeHeader(f *testing.F) {
	for _, s := range []string{
		"t=1764478800,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd",
		"t=1,v1=00,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8bd,v0=ab",
		" t=1 , v1=5257A869E7ECEBEDA32AFFA62CDCA3FA51CAD7E77A0E56FF536D0CE8E108D8BD ",
		"t=1,t=2,v1=", "v1=x", "t=,v1=", "=,=", "t=1,v1=5257a869e7ecebeda32affa62cdca3fa51cad7e77a0e56ff536d0ce8e108d8b",
	} {
		f.Add(s, "")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		var h verify.StripeHeader
		err := verify.ParseStripeHeader(&h, a, b)
		if err != nil {
			if !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		all := strings.ToLower(a + "," + b)
		if h.N < 1 || h.N > 8 {
			t.Fatalf("N = %d", h.N)
		}
		if !strings.Contains(all, "t="+strconv.FormatInt(h.Timestamp, 10)) {
			t.Fatalf("timestamp %d not in %q", h.Timestamp, all)
		}
		for i := range h.N {
			if !strings.Contains(all, "v1="+hex.EncodeToString(h.V1[i][:])) {
				t.Fatalf("signature %x not in %q", h.V1[i], all)
			}
		}
	})
}

func FuzzParseStandardSignatures(f *testing.F) {
	for _, s := range []string{
		"v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
		"v1a,xyz v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE= v2,abc",
		"v1,g0hM9SsE-OTPJTGt_tmIKtSyZlE3uFJELVlNIOLJ1OE", "v1,", ",", "v1 g0hM", "  ",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var p verify.StandardSignatures
		err := verify.ParseStandardSignatures(&p, s)
		if err != nil {
			if !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if p.N < 1 || p.N > 8 {
			t.Fatalf("N = %d", p.N)
		}
		for i := range p.N {
			std := base64.StdEncoding.EncodeToString(p.V1[i][:])
			url := base64.URLEncoding.EncodeToString(p.V1[i][:])
			if !strings.Contains(s, "v1,"+std) && !strings.Contains(s, "v1,"+strings.TrimRight(std, "=")) &&
				!strings.Contains(s, "v1,"+url) && !strings.Contains(s, "v1,"+strings.TrimRight(url, "=")) {
				t.Fatalf("signature %x not in %q", p.V1[i], s)
			}
		}
	})
}

func FuzzParseSlackSignature(f *testing.F) {
	for _, s := range []string{"v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503", "v0=", "v1=00", "v0=zz"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var dst [32]byte
		err := verify.ParseSlackSignature(dst[:], s)
		if err != nil {
			if !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if !strings.EqualFold(strings.TrimSpace(s), "v0="+hex.EncodeToString(dst[:])) {
			t.Fatalf("%q parsed to %x", s, dst)
		}
	})
}

func FuzzParseDigest(f *testing.F) {
	f.Add("sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", uint8(0))
	f.Add("kn2ekPY9b/QdYGiHw/NLdL99Q4Hd/fNJP+P1SOPlqbw=", uint8(1))
	f.Add("kn2ekPY9b_QdYGiHw_NLdL99Q4Hd_fNJP-P1SOPlqbw", uint8(1))
	f.Add("sha1=0123456789abcdef0123456789abcdef01234567", uint8(2))
	f.Fuzz(func(t *testing.T, v string, which uint8) {
		var d *verify.Digest
		size := 32
		switch which % 4 {
		case 0:
			d = verify.GitHub()
		case 1:
			d = verify.Shopify()
		case 2:
			d, _ = verify.NewHMAC("X-Sig", "sha1", "hex", "sha1=")
			size = 20
		default:
			d, _ = verify.NewHMAC("X-Sig", "sha512", "base64", "")
			size = 64
		}
		var dst [64]byte
		n, err := d.Parse(v, dst[:])
		if err != nil {
			if !errors.Is(err, verify.ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		if n != size {
			t.Fatalf("parsed %d bytes, want %d", n, size)
		}
		got := strings.ToLower(strings.TrimSpace(v))
		enc := []string{hex.EncodeToString(dst[:n]), strings.ToLower(base64.StdEncoding.EncodeToString(dst[:n])),
			strings.ToLower(base64.RawStdEncoding.EncodeToString(dst[:n])), strings.ToLower(base64.URLEncoding.EncodeToString(dst[:n])),
			strings.ToLower(base64.RawURLEncoding.EncodeToString(dst[:n]))}
		found := false
		for _, e := range enc {
			found = found || strings.HasSuffix(got, e)
		}
		if !found {
			t.Fatalf("%q parsed to %x", v, dst[:n])
		}
	})
}

// fuzzStripe: whatever the header, an accepted request must also be
// accepted by stripe-go (no false accepts), and a request we sign properly
// must be accepted.
func FuzzStripe(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1"}`), "t=1764478800,v1=00", "whsec_x", int64(0))
	f.Add([]byte("x"), "t=1764478800,v0=00,v1=zz", "k", int64(-400))
	f.Fuzz(func(t *testing.T, body []byte, header, secret string, skew int64) {
		if secret == "" {
			return
		}
		v := &verify.Stripe{Tolerance: 300 * time.Second}
		keys := []string{secret}
		r := &verify.Request{Header: header2("Stripe-Signature", header), Body: body, Now: fuzzNow}
		err := v.Verify(r, keys)
		sentinel(t, err)
		if err == nil && webhook.ValidatePayloadIgnoringTolerance(body, header, secret) != nil {
			t.Fatalf("accepted %q for body %q, stripe-go rejects it", header, body)
		}
		// A correctly signed request, at a skewed time.
		skew %= 1000
		ts := strconv.FormatInt(fuzzNow.Unix()+skew, 10)
		good := "t=" + ts + ",v1=" + hex.EncodeToString(mac(sha256.New, []byte(secret), ts+".", string(body)))
		r.Header = header2("Stripe-Signature", good)
		err = v.Verify(r, keys)
		inTol := skew >= -300 && skew <= 300
		switch {
		case inTol && err != nil:
			t.Fatalf("rejected a good signature at skew %d: %v", skew, err)
		case !inTol && !errors.Is(err, verify.ErrTimestamp):
			t.Fatalf("skew %d: %v, want ErrTimestamp", skew, err)
		}
		if inTol {
			r.Body = append(bytes.Clone(body), 'x')
			if err := v.Verify(r, keys); !errors.Is(err, verify.ErrMismatch) {
				t.Fatalf("tampered body: %v, want ErrMismatch", err)
			}
		}
	})
}

func header2(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h[http.CanonicalHeaderKey(kv[i])] = []string{kv[i+1]}
	}
	return h
}

// digestFuzz is shared by the GitHub, Shopify and generic hmac targets: an
// accepted request carries exactly the independently computed digest.
func digestFuzz(t *testing.T, v verify.Verifier, newHash func() hash.Hash, encode func([]byte) string, prefix, headerName string, body []byte, value, secret string) {
	if secret == "" {
		return
	}
	keys := []string{secret}
	want := mac(newHash, []byte(secret), string(body))
	err := v.Verify(&verify.Request{Header: header2(headerName, value), Body: body, Now: fuzzNow}, keys)
	sentinel(t, err)
	if err == nil {
		got := strings.TrimSpace(value)
		if !strings.HasPrefix(got, prefix) {
			t.Fatalf("accepted %q without prefix %q", value, prefix)
		}
		dec, derr := decodeAny(strings.TrimPrefix(got, prefix))
		if derr != nil || !hmac.Equal(dec, want) {
			t.Fatalf("accepted %q for body %q, want digest %x", value, body, want)
		}
	}
	good := prefix + encode(want)
	if err := v.Verify(&verify.Request{Header: header2(headerName, good), Body: body, Now: fuzzNow}, keys); err != nil {
		t.Fatalf("rejected the right digest %q: %v", good, err)
	}
}

func decodeAny(s string) ([]byte, error) {
	if b, err := hex.DecodeString(s); err == nil {
		return b, nil
	}
	for _, e := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := e.DecodeString(s); err == nil {
			return b, nil
		}
	}
	return nil, errors.New("not hex or base64")
}

func FuzzGitHub(f *testing.F) {
	f.Add([]byte("Hello, World!"), "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17", "It's a Secret to Everybody")
	f.Add([]byte("{}"), "sha1=00", "s")
	f.Fuzz(func(t *testing.T, body []byte, value, secret string) {
		digestFuzz(t, verify.GitHub(), sha256.New, hex.EncodeToString, "sha256=", "X-Hub-Signature-256", body, value, secret)
	})
}

func FuzzShopify(f *testing.F) {
	f.Add([]byte(`{"id":820982911946154508,"topic":"orders/create"}`), "kn2ekPY9b/QdYGiHw/NLdL99Q4Hd/fNJP+P1SOPlqbw=", "hush-shopify-test-secret")
	f.Add([]byte("x"), "====", "s")
	f.Fuzz(func(t *testing.T, body []byte, value, secret string) {
		digestFuzz(t, verify.Shopify(), sha256.New, base64.StdEncoding.EncodeToString, "", "X-Shopify-Hmac-Sha256", body, value, secret)
	})
}

func FuzzHMAC(f *testing.F) {
	f.Add([]byte("payload"), "sha512=AAAA", "generic-secret", uint8(0))
	f.Add([]byte("payload"), "0123", "generic-secret", uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, value, secret string, which uint8) {
		switch which % 3 {
		case 0:
			digestFuzz(t, mustHMAC(t, "X-Sig", "sha512", "base64", "sha512="),
				sha512.New, base64.StdEncoding.EncodeToString, "sha512=", "X-Sig", body, value, secret)
		case 1:
			digestFuzz(t, mustHMAC(t, "X-Sig", "sha1", "hex", ""),
				sha1.New, hex.EncodeToString, "", "X-Sig", body, value, secret)
		default:
			digestFuzz(t, mustHMAC(t, "X-Sig", "sha256", "base64", "v="),
				sha256.New, base64.RawURLEncoding.EncodeToString, "v=", "X-Sig", body, value, secret)
		}
	})
}

func FuzzSlack(f *testing.F) {
	f.Add([]byte("token=x"), "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503", "1764478800", "8f742231b10e8888abcd99yyyzzz85a5")
	f.Add([]byte(""), "v0=", "01", "s")
	f.Fuzz(func(t *testing.T, body []byte, sig, ts, secret string) {
		if secret == "" {
			return
		}
		v := &verify.Slack{Tolerance: 300 * time.Second}
		keys := []string{secret}
		err := v.Verify(&verify.Request{Header: header2("X-Slack-Signature", sig, "X-Slack-Request-Timestamp", ts), Body: body, Now: fuzzNow}, keys)
		sentinel(t, err)
		if err == nil {
			want := "v0=" + hex.EncodeToString(mac(sha256.New, []byte(secret), "v0:"+ts+":", string(body)))
			if !strings.EqualFold(strings.TrimSpace(sig), want) {
				t.Fatalf("accepted %q (ts %q) for body %q, want %s", sig, ts, body, want)
			}
		}
		now := strconv.FormatInt(fuzzNow.Unix(), 10)
		good := "v0=" + hex.EncodeToString(mac(sha256.New, []byte(secret), "v0:"+now+":", string(body)))
		if err := v.Verify(&verify.Request{Header: header2("X-Slack-Signature", good, "X-Slack-Request-Timestamp", now), Body: body, Now: fuzzNow}, keys); err != nil {
			t.Fatalf("rejected a good signature: %v", err)
		}
	})
}

func FuzzStandardWebhooks(f *testing.F) {
	f.Add([]byte(`{"test": 2432232314}`), "msg_p5jXN8AQM9LWM0D4loKWxJek", "1764478800", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=", []byte("key bytes"))
	f.Add([]byte("x"), "a.b", "1", "v1,", []byte{0})
	f.Fuzz(func(t *testing.T, body []byte, id, ts, sig string, rawKey []byte) {
		if len(rawKey) == 0 {
			return
		}
		secret := "whsec_" + base64.StdEncoding.EncodeToString(rawKey)
		v := &verify.StandardWebhooks{Tolerance: 300 * time.Second}
		keys := []string{secret}
		h := header2("webhook-id", id, "webhook-timestamp", ts, "webhook-signature", sig)
		err := v.Verify(&verify.Request{Header: h, Body: body, Now: fuzzNow}, keys)
		sentinel(t, err)
		if err == nil {
			lib, lerr := standardwebhooks.NewWebhook(secret)
			if lerr != nil {
				t.Fatal(lerr)
			}
			if lerr := lib.VerifyIgnoringTimestamp(body, h); lerr != nil {
				t.Fatalf("accepted id %q ts %q sig %q; the library rejects it: %v", id, ts, sig, lerr)
			}
		}
		if id == "" || strings.ContainsAny(id, ". \t\r\n") || len(id) > 256 || strings.TrimSpace(id) != id {
			return
		}
		now := strconv.FormatInt(fuzzNow.Unix(), 10)
		good := "v1," + base64.StdEncoding.EncodeToString(mac(sha256.New, rawKey, id+"."+now+".", string(body)))
		h = header2("webhook-id", id, "webhook-timestamp", now, "webhook-signature", good)
		if err := v.Verify(&verify.Request{Header: h, Body: body, Now: fuzzNow}, keys); err != nil {
			t.Fatalf("rejected a good signature for id %q: %v", id, err)
		}
	})
}

func FuzzToken(f *testing.F) {
	f.Add("tok_3c1a9", "tok_3c1a9", true)
	f.Add("Bearer tok", "tok", true)
	f.Add("bearer  tok", "tok", false)
	f.Fuzz(func(t *testing.T, value, secret string, authorization bool) {
		name := "X-Hook-Token"
		if authorization {
			name = "Authorization"
		}
		if secret == "" {
			return
		}
		v := &verify.Token{Header: name}
		err := v.Verify(&verify.Request{Header: header2(name, value), Now: fuzzNow}, []string{secret})
		sentinel(t, err)
		if err != nil {
			return
		}
		got := value
		if authorization && len(value) > 7 && strings.EqualFold(value[:7], "bearer ") {
			got = strings.TrimSpace(value[7:])
		}
		if got != secret {
			t.Fatalf("accepted %q for token %q", value, secret)
		}
	})
}
