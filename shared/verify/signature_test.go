package verify_test

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/sha512"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"hash"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/verify"
)

// TestDigestSignature: every spelling Verify accepts for one digest —
// hex of either case, base64 in either alphabet, padded or not — gives
// the same signature bytes, so replay protection cannot be dodged by
// re-spelling a captured header; a header Verify refuses gives the same
// error.
func TestDigestSignature(t *testing.T) {
	sum := sha256.Sum256([]byte("a body"))
	want := sum[:]
	hexLower := hex.EncodeToString(want)
	b64 := base64.StdEncoding.EncodeToString(want)
	tests := []struct {
		name string
		d    *verify.Digest
		hdr  string
	}{
		{"github lower hex", verify.GitHub(), "sha256=" + hexLower},
		{"github upper hex", verify.GitHub(), "sha256=" + strings.ToUpper(hexLower)},
		{"github surrounding space", verify.GitHub(), " sha256=" + hexLower + " "},
		{"shopify standard base64", verify.Shopify(), b64},
		{"shopify url-safe base64", verify.Shopify(), base64.URLEncoding.EncodeToString(want)},
		{"shopify unpadded base64", verify.Shopify(), base64.RawStdEncoding.EncodeToString(want)},
		{"shopify unpadded url-safe", verify.Shopify(), base64.RawURLEncoding.EncodeToString(want)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.d.Signature(header(tt.d.Header(), tt.hdr))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("Signature = %x, want %x", got, want)
			}
		})
	}

	hmac512, err := verify.NewHMAC("X-Sig", "sha512", verify.EncodingBase64, "v1=")
	if err != nil {
		t.Fatal(err)
	}
	long := bytes.Repeat([]byte{0xab}, sha256.Size*2)
	if got, err := hmac512.Signature(header("X-Sig", "v1="+base64.StdEncoding.EncodeToString(long))); err != nil || !bytes.Equal(got, long) {
		t.Errorf("sha512 base64 with prefix: %x, %v", got, err)
	}

	bad := []struct {
		name string
		hdr  []string
		want error
	}{
		{"absent", nil, verify.ErrMissing},
		{"wrong prefix", []string{verify.HeaderGitHubSignature, "sha1=" + hexLower}, verify.ErrMalformed},
		{"short", []string{verify.HeaderGitHubSignature, "sha256=" + hexLower[:62]}, verify.ErrMalformed},
		{"two different values", []string{verify.HeaderGitHubSignature, "sha256=" + hexLower, verify.HeaderGitHubSignature, "sha256=" + strings.Repeat("0", 64)}, verify.ErrMalformed},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := verify.GitHub().Signature(header(tt.hdr...)); !errors.Is(err, tt.want) {
				t.Errorf("Signature = %v, want %v", err, tt.want)
			}
		})
	}
}

// FuzzDigestSignature: for any header value, Signature fails exactly when
// Verify finds the header missing or malformed, and when Verify accepts
// the request, Signature returns the HMAC of the body: replay protection
// keys on the very bytes that were verified, whatever their spelling.
func FuzzDigestSignature(f *testing.F) {
	body := []byte(`{"ref":"refs/heads/main"}`)
	sum := hmacHex(sha256.New, "secret", string(body))
	f.Add(body, "secret", "sha256="+sum, uint8(0))
	f.Add(body, "secret", "sha256="+strings.ToUpper(sum), uint8(0))
	f.Add(body, "secret", hmacB64(sha256.New, "secret", string(body)), uint8(1))
	f.Add(body, "secret", strings.TrimRight(hmacB64(sha256.New, "secret", string(body)), "="), uint8(1))
	f.Add([]byte("x"), "k", "sha512=AAAA", uint8(2))
	f.Add([]byte{}, "", "", uint8(0))
	f.Fuzz(func(t *testing.T, body []byte, secret, value string, which uint8) {
		digests := []*verify.Digest{verify.GitHub(), verify.Shopify()}
		d512, err := verify.NewHMAC("X-Sig", "sha512", verify.EncodingBase64, "sha512=")
		if err != nil {
			t.Fatal(err)
		}
		d := append(digests, d512)[int(which)%3]
		h := header(d.Header(), value)
		sig, serr := d.Signature(h)
		verr := d.Verify(&verify.Request{Header: h, Body: body}, []string{secret})
		malformed := errors.Is(verr, verify.ErrMissing) || errors.Is(verr, verify.ErrMalformed)
		if (serr != nil) != malformed {
			t.Fatalf("Signature error %v, Verify error %v: they disagree on the header", serr, verr)
		}
		if verr == nil {
			newHash := map[int]func() hash.Hash{0: sha256.New, 1: sha256.New, 2: sha512.New}[int(which)%3]
			want := hmac.New(newHash, []byte(secret))
			want.Write(body)
			if !bytes.Equal(sig, want.Sum(nil)) {
				t.Fatalf("verified, but Signature = %x, not the body's HMAC", sig)
			}
		}
	})
}
