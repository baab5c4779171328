package pacing

import (
	"context"
	"sync"
	"time"
)

// Memory is a Store in memory, with DynamoDB's semantics: each call is
// atomic per lane. For tests and one-process stacks.
type Memory struct {
	mu    sync.Mutex
	lanes map[string]State
}

// NewMemory returns an empty store.
func NewMemory() *Memory { return &Memory{lanes: map[string]State{}} }

// Take implements Store.
func (m *Memory) Take(_ context.Context, dest string, in TakeInput) (Grant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	d := decide(s, in)
	if d.n == 0 {
		return Grant{Wait: d.wait, State: s}, nil
	}
	s.TAT = time.UnixMicro(d.tat)
	m.lanes[dest] = s
	return Grant{N: d.n, State: s}, nil
}

// Adjust implements Store.
func (m *Memory) Adjust(_ context.Context, dest string, in AdjustInput) (State, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	level, ok := adjust(s, in)
	if !ok {
		return s, false, nil
	}
	s.Level, s.AdjustedAt, s.Epoch = level, in.Now.Truncate(time.Millisecond), s.Epoch+1
	m.lanes[dest] = s
	return s, true, nil
}

// SetOverride implements Store.
func (m *Memory) SetOverride(_ context.Context, dest string, o Override) (State, error) {
	if err := validOverride(o); err != nil {
		return State{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	o.At, o.Until = o.At.Truncate(time.Millisecond), o.Until.Truncate(time.Millisecond)
	s.Override, s.Epoch = &o, s.Epoch+1
	m.lanes[dest] = s
	return s, nil
}

// ClearOverride implements Store.
func (m *Memory) ClearOverride(_ context.Context, dest string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	s.Override, s.Epoch = nil, s.Epoch+1
	m.lanes[dest] = s
	return s, nil
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, dest string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(dest), nil
}

func (m *Memory) get(dest string) State {
	s, ok := m.lanes[dest]
	if !ok {
		return State{Destination: dest}
	}
	if s.Override != nil {
		o := *s.Override
		s.Override = &o
	}
	return s
}
