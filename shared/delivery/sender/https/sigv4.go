package https

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hookfan/hookfan/shared/config"
)

// An AWS Signature Version 4 on top of the Standard Webhooks one (config
// auth.sigv4).

// HeaderContentSHA256 carries the SigV4 payload hash: the SHA-256 of the
// exact bytes sent.
const HeaderContentSHA256 = "X-Amz-Content-Sha256"

// UnsignedPayload is the payload hash VPC Lattice requires: it does not
// support payload signing.
const UnsignedPayload = "UNSIGNED-PAYLOAD"

// PayloadHash is the SigV4 payload hash of body for service: the hex
// SHA-256 of the exact bytes sent, or UnsignedPayload for VPC Lattice
// (vpc-lattice-svcs), which refuses signed payloads.
func PayloadHash(service string, body []byte) string {
	if service == config.SigV4ServiceLattice {
		return UnsignedPayload
	}
	sum := sha256.Sum256(body)
	return hex.EncodeToString(sum[:])
}

// awsSigner signs requests with the lane role's credentials.
type awsSigner struct {
	signer          *v4.Signer
	creds           aws.CredentialsProvider
	service, region string
}

// newAWSSigner returns the destination's signer, nil when it is not signed.
// creds is cached (aws.CredentialsCache): the role's credentials are
// fetched once and refreshed before they expire, not per request.
func newAWSSigner(d config.Destination, creds aws.CredentialsProvider) (*awsSigner, error) {
	s := d.SigV4()
	if s == nil {
		return nil, nil
	}
	if creds == nil {
		return nil, errors.New("the destination signs its requests (auth.sigv4) but no AWS credentials were given")
	}
	if _, cached := creds.(*aws.CredentialsCache); !cached {
		creds = aws.NewCredentialsCache(creds)
	}
	// LogSigning stays off: the canonical request would log the headers.
	return &awsSigner{signer: v4.NewSigner(), creds: creds, service: s.Service, region: s.Region}, nil
}

// SignsSigV4 reports whether the sender adds an AWS Signature Version 4
// (the destination sets auth.sigv4).
func (s *Sender) SignsSigV4() bool { return s.awsSigner != nil }

// signAWS adds a SigV4 signature to a request whose headers are all set
// (the Standard Webhooks ones stay as they are), over body, the exact bytes
// sent, at the delivery's timestamp. The headers whose values come from
// secrets are left out of the signature: AWS's answer to a signature that
// does not match quotes the canonical request, which must not carry them.
func (s *Sender) signAWS(ctx context.Context, req *http.Request, body []byte, extra []header, at time.Time) error {
	if s.awsSigner == nil {
		return nil
	}
	as := s.awsSigner
	creds, err := as.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("sigv4: the lane role's credentials are unavailable: %w", err)
	}
	hash := PayloadHash(as.service, body)
	req.Header.Set(HeaderContentSHA256, hash)
	held := map[string][]string{}
	for _, hd := range extra {
		if hd.secret {
			held[hd.name] = req.Header[hd.name]
			delete(req.Header, hd.name)
		}
	}
	err = as.signer.SignHTTP(ctx, creds, req, hash, as.service, as.region, at)
	for name, v := range held {
		req.Header[name] = v
	}
	if err != nil {
		return fmt.Errorf("sigv4: %w", err)
	}
	return nil
}
