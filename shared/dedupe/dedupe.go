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
// only a claim carrying a Replay id (an operator's explicit re-delivery)
// takes them again, once per replay: a replay that ended DELIVERED or GONE
// is remembered, so a copy of its message is refused as a duplicate.
//
// Each finish appends the attempt to the record's history (the last
// MaxHistory attempts: when, outcome, HTTP status, latency, short error, who
// claimed, which replay, and for the latest MaxAnswers failed ones the
// first MaxAnswer bytes of the receiver's answer); the summary fields (last status and error,
// attempts) stay as they were. A FAILED attempt records when the next one is
// due.
//
// That is ModeLease, the default: two writes per attempt. In ModeCheck the
// claim only reads the record (the same refusals; no lease is taken) and
// the finish is the one write, on the claim's condition checked again.
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
	"slices"
	"time"
	"unicode/utf8"
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

// Bounds that keep a record small: under 10 KB at every bound (DynamoDB
// items hold 400 KB; a write costs a unit per KB of the item), under 5 KB
// without the receivers' answers, about 340 bytes delivered at the first
// attempt (one write unit).
const (
	// MaxErrorLen bounds the last_error attribute.
	MaxErrorLen = 256
	// MaxHistory is how many attempts a record keeps, the latest last.
	MaxHistory = 10
	// MaxHistoryErrorLen bounds an attempt's error in the history.
	MaxHistoryErrorLen = 128
	// MaxClaimedByLen bounds who claimed an attempt.
	MaxClaimedByLen = 64
	// MaxAnswer bounds the receiver's answer an attempt keeps (the first
	// bytes of a failed attempt's response body).
	MaxAnswer = 1 << 10
	// MaxAnswers is how many of the latest attempts keep their answer;
	// older ones lose it (their status and error stay), so a record that
	// keeps failing stays under its bound.
	MaxAnswers = 4
	// MaxReplays is how many finished replays a record remembers, the
	// latest last (replay ids start with their time, so they sort by it).
	MaxReplays = 10
)

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
	// Replay is the id of an operator's explicit re-delivery ("" for an
	// ordinary claim): the claim also takes a DELIVERED or GONE record,
	// unless this replay already ended there. A live lease still refuses it.
	Replay string
	// ClaimedBy names who claims (the deliver invocation's request id); the
	// attempt's history entry keeps it.
	ClaimedBy string
}

// Lease is a successful claim.
type Lease struct {
	PK    string
	Token string
	Until time.Time
	// Attempts counts the claims of this record, this one included.
	Attempts int
	// At, Replay and ClaimedBy are the claim's; History and Replays are the
	// record's as the claim found them, which Finish extends.
	At        time.Time
	Replay    string
	ClaimedBy string
	History   []Attempt
	Replays   []string
	// Source, Type and ExpiresAt are the claim's, set in ModeCheck (whose
	// lease has no Token): its one write after the attempt stores them.
	Source, Type string
	ExpiresAt    time.Time
	// First is the record's first attempt as a ModeCheck claim read it
	// (zero when this attempt is the first): its write files the record in
	// the time index under that hour, not this attempt's.
	First time.Time
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
	// Latency is how long the POST took (0 when none was sent).
	Latency time.Duration
	// NextAttemptAt is when a FAILED attempt's message is due again.
	NextAttemptAt time.Time
	// Paced is how often the lane's rate limit deferred the message before
	// this attempt (0 when never).
	Paced int
	// Batch is the webhook-id of the batch the attempt sent the event in
	// ("" when it went alone).
	Batch string
	// Answer is the first bytes of the receiver's answer to a failed
	// attempt (kept up to MaxAnswer; ignored for DELIVERED).
	Answer []byte
}

// Attempt is one entry of a record's history.
type Attempt struct {
	// At is when the attempt was claimed.
	At         time.Time
	Outcome    Status
	HTTPStatus int
	Latency    time.Duration
	Error      string
	ClaimedBy  string
	Replay     string
	// Paced is how often the lane's rate limit deferred the message before
	// this attempt.
	Paced int
	// Batch is the webhook-id of the batch the event went in ("" alone).
	Batch string
	// Answer is the first bytes of the receiver's answer (at most
	// MaxAnswer), kept on the latest MaxAnswers attempts that had one.
	Answer []byte
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
	// TimeBucket is the record's partition in the time index (TimeBucket),
	// set with its first write; "" when it is in no index (written by an
	// Unindexed store).
	TimeBucket  string
	DeliveredAt time.Time
	Source      string
	Type        string
	ExpiresAt   time.Time
	// NextAttemptAt is set while the record is FAILED: when the next attempt is due.
	NextAttemptAt time.Time
	// History holds the last MaxHistory attempts, oldest first.
	History []Attempt
	// Replays are the latest MaxReplays replays that ended DELIVERED or GONE.
	Replays []string
}

// RefusedError is a refused claim. It matches ErrDuplicate when the record
// is DELIVERED or the claim's replay already ended, ErrGone when it is GONE,
// and ErrInFlight otherwise (a live lease).
type RefusedError struct {
	Status     Status
	LeaseUntil time.Time
	// Replay is set when the claim's replay already ended on this record.
	Replay string
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
	if e.Replay != "" {
		return ErrDuplicate
	}
	switch e.Status {
	case StatusDelivered:
		return ErrDuplicate
	case StatusGone:
		return ErrGone
	}
	return nil
}

// refusal explains why a claim on an existing record was refused.
func refusal(r Record, in ClaimInput) *RefusedError {
	if in.Replay != "" && slices.Contains(r.Replays, in.Replay) {
		return &RefusedError{Status: r.Status, Replay: in.Replay}
	}
	return &RefusedError{Status: r.Status, LeaseUntil: r.LeaseUntil}
}

// claimable is the claim condition, shared by both stores' reasoning:
// missing, or not held by a live lease and either, for an ordinary claim,
// not final, or, for a replay, not a replay that already ended here.
func claimable(r Record, exists bool, in ClaimInput) bool {
	if !exists {
		return true
	}
	if !r.LeaseUntil.Before(in.Now) {
		return false
	}
	if in.Replay != "" {
		return !slices.Contains(r.Replays, in.Replay)
	}
	return r.Status != StatusDelivered && r.Status != StatusGone
}

// extended returns the history and replays a finish writes: the attempt
// appended (the last MaxHistory kept), and the lease's replay remembered
// when it ended the event (DELIVERED or GONE; the last MaxReplays kept).
func extended(lease Lease, out Outcome) (history []Attempt, replays []string) {
	a := Attempt{
		At: lease.At, Outcome: out.Status, HTTPStatus: out.HTTPStatus, Latency: out.Latency,
		Error: shorten(out.Error, MaxHistoryErrorLen), ClaimedBy: shorten(lease.ClaimedBy, MaxClaimedByLen), Replay: lease.Replay,
		Paced: out.Paced, Batch: out.Batch, Answer: slices.Clone(out.Answer[:min(len(out.Answer), MaxAnswer)]),
	}
	if out.Status == StatusDelivered {
		a.Error, a.Answer = "", nil
	}
	history = append(slices.Clone(lease.History), a)
	history = history[max(0, len(history)-MaxHistory):]
	kept := 0
	for i := len(history) - 1; i >= 0; i-- {
		if len(history[i].Answer) == 0 {
			continue
		}
		if kept++; kept > MaxAnswers {
			history[i].Answer = nil
		}
	}
	replays = slices.Clone(lease.Replays)
	if lease.Replay != "" && (out.Status == StatusDelivered || out.Status == StatusGone) && !slices.Contains(replays, lease.Replay) {
		replays = append(replays, lease.Replay)
		replays = replays[max(0, len(replays)-MaxReplays):]
	}
	return history, replays
}

// released is the state a Release restores: the outcome of the record's
// last finished attempt as the claim found it (a replay's lease gives a
// DELIVERED record back as DELIVERED), or, for a record no attempt has
// finished, IN_PROGRESS with no lease — claimable, as after a crash.
func released(lease Lease) Status {
	if n := len(lease.History); n > 0 {
		return lease.History[n-1].Outcome
	}
	return StatusInProgress
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
func ShortError(s string) string { return shorten(s, MaxErrorLen) }

// shorten trims s to at most n bytes, cutting on a rune boundary (the
// last whole character is kept).
func shorten(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n
	for i := 0; i < utf8.UTFMax && cut > 0 && !utf8.RuneStart(s[cut]); i++ {
		cut--
	}
	return s[:cut]
}
