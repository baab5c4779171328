package dedupe

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
)

// Memory is an in-memory Store with DynamoDB's conditional semantics: each
// Claim and Finish is atomic, and refusals report the record as it was.
// It is safe for concurrent use.
type Memory struct {
	*memoryRecords
	mode Mode
	// unindexed files no record in the time index (Unindexed).
	unindexed bool
}

// memoryRecords are a Memory's records, shared by its views in each mode.
type memoryRecords struct {
	mu      sync.Mutex
	records map[string]Record
}

// NewMemory returns an empty store in ModeLease.
func NewMemory() *Memory { return &Memory{memoryRecords: &memoryRecords{records: map[string]Record{}}} }

// InMode returns a view of the same records that keeps them in mode.
func (m *Memory) InMode(mode Mode) Store {
	return &Memory{memoryRecords: m.memoryRecords, mode: mode, unindexed: m.unindexed}
}

// Unindexed returns a view of the same records, in the same mode, that
// sets no record's TimeBucket, as DynamoDB.Unindexed: what it writes is
// in no time index (Window).
func (m *Memory) Unindexed() Store {
	return &Memory{memoryRecords: m.memoryRecords, mode: m.mode, unindexed: true}
}

// indexed files r in the time index at first, as the first write's
// if_not_exists does on a table, unless the view is unindexed.
func (m *Memory) indexed(r Record, first time.Time) Record {
	if r.TimeBucket == "" && !m.unindexed {
		r.TimeBucket = TimeBucket(r.PK, first)
	}
	return r
}

// Claim takes a lease on the record, creating it when missing.
func (m *Memory) Claim(_ context.Context, in ClaimInput) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[in.PK]
	if !claimable(r, exists, in) {
		return Lease{}, fmt.Errorf("claim %s: %w", in.PK, refusal(r, in))
	}
	if m.mode == ModeCheck {
		return checked(r, in), nil
	}
	if !exists {
		r = Record{PK: in.PK}
	}
	if r.FirstAttemptAt.IsZero() { // if_not_exists, as the DynamoDB claim
		r.FirstAttemptAt = in.Now
	}
	r = m.indexed(r, r.FirstAttemptAt)
	r.Status = StatusInProgress
	r.LeaseToken = newToken()
	r.LeaseUntil = in.LeaseUntil
	r.Attempts++
	r.Source, r.Type = in.Source, in.Type
	r.ExpiresAt = in.ExpiresAt
	m.records[in.PK] = r
	return Lease{PK: in.PK, Token: r.LeaseToken, Until: r.LeaseUntil, Attempts: r.Attempts,
		At: in.Now, Replay: in.Replay, ClaimedBy: in.ClaimedBy, History: slices.Clone(r.History), Replays: slices.Clone(r.Replays)}, nil
}

// Finish records the outcome if the record is still held by lease.
func (m *Memory) Finish(_ context.Context, lease Lease, out Outcome) error {
	if err := validOutcome(out); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[lease.PK]
	if lease.Token == "" {
		// ModeCheck: the one write, refused once another attempt ended
		// the event (the claim's condition, checked again).
		if !claimable(r, exists, finishAsClaim(lease, out)) {
			return fmt.Errorf("finish %s: %w", lease.PK, ErrSettled)
		}
		if !exists {
			r = Record{PK: lease.PK}
		}
		if r.FirstAttemptAt.IsZero() {
			r.FirstAttemptAt = lease.At
		}
		r = m.indexed(r, r.FirstAttemptAt)
		r.Attempts++
		r.Source, r.Type, r.ExpiresAt = lease.Source, lease.Type, lease.ExpiresAt
		m.records[lease.PK] = finished(r, lease, out)
		return nil
	}
	if !exists || r.LeaseToken != lease.Token {
		return fmt.Errorf("finish %s: %w", lease.PK, ErrLeaseLost)
	}
	m.records[lease.PK] = finished(r, lease, out)
	return nil
}

// Release gives back a lease no attempt used, as the DynamoDB store does.
func (m *Memory) Release(_ context.Context, lease Lease) error {
	if lease.Token == "" {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[lease.PK]
	if !exists || r.LeaseToken != lease.Token {
		return fmt.Errorf("release %s: %w", lease.PK, ErrLeaseLost)
	}
	r.Status = released(lease)
	r.Attempts--
	r.LeaseToken, r.LeaseUntil = "", time.Time{}
	if lease.Attempts <= 1 {
		r.FirstAttemptAt, r.TimeBucket = time.Time{}, ""
	}
	m.records[lease.PK] = r
	return nil
}

// Get returns a copy of a record.
func (m *Memory) Get(_ context.Context, pk string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[pk]
	r.History, r.Replays = slices.Clone(r.History), slices.Clone(r.Replays)
	return r, ok, nil
}

// finished applies an outcome the way the DynamoDB finish update does.
func finished(r Record, lease Lease, out Outcome) Record {
	history, replays := extended(lease, out)
	r.History = history
	if out.Status != StatusFailed {
		r.Replays = replays
	}
	r.NextAttemptAt = time.Time{}
	if out.Status == StatusFailed {
		r.NextAttemptAt = out.NextAttemptAt
	}
	r.Status = out.Status
	r.LeaseToken = ""
	r.LeaseUntil = time.Time{}
	r.LastStatus = out.HTTPStatus
	r.LastError = ShortError(out.Error)
	if out.Status == StatusDelivered {
		r.DeliveredAt = out.At
		r.LastError = ""
	}
	return r
}
