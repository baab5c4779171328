package devstack

import (
	"context"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// itemLocked restores DynamoDB's per-item atomicity that moto lacks.
//
// DynamoDB evaluates a conditional write and applies it atomically per
// item, which the claim protocol relies on. moto server (5.2.1) does not:
// measured with three concurrent claims of one new record, 9 of 60 rounds
// let two or three claims succeed. The local stack is one process, so it
// serializes the record calls of each key here; every deliver instance of
// the stack shares one itemLocked. Deployed functions talk to DynamoDB
// itself and have no such layer.
type itemLocked struct {
	next  delivery.Store
	locks *sync.Map // pk → *sync.Mutex
}

func newItemLocked(next delivery.Store, locks *sync.Map) delivery.Store {
	return &itemLocked{next: next, locks: locks}
}

func (s *itemLocked) lock(pk string) func() { return lockKey(s.locks, pk) }

// lockKey locks the mutex of key in locks and returns its unlock.
func lockKey(locks *sync.Map, key string) func() {
	m, _ := locks.LoadOrStore(key, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// InMode keeps the lock around the record store in mode (dedupe.mode):
// delivery.Assemble puts the store in the configuration's mode.
func (s *itemLocked) InMode(mode dedupe.Mode) dedupe.Store {
	if m, ok := s.next.(dedupe.Modal); ok {
		return &itemLocked{next: m.InMode(mode), locks: s.locks}
	}
	return s
}

// Unindexed keeps the lock around the record store that writes no time
// index key (dedupe.timeIndex false): delivery.Assemble asks for it.
func (s *itemLocked) Unindexed() dedupe.Store {
	if u, ok := s.next.(dedupe.Indexable); ok {
		return &itemLocked{next: u.Unindexed(), locks: s.locks}
	}
	return s
}

func (s *itemLocked) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	defer s.lock(in.PK)()
	return s.next.Claim(ctx, in)
}

func (s *itemLocked) Finish(ctx context.Context, lease dedupe.Lease, out dedupe.Outcome) error {
	defer s.lock(lease.PK)()
	return s.next.Finish(ctx, lease, out)
}

func (s *itemLocked) Release(ctx context.Context, lease dedupe.Lease) error {
	defer s.lock(lease.PK)()
	return s.next.Release(ctx, lease)
}

// replayLocked serializes ingest's replay calls per key, for the same
// reason: two copies of one request racing must not both claim it. Its
// keys ("replay:…") never meet a delivery record's, so it shares the
// stack's locks.
type replayLocked struct {
	next  ingest.ReplayGuard
	locks *sync.Map
}

func (s *replayLocked) Claim(ctx context.Context, in replayguard.ClaimInput) (replayguard.Lease, error) {
	defer lockKey(s.locks, in.Key)()
	return s.next.Claim(ctx, in)
}

func (s *replayLocked) Confirm(ctx context.Context, l replayguard.Lease, at time.Time) error {
	defer lockKey(s.locks, l.Key)()
	return s.next.Confirm(ctx, l, at)
}

func (s *replayLocked) Release(ctx context.Context, l replayguard.Lease) error {
	defer lockKey(s.locks, l.Key)()
	return s.next.Release(ctx, l)
}

func (s *replayLocked) Get(ctx context.Context, key string) (replayguard.Record, bool, error) {
	defer lockKey(s.locks, key)()
	return s.next.Get(ctx, key)
}

// laneLocked does for the lane items what itemLocked does for the delivery
// records: the lane's conditional writes (one pause wins, one probe at a
// time) rely on DynamoDB's per-item atomicity.
type laneLocked struct {
	next  pausing.Store
	locks *sync.Map
}

func newLaneLocked(next pausing.Store, locks *sync.Map) pausing.Store {
	return &laneLocked{next: next, locks: locks}
}

func (s *laneLocked) lock(dest string) func() { return lockKey(s.locks, pausing.Key(dest)) }

func (s *laneLocked) Get(ctx context.Context, dest string) (pausing.State, error) {
	defer s.lock(dest)()
	return s.next.Get(ctx, dest)
}

func (s *laneLocked) Count(ctx context.Context, dest string, t pausing.Tally, at time.Time, width time.Duration) (pausing.State, error) {
	defer s.lock(dest)()
	return s.next.Count(ctx, dest, t, at, width)
}

func (s *laneLocked) Pause(ctx context.Context, dest string, in pausing.PauseInput) (pausing.State, error) {
	defer s.lock(dest)()
	return s.next.Pause(ctx, dest, in)
}

func (s *laneLocked) Resume(ctx context.Context, dest string, in pausing.ResumeInput) (pausing.State, error) {
	defer s.lock(dest)()
	return s.next.Resume(ctx, dest, in)
}

func (s *laneLocked) StartProbe(ctx context.Context, dest string, at, until time.Time) (pausing.State, error) {
	defer s.lock(dest)()
	return s.next.StartProbe(ctx, dest, at, until)
}

func (s *laneLocked) FinishProbe(ctx context.Context, dest string, r pausing.ProbeResult) error {
	defer s.lock(dest)()
	return s.next.FinishProbe(ctx, dest, r)
}

// paceLocked serializes the pacing calls of a lane with its other lane
// calls (they share the lane's item, and moto applies each update to a copy
// of the whole item it read), so the bucket's conditional takes hold the
// lane's bound on moto as they do on DynamoDB.
type paceLocked struct {
	next  pacing.Store
	locks *sync.Map
}

// NewPaceLocked returns next with each call holding the lock of its lane's
// item in locks (the map the stack's lane and record calls lock in).
func NewPaceLocked(next pacing.Store, locks *sync.Map) pacing.Store {
	return &paceLocked{next: next, locks: locks}
}

func (s *paceLocked) lock(dest string) func() { return lockKey(s.locks, pausing.Key(dest)) }

func (s *paceLocked) Take(ctx context.Context, dest string, in pacing.TakeInput) (pacing.Grant, error) {
	defer s.lock(dest)()
	return s.next.Take(ctx, dest, in)
}

func (s *paceLocked) Adjust(ctx context.Context, dest string, in pacing.AdjustInput) (pacing.State, bool, error) {
	defer s.lock(dest)()
	return s.next.Adjust(ctx, dest, in)
}

func (s *paceLocked) SetOverride(ctx context.Context, dest string, o pacing.Override) (pacing.State, error) {
	defer s.lock(dest)()
	return s.next.SetOverride(ctx, dest, o)
}

func (s *paceLocked) ClearOverride(ctx context.Context, dest string) (pacing.State, error) {
	defer s.lock(dest)()
	return s.next.ClearOverride(ctx, dest)
}

func (s *paceLocked) Get(ctx context.Context, dest string) (pacing.State, error) {
	defer s.lock(dest)()
	return s.next.Get(ctx, dest)
}
