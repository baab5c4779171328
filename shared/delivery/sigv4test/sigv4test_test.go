package sigv4test

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

var creds = aws.Credentials{AccessKeyID: "AKIDTEST", SecretAccessKey: "secret", SessionToken: "token"}

// signed is a request signed for service, as a server receives it.
func signed(t *testing.T, service string, body []byte, payloadHash string) *http.Request {
	t.Helper()
	r, err := http.NewRequestWithContext(context.Background(), http.MethodPost, "https://api.example.com/prod/hooks?a=1", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Amz-Content-Sha256", payloadHash)
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, r, payloadHash, service, "eu-west-1", time.Now()); err != nil {
		t.Fatal(err)
	}
	r.Host = r.URL.Host
	return r
}

func TestVerify(t *testing.T) {
	body := []byte(`{"a":1}`)
	hash := "015abd7f5cc57a2dd94b7590f04ad8084273905ee33ec5cebeae62276a97f862"
	if _, err := Verify(signed(t, "execute-api", body, hash), body, creds, "execute-api", "eu-west-1", time.Minute); err != nil {
		t.Fatalf("a good signature: %v", err)
	}
	if _, err := Verify(signed(t, "vpc-lattice-svcs", body, "UNSIGNED-PAYLOAD"), body, creds, "vpc-lattice-svcs", "eu-west-1", time.Minute); err != nil {
		t.Fatalf("a Lattice signature: %v", err)
	}
	for _, tt := range []struct {
		name   string
		tamper func(r *http.Request) ([]byte, aws.Credentials, string)
		want   string
	}{
		{"another body", func(r *http.Request) ([]byte, aws.Credentials, string) {
			return []byte(`{"a":2}`), creds, "execute-api"
		}, "is not the body's SHA-256"},
		{"another key", func(r *http.Request) ([]byte, aws.Credentials, string) {
			c := creds
			c.AccessKeyID = "AKIDOTHER"
			return body, c, "execute-api"
		}, "signed with key"},
		{"another secret", func(r *http.Request) ([]byte, aws.Credentials, string) {
			c := creds
			c.SecretAccessKey = "other"
			return body, c, "execute-api"
		}, "does not match"},
		{"another service", func(r *http.Request) ([]byte, aws.Credentials, string) { return body, creds, "lambda" }, "scoped to"},
		{"a signed header changed", func(r *http.Request) ([]byte, aws.Credentials, string) {
			r.Header.Set("Content-Type", "text/plain")
			return body, creds, "execute-api"
		}, "does not match"},
		{"a signed header dropped", func(r *http.Request) ([]byte, aws.Credentials, string) {
			r.Header.Del("X-Amz-Security-Token")
			return body, creds, "execute-api"
		}, "is missing"},
		{"no signature", func(r *http.Request) ([]byte, aws.Credentials, string) {
			r.Header.Del("Authorization")
			return body, creds, "execute-api"
		}, "not AWS4-HMAC-SHA256"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := signed(t, "execute-api", body, hash)
			b, c, service := tt.tamper(r)
			_, err := Verify(r, b, c, service, "eu-west-1", time.Minute)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Verify = %v, want an error with %q", err, tt.want)
			}
		})
	}
}
