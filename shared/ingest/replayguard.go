package ingest

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/verify"
)

// ReplayGuard remembers the verified requests of the kinds that sign no
// timestamp (shared/replayguard): *replayguard.DynamoDB, *replayguard.Memory.
type ReplayGuard interface {
	Claim(ctx context.Context, in replayguard.ClaimInput) (replayguard.Lease, error)
	Confirm(ctx context.Context, l replayguard.Lease, at time.Time) error
	Release(ctx context.Context, l replayguard.Lease) error
	// Get reads a record; only for a copy that names no event (unidentified).
	Get(ctx context.Context, key string) (replayguard.Record, bool, error)
}

// DefaultReplayLease bounds a claim's lease when the request's context has
// no deadline. A Lambda invocation's context always has one — the
// function's timeout — and the lease ends with it: past it the function
// cannot publish, so a copy may take the record over.
const DefaultReplayLease = 30 * time.Second

// publishOnce publishes a verified request of a source with replay
// protection, at most once per signed request within the source's window:
// claim the request's key (PENDING), publish, confirm (PUBLISHED). The key
// is what the signature covers, so a copy of a published request is the
// same request whatever its unsigned headers say (event id, type, topic):
// it gets the original's answer, 202 with the original's id, and is
// published no more; a copy of one being published answers 503; a store
// that cannot be reached answers 503 (fail closed: the provider retries,
// and nothing is accepted without the check). A claim taken over from a
// request that never confirmed publishes that original event again, under
// its own id, which downstream deduplication absorbs if it had been
// published. A failed publish releases the claim, so the provider's retry
// publishes.
func (h *Handler) publishOnce(ctx context.Context, src *source, req *events.APIGatewayProxyRequest, hdr verify.Header, msg draft, res outcome, now time.Time) outcome {
	material, err := src.kind.Fingerprint(src.params, hdr, msg.body)
	if err != nil { // the request verified, so this cannot happen: fail closed
		return reject(src.name, true, verifyCode(err), fmt.Errorf("replay key: %w", err))
	}
	mine := replayguard.Event{ID: res.id, Type: res.typ, ContentType: msg.event.ContentType}
	lease, err := h.replay.Claim(ctx, replayguard.ClaimInput{
		Key: replayguard.Key(src.name, material), Source: src.name, Event: mine,
		Now: now, LeaseUntil: leaseEnd(ctx, now), ExpiresAt: now.Add(src.replayWindow),
	})
	var seen *replayguard.SeenError
	switch {
	case errors.Is(err, replayguard.ErrReplay) && errors.As(err, &seen):
		res.replayBlocked, res.copyID, res.copyType = true, res.id, res.typ
		res.id, res.typ = seen.Event.ID, seen.Event.Type
		res.status, res.body = http.StatusAccepted, acceptedBody(res.id)
		return res
	case errors.Is(err, replayguard.ErrInFlight):
		res.status, res.code, res.detail = answers[CodeRequestInFlight].status, CodeRequestInFlight, err
		return res
	case err != nil:
		res.status, res.code, res.detail = answers[CodeReplayCheckUnavailable].status, CodeReplayCheckUnavailable, err
		return res
	}
	if lease.Event != mine {
		// A takeover: publish the event the record was claimed for.
		msg.event.ID, msg.event.Type, msg.event.ContentType = lease.Event.ID, lease.Event.Type, lease.Event.ContentType
		res.copyID, res.copyType = res.id, res.typ
		res.id, res.typ = lease.Event.ID, lease.Event.Type
	}
	// The message is built once the claim is held: a copy stores no
	// payload, and a refused message releases the claim.
	in, ev, code, err := h.message(ctx, req, msg)
	if code != "" {
		res.status, res.code, res.detail = answers[code].status, code, h.release(ctx, lease, err)
		return res
	}
	res = h.publish(ctx, in, res, keyed{hdr: hdr, body: msg.body, event: ev})
	if res.code != "" {
		res.detail = h.release(ctx, lease, res.detail)
		return res
	}
	if err := h.replay.Confirm(ctx, lease, h.now()); err != nil {
		res.detail = fmt.Errorf("published, but the replay record stays pending (a copy after its lease publishes again, under the same id): %w", err)
	}
	return res
}

// unidentified answers a verified request of src that names no usable
// event — its id or type missing or invalid, which for the provider kinds
// means an unsigned header removed or rewritten — refused with refusal.
// With replay protection, a copy of a request published within the window
// still gets the original's answer (202 with its id), so that no rewrite
// of the unsigned headers changes what a captured request is answered;
// any other request gets refusal. The lookup is one read, made only for
// such requests; when it fails, the refusal stands (nothing is published
// either way).
func (h *Handler) unidentified(ctx context.Context, src *source, hdr verify.Header, body []byte, now time.Time, refusal outcome) outcome {
	if src.replayWindow == 0 {
		return refusal
	}
	material, err := src.kind.Fingerprint(src.params, hdr, body)
	if err != nil {
		return refusal
	}
	r, ok, err := h.replay.Get(ctx, replayguard.Key(src.name, material))
	switch {
	case err != nil:
		refusal.detail = errors.Join(refusal.detail, fmt.Errorf("replay lookup: %w", err))
		return refusal
	case !ok || !r.Replays(now):
		return refusal
	}
	return outcome{source: src.name, known: true, id: r.Event.ID, typ: r.Event.Type, replayBlocked: true,
		status: http.StatusAccepted, body: acceptedBody(r.Event.ID)}
}

// release gives up a claim after a failure, so the provider's retry
// publishes; should that fail too, the lease ends with the function's
// deadline anyway.
func (h *Handler) release(ctx context.Context, l replayguard.Lease, cause error) error {
	if err := h.replay.Release(ctx, l); err != nil {
		return errors.Join(cause, fmt.Errorf("release the replay record: %w", err))
	}
	return cause
}

// leaseEnd is when this request's attempt to publish ends: its context's
// deadline, else now + DefaultReplayLease.
func leaseEnd(ctx context.Context, now time.Time) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return now.Add(DefaultReplayLease)
}
