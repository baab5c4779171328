package signing_test

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	svix "github.com/svix/svix-webhooks/go"

	"github.com/hookfan/hookfan/shared/signing"
)

// The Standard Webhooks specification's published known-answer vector
// (spec/standard-webhooks.md and every reference library's tests).
const (
	katSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	katID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	katTimestamp = 1614265330
	katBody      = `{"test": 2432232314}`
	katSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignKnownAnswer(t *testing.T) {
	for _, secret := range []string{katSecret, strings.TrimPrefix(katSecret, signing.SecretPrefix), "  " + katSecret + "\n"} {
		s, err := signing.New([]string{secret})
		if err != nil {
			t.Fatalf("New(%q): %v", secret, err)
		}
		got := s.Sign(katID, time.Unix(katTimestamp, 0), []byte(katBody))
		if got != katSignature {
			t.Errorf("Sign with %q = %q, want %q", secret, got, katSignature)
		}
	}
}

func TestSignRotationOrder(t *testing.T) {
	other := newSecret(t)
	s, err := signing.New([]string{katSecret, other})
	if err != nil {
		t.Fatal(err)
	}
	got := s.Sign(katID, time.Unix(katTimestamp, 0), []byte(katBody))
	parts := strings.Split(got, " ")
	if len(parts) != 2 {
		t.Fatalf("Sign = %q, want two space-separated signatures", got)
	}
	if parts[0] != katSignature {
		t.Errorf("first signature = %q, want %q", parts[0], katSignature)
	}
	if !strings.HasPrefix(parts[1], "v1,") || parts[1] == katSignature {
		t.Errorf("second signature = %q, want a different v1 signature", parts[1])
	}
	if s.Keys() != 2 {
		t.Errorf("Keys() = %d, want 2", s.Keys())
	}
}

func TestNewErrors(t *testing.T) {
	short := signing.SecretPrefix + base64.StdEncoding.EncodeToString(make([]byte, signing.MinKeyBytes-1))
	long := signing.SecretPrefix + base64.StdEncoding.EncodeToString(make([]byte, signing.MaxKeyBytes+1))
	tests := []struct {
		name    string
		secrets []string
		want    error
	}{
		{"none", nil, signing.ErrNoSecret},
		{"empty value", []string{""}, signing.ErrInvalidSecret},
		{"prefix only", []string{signing.SecretPrefix}, signing.ErrInvalidSecret},
		{"not base64", []string{"whsec_not*base64!"}, signing.ErrInvalidSecret},
		{"url-safe alphabet", []string{"whsec_" + strings.Repeat("-_", 16)}, signing.ErrInvalidSecret},
		{"too short", []string{short}, signing.ErrInvalidSecret},
		{"too long", []string{long}, signing.ErrInvalidSecret},
		{"second value bad", []string{katSecret, "whsec_??"}, signing.ErrInvalidSecret},
		{"ok", []string{katSecret}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := signing.New(tt.secrets)
			if !errors.Is(err, tt.want) {
				t.Fatalf("New error = %v, want %v", err, tt.want)
			}
			if err != nil {
				for _, v := range tt.secrets {
					if len(v) > len(signing.SecretPrefix)+2 && strings.Contains(err.Error(), v) {
						t.Errorf("error %q quotes the secret value", err)
					}
				}
			}
		})
	}
}

// verifier is what a receiver built on the svix or the Standard Webhooks
// library does with a request.
type verifier func(secret string, body []byte, h http.Header) error

var receivers = map[string]verifier{
	"standard-webhooks": func(secret string, body []byte, h http.Header) error {
		wh, err := standardwebhooks.NewWebhook(secret)
		if err != nil {
			return err
		}
		return wh.Verify(body, h)
	},
	"svix": func(secret string, body []byte, h http.Header) error {
		wh, err := svix.NewWebhook(secret)
		if err != nil {
			return err
		}
		return wh.Verify(body, h)
	},
}

// TestReceiversVerify signs as a delivery does and has receivers built with
// the svix and the Standard Webhooks Go libraries verify the headers: with
// one secret, and during a rotation, a receiver holding either secret.
func TestReceiversVerify(t *testing.T) {
	oldSecret, newSecret, stranger := newSecret(t), newSecret(t), newSecret(t)
	body := []byte(`{"id":"evt_1","type":"invoice.paid","data":{"amount":4200,"note":"ünïcode ✓"}}`)
	tests := []struct {
		name     string
		active   []string
		receiver string // the secret the receiver holds
		wantOK   bool
	}{
		{"one secret", []string{oldSecret}, oldSecret, true},
		{"rotation, receiver holds the old secret", []string{oldSecret, newSecret}, oldSecret, true},
		{"rotation, receiver holds the new secret", []string{oldSecret, newSecret}, newSecret, true},
		{"receiver holds another secret", []string{oldSecret, newSecret}, stranger, false},
	}
	for _, tt := range tests {
		for name, verify := range receivers {
			t.Run(tt.name+"/"+name, func(t *testing.T) {
				s, err := signing.New(tt.active)
				if err != nil {
					t.Fatal(err)
				}
				now := time.Now()
				h := http.Header{}
				h.Set("webhook-id", "stripe-evt_1")
				h.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
				h.Set("webhook-signature", s.Sign("stripe-evt_1", now, body))
				err = verify(tt.receiver, body, h)
				if gotOK := err == nil; gotOK != tt.wantOK {
					t.Fatalf("verify ok = %v (err %v), want %v", gotOK, err, tt.wantOK)
				}
				if tt.wantOK {
					tampered := append([]byte(nil), body...)
					tampered[len(tampered)-2] ^= 1
					if err := verify(tt.receiver, tampered, h); err == nil {
						t.Error("a tampered body verified")
					}
				}
			})
		}
	}
}

func TestSignConcurrent(t *testing.T) {
	s, err := signing.New([]string{katSecret, newSecret(t)})
	if err != nil {
		t.Fatal(err)
	}
	want := s.Sign(katID, time.Unix(katTimestamp, 0), []byte(katBody))
	errs := make(chan string, 8)
	for range 8 {
		go func() {
			var bad string
			for range 200 {
				if got := s.Sign(katID, time.Unix(katTimestamp, 0), []byte(katBody)); got != want {
					bad = got
				}
			}
			errs <- bad
		}()
	}
	for range 8 {
		if bad := <-errs; bad != "" {
			t.Errorf("concurrent Sign = %q, want %q", bad, want)
		}
	}
}

func newSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return signing.SecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// BenchmarkSign compares our signer with the Standard Webhooks library's
// Sign on the same one-secret, 1 KiB delivery.
func BenchmarkSign(b *testing.B) {
	body := []byte(strings.Repeat(`{"k":"v"}`, 114))[:1024]
	ts := time.Unix(katTimestamp, 0)
	b.Run("hookfan", func(b *testing.B) {
		s, err := signing.New([]string{katSecret})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			_ = s.Sign(katID, ts, body)
		}
	})
	b.Run("standard-webhooks", func(b *testing.B) {
		wh, err := standardwebhooks.NewWebhook(katSecret)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(int64(len(body)))
		for b.Loop() {
			if _, err := wh.Sign(katID, ts, body); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// FuzzSign is a differential test against the Standard Webhooks library:
// for any key, id, timestamp and body our signature equals its Sign, and a
// secret value either parses into a key of allowed length or is rejected.
func FuzzSign(f *testing.F) {
	f.Add([]byte("MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"), katID, int64(katTimestamp), []byte(katBody), "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	f.Add(make([]byte, 24), "", int64(0), []byte{}, "whsec_")
	f.Add(make([]byte, 64), "a.b.c", int64(-1), []byte("\x00\xff"), "not base64!")
	f.Fuzz(func(t *testing.T, key []byte, id string, ts int64, body []byte, value string) {
		if raw, err := signing.ParseSecret(value); err == nil && (len(raw) < signing.MinKeyBytes || len(raw) > signing.MaxKeyBytes) {
			t.Fatalf("ParseSecret accepted a %d-byte key", len(raw))
		} else if err != nil && !errors.Is(err, signing.ErrInvalidSecret) {
			t.Fatalf("ParseSecret error %v does not match ErrInvalidSecret", err)
		}
		if len(key) < signing.MinKeyBytes || len(key) > signing.MaxKeyBytes {
			return
		}
		secret := signing.SecretPrefix + base64.StdEncoding.EncodeToString(key)
		s, err := signing.New([]string{secret, secret})
		if err != nil {
			t.Fatal(err)
		}
		wh, err := standardwebhooks.NewWebhookRaw(key)
		if err != nil {
			t.Fatal(err)
		}
		want, err := wh.Sign(id, time.Unix(ts, 0), body)
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Sign(id, time.Unix(ts, 0), body); got != want+" "+want {
			t.Fatalf("Sign = %q, want %q twice", got, want)
		}
	})
}
