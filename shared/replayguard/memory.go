package replayguard

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Memory is an in-memory store with DynamoDB's conditional semantics:
// each call is atomic, and a refused claim reports the record as it was.
// It is safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	records map[string]Record
}

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{records: map[string]Record{}} }

// Claim records a request PENDING under a lease, or takes over a PENDING
// record whose lease ended; otherwise it returns a *SeenError.
func (m *Memory) Claim(_ context.Context, in ClaimInput) (Lease, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[in.Key]
	switch {
	case !live(r, exists, in.Now):
		r = Record{
			Key: in.Key, Status: StatusPending, Event: in.Event, Source: in.Source,
			LeaseToken: newToken(), LeaseUntil: ms(in.LeaseUntil),
			FirstSeenAt: ms(in.Now), ExpiresAt: time.Unix(in.ExpiresAt.Unix(), 0),
		}
		m.records[in.Key] = r
		return Lease{Key: in.Key, Token: r.LeaseToken, Event: r.Event}, nil
	case !stale(r, in.Now):
		return Lease{}, fmt.Errorf("claim %s: %w", in.Key, seen(r))
	}
	r.LeaseToken, r.LeaseUntil = newToken(), ms(in.LeaseUntil)
	m.records[in.Key] = r
	return Lease{Key: in.Key, Token: r.LeaseToken, Event: r.Event, Takeover: true}, nil
}

// Confirm marks the record PUBLISHED if the lease still holds it.
func (m *Memory) Confirm(_ context.Context, l Lease, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[l.Key]
	if !exists || r.LeaseToken != l.Token {
		return fmt.Errorf("confirm %s: %w", l.Key, ErrLeaseLost)
	}
	r.Status, r.PublishedAt = StatusPublished, ms(at)
	r.LeaseToken, r.LeaseUntil = "", time.Time{}
	m.records[l.Key] = r
	return nil
}

// Release ends the lease of a PENDING record at once, so the next copy of
// the request (the provider's retry) takes it over.
func (m *Memory) Release(_ context.Context, l Lease) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, exists := m.records[l.Key]
	if !exists || r.LeaseToken != l.Token || r.Status != StatusPending {
		return fmt.Errorf("release %s: %w", l.Key, ErrLeaseLost)
	}
	r.LeaseUntil = time.Time{}
	m.records[l.Key] = r
	return nil
}

// Get returns a copy of a record as stored (expired or not).
func (m *Memory) Get(_ context.Context, key string) (Record, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.records[key]
	return r, ok, nil
}

// ms truncates t to milliseconds, the precision DynamoDB stores.
func ms(t time.Time) time.Time {
	if t.IsZero() {
		return t
	}
	return time.UnixMilli(t.UnixMilli())
}
