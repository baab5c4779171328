// Package replayguard remembers the verified requests of the webhook kinds that
// sign no timestamp (GitHub, Shopify, hmac, token), so that a captured
// request sent again under a new event id — the id comes from an unsigned
// header — is answered as the original and not published twice.
//
// A request is remembered by a key: the source name and the SHA-256 of
// what identifies the signed request (provider.Kind.Fingerprint), never the
// signature itself. Ingest claims the key before it publishes, with one
// conditional write that creates the record PENDING with the event's id,
// type and content type, a lease and an expiry (the source's window). It
// then confirms the record PUBLISHED once SNS accepted the message, or
// releases the lease when the publish failed.
//
// A claim on a key already recorded is refused with the record as it
// was: PUBLISHED means a replay (answer the original's id, publish
// nothing); PENDING under a live lease means the same request is being
// published right now (answer 503, the provider retries). A PENDING
// record whose lease ended — its publish failed, or its function died
// before confirming — is taken over: the new claim publishes the
// original's event again under the original's id, which downstream
// deduplication absorbs if the first publish did happen. So a publish
// that fails never leaves a record that makes the provider's retry look
// like a replay, and nothing is ever answered 202 without a publish.
//
// A record past its expiry counts as absent, whether or not DynamoDB's TTL
// has deleted it yet (it may take days).
//
// DynamoDB implements the protocol on the delivery-record table under
// keys that start with KeyPrefix; Memory implements it with the same
// conditional semantics in memory, for unit tests.
package replayguard

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Status is a replay record's state.
type Status string

// Record states.
const (
	// StatusPending: claimed, the publish not yet confirmed.
	StatusPending Status = "PENDING"
	// StatusPublished: SNS accepted the event; later copies are replays.
	StatusPublished Status = "PUBLISHED"
)

// KeyPrefix starts every replay key. It holds ':', which no destination
// name holds, so no deliver role's "<destination>#*" key condition can
// match a replay record.
const KeyPrefix = "replay:"

var (
	// ErrReplay means the request was published before: answer with the
	// original's id, publish nothing.
	ErrReplay = errors.New("replay of a published request")
	// ErrInFlight means the same request is being published under a live
	// lease: answer 503 so the sender retries.
	ErrInFlight = errors.New("the same request is being published")
	// ErrLeaseLost means Confirm or Release found the record no longer
	// held by the lease (it ended and another request took it over).
	ErrLeaseLost = errors.New("lease lost")
)

// Key is the record key of a verified request of source: KeyPrefix, the
// source name, ':' and the hex SHA-256 of the source name, a NUL and the
// material (provider.Kind.Fingerprint).
func Key(source string, material []byte) string {
	h := sha256.New()
	h.Write([]byte(source))
	h.Write([]byte{0})
	h.Write(material)
	return KeyPrefix + source + ":" + hex.EncodeToString(h.Sum(nil))
}

// Event is what a record remembers of the request that first claimed it:
// what a replay is answered with, and what a takeover publishes.
type Event struct {
	ID, Type, ContentType string
}

// ClaimInput describes one claim.
type ClaimInput struct {
	// Key is Key(source, material).
	Key    string
	Source string
	// Event is this request's event; the record keeps the first claimer's.
	Event Event
	// Now is the claim time; LeaseUntil is when this request's attempt to
	// publish ends (its function's deadline).
	Now        time.Time
	LeaseUntil time.Time
	// ExpiresAt ends the window: after it the request is no longer
	// remembered (the table's TTL attribute).
	ExpiresAt time.Time
}

// Lease is a successful claim: publish Event (the first claimer's, which a
// takeover may differ from this request's), then Confirm or Release.
type Lease struct {
	Key   string
	Token string
	Event Event
	// Takeover reports that the record existed, PENDING under a lease that
	// had ended: Event is the original's, republished under its id.
	Takeover bool
}

// Record is a replay record as stored.
type Record struct {
	Key         string
	Status      Status
	Event       Event
	Source      string
	LeaseToken  string
	LeaseUntil  time.Time
	FirstSeenAt time.Time
	PublishedAt time.Time
	ExpiresAt   time.Time
}

// SeenError is a refused claim, carrying the record as it was. It matches
// ErrReplay when the record is PUBLISHED and ErrInFlight otherwise.
type SeenError struct {
	Status     Status
	Event      Event
	LeaseUntil time.Time
}

func (e *SeenError) Error() string {
	if e.Status == StatusPublished {
		return fmt.Sprintf("%s (event %s)", ErrReplay, e.Event.ID)
	}
	return fmt.Sprintf("%s (event %s, status %s, lease until %s)", ErrInFlight, e.Event.ID, e.Status, e.LeaseUntil.UTC().Format(time.RFC3339Nano))
}

// Is matches ErrReplay or ErrInFlight.
func (e *SeenError) Is(target error) bool {
	if e.Status == StatusPublished {
		return target == ErrReplay
	}
	return target == ErrInFlight
}

// live reports whether a stored record still counts at now: it exists and
// its window has not ended. Expiry has the precision DynamoDB stores it
// with, whole seconds.
func live(r Record, exists bool, now time.Time) bool {
	return exists && (r.ExpiresAt.IsZero() || now.Unix() < r.ExpiresAt.Unix())
}

// Replays reports whether the record, as stored, answers a copy of its
// request at now: PUBLISHED, and its window not over.
func (r Record) Replays(now time.Time) bool {
	return r.Status == StatusPublished && live(r, true, now)
}

// stale reports whether a live record can be taken over: PENDING under a
// lease that has ended (milliseconds, as stored).
func stale(r Record, now time.Time) bool {
	return r.Status == StatusPending && r.LeaseUntil.UnixMilli() < now.UnixMilli()
}

func seen(r Record) *SeenError {
	return &SeenError{Status: r.Status, Event: r.Event, LeaseUntil: r.LeaseUntil}
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails (crypto/rand panics on an unusable source)
	return hex.EncodeToString(b[:])
}
