package dedupe

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Mode is how a store keeps the record around an attempt (dedupe.mode).
type Mode string

// Modes.
const (
	// ModeLease (the default) claims the record with a conditional write
	// that takes a lease before the POST, and finishes it with a second
	// write: of copies handled at the same moment one is POSTed, the others
	// wait for its outcome. Two writes per attempt.
	ModeLease Mode = "lease"
	// ModeCheck reads the record before the POST (a strongly consistent
	// read) and writes it once after, on the claim's condition checked
	// again, so a DELIVERED or GONE record is never overwritten: copies that
	// arrive one after another are refused for the record's life as in
	// ModeLease, but copies handled at the same moment can each be POSTed
	// (with the same webhook-id). One read and one write per attempt.
	ModeCheck Mode = "check"
)

// ErrSettled means a ModeCheck Finish found the event already ended by
// another attempt (DELIVERED or GONE, or held by a lease taken in
// ModeLease): the record keeps that outcome and this attempt is not
// written.
var ErrSettled = errors.New("another attempt already ended the event")

// Store is the protocol a deliverer follows: Claim, then Finish — or,
// when the claim cannot be used for reasons that are not the attempt's
// (the lane's rate limit has no token for it in time), Release.
type Store interface {
	Claim(ctx context.Context, in ClaimInput) (Lease, error)
	Finish(ctx context.Context, lease Lease, out Outcome) error
	Release(ctx context.Context, lease Lease) error
}

// Modal is a Store that keeps its records in either mode (DynamoDB,
// Memory): InMode returns a view of the same records in mode.
type Modal interface {
	Store
	InMode(mode Mode) Store
}

// Indexable is a Store that can keep its records out of the time index
// (DynamoDB, Memory): Unindexed returns a view of the same records, in
// the same mode, whose writes set no index key, for a table without the
// index (dedupe.timeIndex false).
type Indexable interface {
	Store
	Unindexed() Store
}

// checked is a ModeCheck claim: no lease is written, so the Lease has no
// token and carries what the one write after the attempt needs.
func checked(r Record, in ClaimInput) Lease {
	return Lease{PK: in.PK, Until: in.LeaseUntil, Attempts: r.Attempts + 1, At: in.Now, Replay: in.Replay, ClaimedBy: in.ClaimedBy,
		History: slices.Clone(r.History), Replays: slices.Clone(r.Replays), Source: in.Source, Type: in.Type, ExpiresAt: in.ExpiresAt,
		First: r.FirstAttemptAt}
}

// firstOf is the first attempt's time a ModeCheck lease's write keeps.
func firstOf(l Lease) time.Time {
	if l.First.IsZero() {
		return l.At
	}
	return l.First
}

// finishAsClaim is the claim a ModeCheck Finish checks again, at the
// outcome's time.
func finishAsClaim(lease Lease, out Outcome) ClaimInput {
	now := out.At
	if now.IsZero() {
		now = time.Now()
	}
	return ClaimInput{PK: lease.PK, Now: now, Replay: lease.Replay}
}
