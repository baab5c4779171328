// Package pausing keeps a destination lane's pause state: the failure counts
// every deliverer of the lane adds to, whether the lane is paused, and the
// pauses it took, in one item of the delivery-record table that all
// concurrent instances see.
//
// A paused lane delivers nothing: its event source mapping is turned off
// (a Switch), so its messages wait in the queue without spending receives.
// A Controller ties the state (a Store) to the switch and to the pause rule of
// the destination's configuration: Observe counts the attempts of each
// batch and pauses the lane when the rule trips; Tick, run on a schedule,
// probes a paused lane and resumes it when the probe is answered 2xx, or
// when the pause reached its bound; an operator pauses and resumes it by
// hand.
//
// DynamoDB stores the state on the record table and Memory in memory with
// the same conditional semantics; EventSourceMapping switches the Lambda
// event source mapping and MemorySwitch a flag, for tests and the local
// stack.
package pausing

import (
	"errors"
	"time"
)

// Mode is whether a lane delivers.
type Mode string

// Lane modes. A lane with no stored state is active.
const (
	Active Mode = "ACTIVE"
	Paused Mode = "PAUSED"
)

// By says who paused or resumed a lane.
type By string

// Who changes a lane's mode.
const (
	// ByDeliverer: the deliver function, when the pause rule tripped, a
	// probe was answered, or a pause reached its bound.
	ByDeliverer By = "deliverer"
	// ByOperator: an operator's command. A lane an operator paused is not
	// probed; it resumes by the operator's hand or at its bound.
	ByOperator By = "operator"
)

// Key is the lane item's partition key in the record table:
// "<destination>#.lane". Event ids never hold a ".", so it cannot meet a
// delivery record's key, and it starts with "<destination>#" like every
// key the lane's role may touch.
func Key(destination string) string { return destination + "#.lane" }

// Interval is one past pause.
type Interval struct {
	From, To time.Time
}

// Window is the attempts and failures counted in one window of the
// failure-rate rule: the window of index Index spans
// [Index×width, (Index+1)×width) from the Unix epoch.
type Window struct {
	Index              int64
	Attempts, Failures int
}

// State is a lane's stored state.
type State struct {
	Destination string
	Mode        Mode
	// Version counts the lane's transitions (pauses, resumes, takeovers);
	// each transition is conditional on the version it was decided from.
	Version int64
	// PausedAt, ResumeBy, Reason and By describe the pause in force, or the
	// last one once resumed (ResumeBy is then zero).
	PausedAt, ResumeBy time.Time
	Reason             string
	By                 By
	// Failures counts consecutive failed attempts.
	Failures int
	// Windows are the failure-rate counters kept (the current and the
	// previous window, and any the lane has not cleared yet).
	Windows []Window
	// Pauses are the past pauses that still count against the pause bound.
	Pauses []Interval
	// Probes counts the probes of the pause in force; ProbeUntil is when
	// the probe running ends at the latest.
	Probes                  int
	ProbeUntil, LastProbeAt time.Time
	LastProbeStatus         int
	LastProbeError          string
	ResumedAt               time.Time
	ResumeReason            string
	ResumedBy               By
	UpdatedAt               time.Time
}

// IsPaused reports whether the lane is paused.
func (s State) IsPaused() bool { return s.Mode == Paused }

// Tally is what one batch's attempts came to, in the order they ended.
// Only attempts that reached the destination or failed to reach it count:
// not the failures of the deliverer's own (a secret or the record table
// unavailable), malformed messages, copies, or a 410 for one event.
type Tally struct {
	Attempts, Failures int
	// Succeeded is true when any attempt succeeded; Trailing counts the
	// failures that ended after the last success.
	Succeeded bool
	Trailing  int
}

// Add counts one attempt.
func (t *Tally) Add(ok bool) {
	t.Attempts++
	if ok {
		t.Succeeded, t.Trailing = true, 0
		return
	}
	t.Failures++
	t.Trailing++
}

// Outcome of an attempt, for a Tally.
type Outcome int

// Attempt outcomes.
const (
	NotCounted Outcome = iota
	Succeeded
	Failed
)

// PauseInput is one pause (or an operator's takeover of a pause in force).
type PauseInput struct {
	At, ResumeBy time.Time
	Reason       string
	By           By
	// Version is the state's version the pause was decided from.
	Version int64
	// Takeover is true when the lane is paused already and the pause
	// changes hands (an operator holding a lane the deliverer paused): its
	// probe count and last probe are kept.
	Takeover bool
}

// ResumeInput is one resume.
type ResumeInput struct {
	At      time.Time
	Reason  string
	By      By
	Version int64
	// Pauses are the past pauses to keep, the one ending included.
	Pauses []Interval
	// Clear are the failure-rate windows to remove.
	Clear []int64
}

// ProbeResult is how one probe went.
type ProbeResult struct {
	At time.Time
	// OK is true when the destination answered 2xx.
	OK     bool
	Status int
	Error  string
}

var (
	// ErrChanged means the lane changed since the state a transition was
	// decided from (another instance or an operator got there first).
	ErrChanged = errors.New("the lane changed meanwhile")
	// ErrProbeBusy means a probe of the lane is already running.
	ErrProbeBusy = errors.New("a probe is already running")
)
