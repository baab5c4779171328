// Package dedupe keeps one delivery record per (destination, event) so a
// destination gets one successful delivery per event however often the
// message arrives.
//
// A deliverer first claims the record: one conditional write that succeeds
// when the record is missing, or is neither DELIVERED nor GONE and not held
// by a live lease, and that takes a lease with a fresh token. It then
// finishes the record with a write conditional on that token: DELIVERED,
// GONE (the destination answered 410), FAILED (lease released) or DEAD. A
// DEAD record can be claimed again, because operators redrive dead messages
// from the DLQ to try them once more; DELIVERED and GONE are final, and
// only a claim marked Replay (an operator's explicit re-delivery) takes
// them again.
//
// DynamoDB implements the protocol on a table; Memory implements it with
// the same conditional semantics in memory, for unit tests and the local
// stack.
package dedupe

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Status is a delivery record's state.
type Status string

// Record states.
const (
	StatusInProgress Status = "IN_PROGRESS"
	StatusDelivered  Status = "DELIVERED"
	StatusFailed     Status = "FAILED"
	StatusDead       Status = "DEAD"
	// StatusGone is final: the destination answered 410 Gone for the event.
	StatusGone Status = "GONE"
)

// MaxErrorLen bounds the last_error attribute.
const MaxErrorLen = 256

var (
	// ErrDuplicate means the event was already delivered: acknowledge the message.
	ErrDuplicate = errors.New("already delivered")
	// ErrGone means the destination answered 410 Gone for the event:
	// acknowledge the message without sending it.
	ErrGone = errors.New("gone: the destination refused the event for good")
	// ErrInFlight means another deliverer holds a live lease on the event.
	ErrInFlight = errors.New("held by a live lease")
	// ErrLeaseLost means Finish found the record no longer held by this lease
	// (it expired and another deliverer claimed it).
	ErrLeaseLost = errors.New("lease lost")
)

// Key builds the partition key "<destination>#<event id>".
func Key(destination, eventID string) string { return destination + "#" + eventID }

// ClaimInput describes one claim.
type ClaimInput struct {
	// PK is Key(destination, event id).
	PK     string
	Source string
	Type   string
	// Now is the claim time; LeaseUntil is when the lease ends. The caller
	// keeps it within the function's remaining time.
	Now        time.Time
	LeaseUntil time.Time
	// ExpiresAt is the record's TTL.
	ExpiresAt time.Time
	// Replay marks an operator's explicit re-delivery: the claim also takes
	// a DELIVERED or GONE record. A live lease still refuses it.
	Replay bool
}

// Lease is a successful claim.
type Lease struct {
	PK    string
	Token string
	Until time.Time
	// Attempts counts the claims of this record, this one included.
	Attempts int
}

// Outcome is how an attempt ended.
type Outcome struct {
	// Status is StatusDelivered, StatusGone, StatusFailed or StatusDead.
	Status Status
	// HTTPStatus is the response status, 0 when no response arrived.
	HTTPStatus int
	// Error is a short description of a failure (truncated to MaxErrorLen).
	Error string
	At    time.Time
}

// Record is a delivery record as stored.
type Record struct {
	PK             string
	Status         Status
	LeaseToken     string
	LeaseUntil     time.Time
	Attempts       int
	LastStatus     int
	LastError      string
	FirstAttemptAt time.Time
	DeliveredAt    time.Time
	Source         string
	Type           string
	ExpiresAt      time.Time
}

// RefusedError is a refused claim. It matches ErrDuplicate when the record
// is DELIVERED, ErrGone when it is GONE, and ErrInFlight otherwise (a live
// lease).
type RefusedError struct {
	Status     Status
	LeaseUntil time.Time
}

func (e *RefusedError) Error() string {
	if sentinel := e.final(); sentinel != nil {
		return "claim refused: " + sentinel.Error()
	}
	return fmt.Sprintf("claim refused: %s (status %s, lease until %s)", ErrInFlight, e.Status, e.LeaseUntil.UTC().Format(time.RFC3339Nano))
}

// Is matches ErrDuplicate, ErrGone or ErrInFlight.
func (e *RefusedError) Is(target error) bool {
	if sentinel := e.final(); sentinel != nil {
		return target == sentinel
	}
	return target == ErrInFlight
}

// final is the sentinel of a refusal by a final state, nil for a lease.
func (e *RefusedError) final() error {
	switch e.Status {
	case StatusDelivered:
		return ErrDuplicate
	case StatusGone:
		return ErrGone
	}
	return nil
}

// refusal explains why a claim on an existing record was refused.
func refusal(r Record) *RefusedError {
	return &RefusedError{Status: r.Status, LeaseUntil: r.LeaseUntil}
}

// claimable is the claim condition, shared by both stores' reasoning:
// missing, or not held by a live lease and, unless replayed, not final.
func claimable(r Record, exists bool, in ClaimInput) bool {
	if !exists {
		return true
	}
	final := r.Status == StatusDelivered || r.Status == StatusGone
	return (in.Replay || !final) && r.LeaseUntil.Before(in.Now)
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics on an unusable source)
	return hex.EncodeToString(b[:])
}

func validOutcome(o Outcome) error {
	switch o.Status {
	case StatusDelivered, StatusGone, StatusFailed, StatusDead:
		return nil
	default:
		return fmt.Errorf("finish with status %q: want %s, %s, %s or %s", o.Status, StatusDelivered, StatusGone, StatusFailed, StatusDead)
	}
}

// ShortError trims an error description to MaxErrorLen bytes on a rune
// boundary.
func ShortError(s string) string {
	if len(s) <= MaxErrorLen {
		return s
	}
	s = s[:MaxErrorLen]
	for len(s) > 0 && s[len(s)-1]&0xC0 == 0x80 {
		s = s[:len(s)-1]
	}
	if len(s) > 0 && s[len(s)-1] >= 0xC0 {
		s = s[:len(s)-1]
	}
	return s
}
