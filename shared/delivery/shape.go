package delivery

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/transform"
)

// What a destination may change in the request itself: its body reshaped by
// a jq transform (config transform), and an AWS Signature Version 4 on top
// of the Standard Webhooks one (config auth.sigv4).

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

// signAWS adds a SigV4 signature to a request whose headers are all set
// (the Standard Webhooks ones stay as they are), over body, the exact bytes
// sent, at the delivery's timestamp. The headers whose values come from
// secrets are left out of the signature: AWS's answer to a signature that
// does not match quotes the canonical request, which must not carry them.
func (h *Handler) signAWS(ctx context.Context, req *http.Request, body []byte, extra []header, at time.Time) error {
	if h.awsSigner == nil {
		return nil
	}
	s := h.awsSigner
	creds, err := s.creds.Retrieve(ctx)
	if err != nil {
		return fmt.Errorf("sigv4: the lane role's credentials are unavailable: %w", err)
	}
	hash := PayloadHash(s.service, body)
	req.Header.Set(HeaderContentSHA256, hash)
	held := map[string][]string{}
	for _, hd := range extra {
		if hd.secret {
			held[hd.name] = req.Header[hd.name]
			delete(req.Header, hd.name)
		}
	}
	err = s.signer.SignHTTP(ctx, creds, req, hash, s.service, s.region, at)
	for name, v := range held {
		req.Header[name] = v
	}
	if err != nil {
		return fmt.Errorf("sigv4: %w", err)
	}
	return nil
}

// compileTransform compiles the destination's transform; nil when it has
// none. Each event's transform may use its share of half the function's
// memory (memoryMB; config.DefaultDeliverMemoryMB when unknown) among the
// events delivered at once: concurrency, or the lane's batch if smaller.
func compileTransform(d config.Destination, memoryMB, concurrency int) (*transform.Program, error) {
	if d.Transform == "" {
		return nil, nil
	}
	if memoryMB <= 0 {
		memoryMB = config.DefaultDeliverMemoryMB
	}
	p, err := transform.Compile(d.Transform, transform.WithBudget(transform.Budget(memoryMB, min(concurrency, d.Batch()))))
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: transform %w", d.Name, err)
	}
	return p, nil
}

// reshape applies the destination's transform to the claimed message's
// body: the signature and the POST then carry the transformed bytes, as
// application/json. When it returns !ok, the transform failed on this
// event: the same body fails the same way on every attempt, so the record
// is DEAD at once, with the error, nothing is sent and no retry delay is
// spent: the message is released at once, and SQS's redrive policy moves it
// to the DLQ once its receives pass maxReceiveCount (every DLQ message gets
// there that way, so a DLQ redrive returns it to its queue). Each of those
// receives applies the transform again, so a transform fixed meanwhile
// delivers the event; one that fails again the same way is a pass-through
// (passThrough).
func (h *Handler) reshape(ctx context.Context, p *prepared, lease dedupe.Lease) (stop decision, ok bool) {
	if h.transform == nil {
		return ack, true
	}
	out, err := h.transform.Apply(ctx, p.msg.Body)
	if err == nil {
		p.msg.Body, p.msg.ContentType = out, transform.ContentType
		return ack, true
	}
	desc := "transform: " + strings.TrimPrefix(err.Error(), transform.ErrEvent.Error()+": ")
	var te *transform.Error
	if errors.As(err, &te) && te.Detail != "" {
		// gojq's own words may preview the body: DEBUG only.
		p.log.DebugContext(ctx, LogMessage, "outcome", "transform_detail", "detail", te.Detail)
	}
	if kept, same := passThrough(lease, desc); same {
		attrs := []any{"outcome", "spent", "reason", "the destination's transform failed on the event again; passing to the DLQ", "error", desc}
		if ferr := h.finish(ctx, kept, dedupe.Outcome{Status: dedupe.StatusDead, Error: desc, At: h.now()}); ferr != nil {
			attrs = append(attrs, "record_error", ferr.Error())
		}
		p.log.InfoContext(ctx, LogMessage, attrs...)
		return toDLQ(), false
	}
	h.count(metrics.DeliveryFailed)
	h.count(metrics.DeliveryDead)
	attrs := []any{"outcome", "dead", "reason", "the destination's transform failed on the event; released for the DLQ", "error", desc}
	if ferr := h.finish(ctx, lease, dedupe.Outcome{Status: dedupe.StatusDead, Error: desc, At: h.now()}); ferr != nil {
		attrs = append(attrs, "record_error", ferr.Error())
	}
	p.log.WarnContext(ctx, LogMessage, attrs...)
	return toDLQ(), false
}

// passThrough reports whether a transform failure with error desc repeats
// the record's latest attempt: DEAD with the same error, for the same
// replay (a receive of a message on its way to the DLQ, or a copy of it).
// The failure was counted and logged then; the finish that releases the
// lease then rewrites that attempt as it was (kept), so the remaining
// receives do not fill the history with identical DEAD entries and push
// out the earlier ones.
func passThrough(lease dedupe.Lease, desc string) (kept dedupe.Lease, same bool) {
	n := len(lease.History)
	if n == 0 {
		return lease, false
	}
	last := lease.History[n-1]
	if last.Outcome != dedupe.StatusDead || last.Replay != lease.Replay || !sameError(last.Error, desc) {
		return lease, false
	}
	kept = lease
	kept.History = lease.History[:n-1]
	kept.At, kept.ClaimedBy = last.At, last.ClaimedBy
	return kept, true
}

// sameError reports whether a history entry's error (cut to
// dedupe.MaxHistoryErrorLen, at a rune boundary) is desc.
func sameError(stored, desc string) bool {
	if stored == desc {
		return true
	}
	return len(desc) > dedupe.MaxHistoryErrorLen && len(stored) > dedupe.MaxHistoryErrorLen-utf8.UTFMax && strings.HasPrefix(desc, stored)
}

// shapeProbe applies the destination's transform to a probe, as to an
// event, so a destination that accepts only its own format (a chat
// webhook) can answer it; a transform that fails on the probe's body
// (written for one provider's fields) leaves the probe as it is, so the
// lane is still probed.
func (h *Handler) shapeProbe(ctx context.Context, msg Message) Message {
	if h.transform == nil {
		return msg
	}
	if out, err := h.transform.Apply(ctx, msg.Body); err == nil {
		msg.Body, msg.ContentType = out, transform.ContentType
	}
	return msg
}
