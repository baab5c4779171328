// Package sigv4test checks a request's AWS Signature Version 4 the way a
// receiver does, for tests and the local stack: it recomputes the
// signature with the SDK's own signer from the signed headers, the body
// and the known credentials, and compares.
package sigv4test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
)

// Authorization is a SigV4 Authorization header, parsed.
type Authorization struct {
	AccessKeyID, Date, Region, Service string
	SignedHeaders                      []string
	Signature                          string
}

// ParseAuthorization reads "AWS4-HMAC-SHA256 Credential=…, SignedHeaders=…, Signature=…".
func ParseAuthorization(v string) (Authorization, error) {
	var a Authorization
	rest, ok := strings.CutPrefix(v, "AWS4-HMAC-SHA256 ")
	if !ok {
		return a, errors.New("the Authorization header is not AWS4-HMAC-SHA256")
	}
	for part := range strings.SplitSeq(rest, ",") {
		k, val, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "Credential":
			f := strings.Split(val, "/")
			if len(f) != 5 || f[4] != "aws4_request" {
				return a, fmt.Errorf("credential %q is not key/date/region/service/aws4_request", val)
			}
			a.AccessKeyID, a.Date, a.Region, a.Service = f[0], f[1], f[2], f[3]
		case "SignedHeaders":
			a.SignedHeaders = strings.Split(val, ";")
		case "Signature":
			a.Signature = val
		}
	}
	if a.AccessKeyID == "" || len(a.SignedHeaders) == 0 || a.Signature == "" {
		return a, errors.New("the Authorization header lacks Credential, SignedHeaders or Signature")
	}
	return a, nil
}

// Verify checks r's signature (as a server received it, body read into
// body) against creds, for service in region; maxSkew bounds how far the
// signing time may be from now (0: not checked). It returns the parsed
// Authorization.
func Verify(r *http.Request, body []byte, creds aws.Credentials, service, region string, maxSkew time.Duration) (Authorization, error) {
	a, err := ParseAuthorization(r.Header.Get("Authorization"))
	if err != nil {
		return a, err
	}
	at, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return a, fmt.Errorf("X-Amz-Date: %w", err)
	}
	switch {
	case a.AccessKeyID != creds.AccessKeyID:
		return a, fmt.Errorf("signed with key %q, want %q", a.AccessKeyID, creds.AccessKeyID)
	case a.Service != service || a.Region != region:
		return a, fmt.Errorf("scoped to %s in %s, want %s in %s", a.Service, a.Region, service, region)
	case a.Date != at.Format("20060102"):
		return a, fmt.Errorf("scope date %s is not the signing date %s", a.Date, at.Format("20060102"))
	case maxSkew > 0 && (time.Since(at) > maxSkew || time.Until(at) > maxSkew):
		return a, fmt.Errorf("signed at %s, more than %s from now", at, maxSkew)
	}
	sum := sha256.Sum256(body)
	hash := hex.EncodeToString(sum[:])
	if service == "vpc-lattice-svcs" {
		hash = "UNSIGNED-PAYLOAD" // VPC Lattice refuses signed payloads
	}
	if got := r.Header.Get("X-Amz-Content-Sha256"); got != hash {
		return a, fmt.Errorf("X-Amz-Content-Sha256 %q is not the body's SHA-256 %q", got, hash)
	}
	again, err := http.NewRequestWithContext(context.Background(), r.Method, "http://"+r.Host+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return a, err
	}
	for _, name := range a.SignedHeaders {
		if name == "host" || name == "content-length" {
			continue
		}
		v, ok := r.Header[http.CanonicalHeaderKey(name)]
		if !ok {
			return a, fmt.Errorf("signed header %s is missing", name)
		}
		again.Header[http.CanonicalHeaderKey(name)] = v
	}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hash, service, region, at); err != nil {
		return a, err
	}
	want, err := ParseAuthorization(again.Header.Get("Authorization"))
	if err != nil {
		return a, err
	}
	if strings.Join(want.SignedHeaders, ";") != strings.Join(a.SignedHeaders, ";") {
		return a, fmt.Errorf("signed headers %v, the signer signs %v", a.SignedHeaders, want.SignedHeaders)
	}
	if want.Signature != a.Signature {
		return a, errors.New("the signature does not match the one recomputed with the SDK's signer")
	}
	return a, nil
}
