package verify_test

import (
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
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// header builds an http.Header (which satisfies verify.Header) from pairs.
func header(kv ...string) http.Header {
	h := http.Header{}
	for i := 0; i+1 < len(kv); i += 2 {
		h.Add(kv[i], kv[i+1])
	}
	return h
}

func mustHMAC(t testing.TB, header, algorithm, encoding, prefix string) verify.Verifier {
	t.Helper()
	d, err := verify.NewHMAC(header, algorithm, encoding, prefix)
	if err != nil {
		t.Fatalf("NewHMAC: %v", err)
	}
	return d
}

func hmacHex(newHash func() hash.Hash, key string, msg ...string) string {
	m := hmac.New(newHash, []byte(key))
	for _, s := range msg {
		m.Write([]byte(s))
	}
	return hex.EncodeToString(m.Sum(nil))
}

func hmacB64(newHash func() hash.Hash, key string, msg string) string {
	m := hmac.New(newHash, []byte(key))
	m.Write([]byte(msg))
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// TestKnownAnswers checks each scheme against a vector published by the
// provider or the standard, or computed independently here with crypto/hmac.
func TestKnownAnswers(t *testing.T) {
	const slackBody = "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c"
	const shopifyBody = `{"id":820982911946154508,"topic":"orders/create"}`
	tests := []struct {
		name   string
		v      verify.Verifier
		secret string
		body   string
		header http.Header
		now    time.Time
	}{
		{
			// docs.github.com, "Validating webhook deliveries": testing the signature.
			name:   "github published example",
			v:      verify.GitHub(),
			secret: "It's a Secret to Everybody",
			body:   "Hello, World!",
			header: header("X-Hub-Signature-256", "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"),
		},
		{
			// The Standard Webhooks specification's test vector.
			name:   "standard-webhooks published vector",
			v:      &verify.StandardWebhooks{Tolerance: 300 * time.Second},
			secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			body:   `{"test": 2432232314}`,
			header: header("webhook-id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "webhook-timestamp", "1614265330",
				"webhook-signature", "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
			now: time.Unix(1614265330+30, 0),
		},
		{
			name:   "standard-webhooks vector, secret without whsec_ prefix, svix headers",
			v:      &verify.StandardWebhooks{Tolerance: 300 * time.Second},
			secret: "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
			body:   `{"test": 2432232314}`,
			header: header("svix-id", "msg_p5jXN8AQM9LWM0D4loKWxJek", "svix-timestamp", "1614265330",
				"svix-signature", "v1a,ignored v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="),
			now: time.Unix(1614265330-30, 0),
		},
		{
			// api.slack.com, "Verifying requests from Slack": the worked example.
			name:   "slack published example",
			v:      &verify.Slack{Tolerance: 300 * time.Second},
			secret: "8f742231b10e8888abcd99yyyzzz85a5",
			body:   slackBody,
			header: header("X-Slack-Request-Timestamp", "1531420618",
				"X-Slack-Signature", "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503"),
			now: time.Unix(1531420618, 0),
		},
		{
			name:   "slack computed independently",
			v:      &verify.Slack{Tolerance: 300 * time.Second},
			secret: "slack-test-signing-secret",
			body:   `{"type":"event_callback","event_id":"Ev1"}`,
			header: header("X-Slack-Request-Timestamp", "1764478800",
				"X-Slack-Signature", "v0="+hmacHex(sha256.New, "slack-test-signing-secret", "v0:1764478800:", `{"type":"event_callback","event_id":"Ev1"}`)),
			now: time.Unix(1764478800, 0),
		},
		{
			// Computed with Python's hmac module: base64(HMAC-SHA256).
			name:   "shopify fixed vector",
			v:      verify.Shopify(),
			secret: "hush-shopify-test-secret",
			body:   shopifyBody,
			header: header("X-Shopify-Hmac-Sha256", "kn2ekPY9b/QdYGiHw/NLdL99Q4Hd/fNJP+P1SOPlqbw="),
		},
		{
			name:   "shopify computed independently",
			v:      verify.Shopify(),
			secret: "another-shopify-secret",
			body:   "{}",
			header: header("X-Shopify-Hmac-Sha256", hmacB64(sha256.New, "another-shopify-secret", "{}")),
		},
		{
			name:   "stripe computed independently",
			v:      &verify.Stripe{Tolerance: 300 * time.Second},
			secret: "whsec_test_stripe",
			body:   `{"id":"evt_1","type":"charge.succeeded"}`,
			header: header("Stripe-Signature", "t=1764478800,v1="+hmacHex(sha256.New, "whsec_test_stripe", "1764478800.", `{"id":"evt_1","type":"charge.succeeded"}`)+",v0=6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39"),
			now:    time.Unix(1764478800+299, 0),
		},
		{
			name:   "hmac sha1 hex with prefix",
			v:      mustHMAC(t, "X-Signature", "sha1", "hex", "sha1="),
			secret: "generic-secret",
			body:   "payload",
			header: header("X-Signature", "sha1="+hmacHex(sha1.New, "generic-secret", "payload")),
		},
		{
			name:   "hmac sha512 base64",
			v:      mustHMAC(t, "X-Signature", "sha512", "base64", ""),
			secret: "generic-secret",
			body:   "payload",
			header: header("X-Signature", hmacB64(sha512.New, "generic-secret", "payload")),
		},
		{
			name:   "hmac sha256 hex uppercase digits, default settings",
			v:      mustHMAC(t, "X-Signature", "sha256", "hex", ""),
			secret: "generic-secret",
			body:   "payload",
			header: header("X-Signature", "A2D1CD2B4A95F76DC351FE467C45A77F52CB5CEABC15392493DCADBE772BC92C"), // Python: hmac.new(...).hexdigest().upper()
		},
		{
			name:   "token",
			v:      &verify.Token{Header: "X-Hook-Token"},
			secret: "tok_3c1a9",
			body:   "anything",
			header: header("X-Hook-Token", "tok_3c1a9"),
		},
		{
			name:   "token as bearer authorization",
			v:      &verify.Token{Header: "Authorization"},
			secret: "tok_3c1a9",
			body:   "anything",
			header: header("Authorization", "Bearer tok_3c1a9"),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			now := tt.now
			if now.IsZero() {
				now = time.Now()
			}
			r := &verify.Request{Header: tt.header, Body: []byte(tt.body), Now: now}
			if err := v.Verify(r, []string{tt.secret}); err != nil {
				t.Fatalf("Verify = %v, want nil", err)
			}
			// The same request under a rotation: a stale value first, then the right one.
			if err := v.Verify(r, []string{wrongSecret(v), tt.secret}); err != nil {
				t.Fatalf("Verify with two secrets = %v, want nil", err)
			}
			// And a wrong secret alone must fail as a mismatch.
			if err := v.Verify(r, []string{wrongSecret(v)}); !errors.Is(err, verify.ErrMismatch) {
				t.Fatalf("Verify with a wrong secret = %v, want ErrMismatch", err)
			}
		})
	}
}

func wrongSecret(v verify.Verifier) string {
	if _, ok := v.(*verify.StandardWebhooks); ok {
		return "whsec_" + base64.StdEncoding.EncodeToString([]byte("a wrong key of 24 bytes!"))
	}
	return "wrong-secret"
}

// TestRejections covers every way a request must fail, per scheme.
func TestRejections(t *testing.T) {
	now := time.Unix(1764478800, 0)
	ts := strconv.FormatInt(now.Unix(), 10)
	old := strconv.FormatInt(now.Unix()-301, 10)
	future := strconv.FormatInt(now.Unix()+301, 10)
	body := `{"id":"evt_1","type":"charge.succeeded"}`
	const secret = "whsec_test_stripe"
	stdSecret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("standard webhooks test key"))
	stdKey, _ := base64.StdEncoding.DecodeString(stdSecret[6:])
	stripeSig := func(ts, b string) string { return hmacHex(sha256.New, secret, ts+".", b) }
	slackSig := func(ts, b string) string { return "v0=" + hmacHex(sha256.New, secret, "v0:"+ts+":", b) }
	stdSig := func(id, ts, b string) string {
		m := hmac.New(sha256.New, stdKey)
		m.Write([]byte(id + "." + ts + "." + b))
		return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
	}
	ghSig := "sha256=" + hmacHex(sha256.New, secret, body)

	stripe := &verify.Stripe{Tolerance: 300 * time.Second}
	slack := &verify.Slack{Tolerance: 300 * time.Second}
	std := &verify.StandardWebhooks{Tolerance: 300 * time.Second}
	gh := verify.GitHub()
	shop := verify.Shopify()
	gen := mustHMAC(t, "X-Sig", "sha256", "hex", "sha256=")
	tok := &verify.Token{Header: "X-Token"}

	tests := []struct {
		name   string
		v      verify.Verifier
		secret string
		body   string
		header http.Header
		want   error
	}{
		{"stripe tampered body", stripe, secret, body + " ", header("Stripe-Signature", "t="+ts+",v1="+stripeSig(ts, body)), verify.ErrMismatch},
		{"stripe wrong secret", stripe, "whsec_other", body, header("Stripe-Signature", "t="+ts+",v1="+stripeSig(ts, body)), verify.ErrMismatch},
		{"stripe missing header", stripe, secret, body, header(), verify.ErrMissing},
		{"stripe empty header", stripe, secret, body, header("Stripe-Signature", " "), verify.ErrMissing},
		{"stripe only v0", stripe, secret, body, header("Stripe-Signature", "t="+ts+",v0="+stripeSig(ts, body)), verify.ErrMalformed},
		{"stripe no timestamp", stripe, secret, body, header("Stripe-Signature", "v1="+stripeSig(ts, body)), verify.ErrMalformed},
		{"stripe two timestamps", stripe, secret, body, header("Stripe-Signature", "t="+ts+",t="+ts+",v1="+stripeSig(ts, body)), verify.ErrMalformed},
		{"stripe timestamp not a number", stripe, secret, body, header("Stripe-Signature", "t=17644788OO,v1="+stripeSig(ts, body)), verify.ErrMalformed},
		{"stripe item without =", stripe, secret, body, header("Stripe-Signature", "t="+ts+",v1"), verify.ErrMalformed},
		{"stripe v1 not hex", stripe, secret, body, header("Stripe-Signature", "t="+ts+",v1=zz"), verify.ErrMalformed},
		{"stripe too old", stripe, secret, body, header("Stripe-Signature", "t="+old+",v1="+stripeSig(old, body)), verify.ErrTimestamp},
		{"stripe too far in the future", stripe, secret, body, header("Stripe-Signature", "t="+future+",v1="+stripeSig(future, body)), verify.ErrTimestamp},
		{"stripe signature for another timestamp", stripe, secret, body, header("Stripe-Signature", "t="+ts+",v1="+stripeSig(old, body)), verify.ErrMismatch},

		{"slack tampered body", slack, secret, body + "x", header("X-Slack-Request-Timestamp", ts, "X-Slack-Signature", slackSig(ts, body)), verify.ErrMismatch},
		{"slack wrong secret", slack, "other", body, header("X-Slack-Request-Timestamp", ts, "X-Slack-Signature", slackSig(ts, body)), verify.ErrMismatch},
		{"slack missing signature", slack, secret, body, header("X-Slack-Request-Timestamp", ts), verify.ErrMissing},
		{"slack missing timestamp", slack, secret, body, header("X-Slack-Signature", slackSig(ts, body)), verify.ErrMissing},
		{"slack wrong version", slack, secret, body, header("X-Slack-Request-Timestamp", ts, "X-Slack-Signature", "v1="+slackSig(ts, body)[3:]), verify.ErrMalformed},
		{"slack timestamp with sign", slack, secret, body, header("X-Slack-Request-Timestamp", "+"+ts, "X-Slack-Signature", slackSig(ts, body)), verify.ErrMalformed},
		{"slack too old", slack, secret, body, header("X-Slack-Request-Timestamp", old, "X-Slack-Signature", slackSig(old, body)), verify.ErrTimestamp},
		{"slack too new", slack, secret, body, header("X-Slack-Request-Timestamp", future, "X-Slack-Signature", slackSig(future, body)), verify.ErrTimestamp},
		{"slack conflicting repeated signature", slack, secret, body, header("X-Slack-Request-Timestamp", ts, "X-Slack-Signature", slackSig(ts, body), "X-Slack-Signature", slackSig(old, body)), verify.ErrMalformed},

		{"standard tampered body", std, stdSecret, body + "x", header("webhook-id", "msg_1", "webhook-timestamp", ts, "webhook-signature", stdSig("msg_1", ts, body)), verify.ErrMismatch},
		{"standard other id", std, stdSecret, body, header("webhook-id", "msg_2", "webhook-timestamp", ts, "webhook-signature", stdSig("msg_1", ts, body)), verify.ErrMismatch},
		{"standard missing id", std, stdSecret, body, header("webhook-timestamp", ts, "webhook-signature", stdSig("msg_1", ts, body)), verify.ErrMissing},
		{"standard missing timestamp", std, stdSecret, body, header("webhook-id", "msg_1", "webhook-signature", stdSig("msg_1", ts, body)), verify.ErrMissing},
		{"standard missing signature", std, stdSecret, body, header("webhook-id", "msg_1", "webhook-timestamp", ts), verify.ErrMissing},
		{"standard only unknown versions", std, stdSecret, body, header("webhook-id", "msg_1", "webhook-timestamp", ts, "webhook-signature", "v1a,abc v2,"+stdSig("msg_1", ts, body)[3:]), verify.ErrMalformed},
		{"standard id with a dot", std, stdSecret, body, header("webhook-id", "msg.1", "webhook-timestamp", ts, "webhook-signature", stdSig("msg.1", ts, body)), verify.ErrMalformed},
		{"standard too old", std, stdSecret, body, header("webhook-id", "msg_1", "webhook-timestamp", old, "webhook-signature", stdSig("msg_1", old, body)), verify.ErrTimestamp},
		{"standard too new", std, stdSecret, body, header("webhook-id", "msg_1", "webhook-timestamp", future, "webhook-signature", stdSig("msg_1", future, body)), verify.ErrTimestamp},
		{"standard secret not base64", std, "whsec_***", body, header("webhook-id", "msg_1", "webhook-timestamp", ts, "webhook-signature", stdSig("msg_1", ts, body)), verify.ErrNoKey},

		{"github tampered body", gh, secret, body + " ", header("X-Hub-Signature-256", ghSig), verify.ErrMismatch},
		{"github wrong secret", gh, "other", body, header("X-Hub-Signature-256", ghSig), verify.ErrMismatch},
		{"github missing", gh, secret, body, header("X-Hub-Signature", "sha1=abc"), verify.ErrMissing},
		{"github without prefix", gh, secret, body, header("X-Hub-Signature-256", ghSig[7:]), verify.ErrMalformed},
		{"github short digest", gh, secret, body, header("X-Hub-Signature-256", ghSig[:70]), verify.ErrMalformed},

		{"shopify tampered body", shop, secret, body + " ", header("X-Shopify-Hmac-Sha256", hmacB64(sha256.New, secret, body)), verify.ErrMismatch},
		{"shopify wrong secret", shop, "other", body, header("X-Shopify-Hmac-Sha256", hmacB64(sha256.New, secret, body)), verify.ErrMismatch},
		{"shopify missing", shop, secret, body, header(), verify.ErrMissing},
		{"shopify hex instead of base64", shop, secret, body, header("X-Shopify-Hmac-Sha256", hmacHex(sha256.New, secret, body)), verify.ErrMalformed},

		{"hmac wrong prefix", gen, secret, body, header("X-Sig", "sha1="+hmacHex(sha256.New, secret, body)), verify.ErrMalformed},
		{"hmac tampered body", gen, secret, body + " ", header("X-Sig", "sha256="+hmacHex(sha256.New, secret, body)), verify.ErrMismatch},
		{"hmac missing", gen, secret, body, header(), verify.ErrMissing},

		{"token wrong", tok, "tok_right", body, header("X-Token", "tok_wrong"), verify.ErrMismatch},
		{"token prefix of the right one", tok, "tok_right", body, header("X-Token", "tok_righ"), verify.ErrMismatch},
		{"token missing", tok, "tok_right", body, header(), verify.ErrMissing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.v
			err := v.Verify(&verify.Request{Header: tt.header, Body: []byte(tt.body), Now: now}, []string{tt.secret})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %v, want an error wrapping %q", err, tt.want)
			}
		})
	}
}

// TestToleranceBoundary accepts a timestamp exactly at the tolerance and
// rejects one second beyond, both ways, with a configured tolerance.
func TestToleranceBoundary(t *testing.T) {
	const secret = "whsec_boundary"
	body := []byte(`{"id":"evt_b","type":"x"}`)
	now := time.Unix(1764478800, 0)
	v := &verify.Stripe{Tolerance: 60 * time.Second}
	tests := []struct {
		offset int64
		want   error
	}{
		{-60, nil}, {60, nil}, {0, nil}, {-61, verify.ErrTimestamp}, {61, verify.ErrTimestamp},
	}
	for _, tt := range tests {
		ts := strconv.FormatInt(now.Unix()+tt.offset, 10)
		h := header("Stripe-Signature", "t="+ts+",v1="+hmacHex(sha256.New, secret, ts+".", string(body)))
		err := v.Verify(&verify.Request{Header: h, Body: body, Now: now}, []string{secret})
		if !errors.Is(err, tt.want) || (tt.want == nil && err != nil) {
			t.Errorf("offset %+ds: Verify = %v, want %v", tt.offset, err, tt.want)
		}
	}
}

func TestParseUnix(t *testing.T) {
	tests := []struct {
		in     string
		want   int64
		wantOK bool
	}{
		{"1764478800", 1764478800, true},
		{"0", 0, true},
		{"", 0, false},
		{"01764478800", 0, false},
		{"-1", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1e9", 0, false},
		{"9999999999999", 0, false},
	}
	for _, tt := range tests {
		got, ok := verify.ParseUnix(tt.in)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseUnix(%q) = %d, %v; want %d, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestNewHMACRejectsBadSettings(t *testing.T) {
	tests := []struct{ header, algorithm, encoding string }{
		{"", "sha256", "hex"},
		{"X-Sig", "md5", "hex"},
		{"X-Sig", "sha256", "base32"},
		{"X-Sig", "", "hex"},
	}
	for _, tt := range tests {
		if _, err := verify.NewHMAC(tt.header, tt.algorithm, tt.encoding, ""); err == nil {
			t.Errorf("NewHMAC(%q, %q, %q) = nil error, want one", tt.header, tt.algorithm, tt.encoding)
		}
	}
}

// TestNoKeys: without a usable secret value every scheme answers ErrNoKey,
// never a mismatch (which would trigger a refresh of a secret that is not
// set).
func TestNoKeys(t *testing.T) {
	tests := []struct {
		v       verify.Verifier
		header  http.Header
		secrets []string
	}{
		{verify.GitHub(), header("X-Hub-Signature-256", "sha256="+hmacHex(sha256.New, "s", "b")), nil},
		{verify.GitHub(), header("X-Hub-Signature-256", "sha256="+hmacHex(sha256.New, "s", "b")), []string{""}},
		{&verify.Token{Header: "X-Token"}, header("X-Token", "t"), []string{""}},
		{&verify.StandardWebhooks{Tolerance: time.Minute}, header("webhook-id", "msg_1", "webhook-timestamp", strconv.FormatInt(time.Now().Unix(), 10),
			"webhook-signature", "v1,"+base64.StdEncoding.EncodeToString(make([]byte, 32))), []string{"whsec_***", "not base64!"}},
	}
	for i, tt := range tests {
		err := tt.v.Verify(&verify.Request{Header: tt.header, Body: []byte("b"), Now: time.Now()}, tt.secrets)
		if !errors.Is(err, verify.ErrNoKey) {
			t.Errorf("%d: Verify with secrets %q = %v, want ErrNoKey", i, tt.secrets, err)
		}
	}
}
