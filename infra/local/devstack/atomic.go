package devstack

import (
	"context"
	"sync"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
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

func (s *itemLocked) lock(pk string) func() {
	m, _ := s.locks.LoadOrStore(pk, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

func (s *itemLocked) Claim(ctx context.Context, in dedupe.ClaimInput) (dedupe.Lease, error) {
	defer s.lock(in.PK)()
	return s.next.Claim(ctx, in)
}

func (s *itemLocked) Finish(ctx context.Context, lease dedupe.Lease, out dedupe.Outcome) error {
	defer s.lock(lease.PK)()
	return s.next.Finish(ctx, lease, out)
}
