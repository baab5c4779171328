package pausing

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// Memory is a lane state store in memory with the DynamoDB store's
// conditional semantics: every call is atomic. It is safe for concurrent
// use.
type Memory struct {
	mu    sync.Mutex
	lanes map[string]State
}

// NewMemory returns an empty store: every lane active.
func NewMemory() *Memory { return &Memory{lanes: map[string]State{}} }

func (m *Memory) get(dest string) State {
	s, ok := m.lanes[dest]
	if !ok {
		return State{Destination: dest, Mode: Active}
	}
	s.Windows = slices.Clone(s.Windows)
	s.Pauses = slices.Clone(s.Pauses)
	return s
}

// Get returns a lane's state.
func (m *Memory) Get(_ context.Context, dest string) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.get(dest), nil
}

// Count adds a batch's attempts to the lane's counters.
func (m *Memory) Count(_ context.Context, dest string, t Tally, at time.Time, width time.Duration) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	if t.Succeeded {
		s.Failures = t.Trailing
	} else {
		s.Failures += t.Failures
	}
	if width > 0 {
		idx := WindowIndex(at, width)
		s.Windows = slices.DeleteFunc(s.Windows, func(w Window) bool { return w.Index == idx-2 })
		i := slices.IndexFunc(s.Windows, func(w Window) bool { return w.Index == idx })
		if i < 0 {
			s.Windows = append(s.Windows, Window{Index: idx})
			i = len(s.Windows) - 1
		}
		s.Windows[i].Attempts += t.Attempts
		s.Windows[i].Failures += t.Failures
		sortWindows(s.Windows)
	}
	s.UpdatedAt = at
	m.lanes[dest] = s
	return m.get(dest), nil
}

// Pause records a pause if the lane is still at in.Version.
func (m *Memory) Pause(_ context.Context, dest string, in PauseInput) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	if s.Version != in.Version {
		return s, fmt.Errorf("pause %s: %w", dest, ErrChanged)
	}
	if !in.Takeover {
		s.Probes, s.ProbeUntil, s.LastProbeAt, s.LastProbeStatus, s.LastProbeError = 0, time.Time{}, time.Time{}, 0, ""
	}
	s.Mode, s.Version = Paused, s.Version+1
	s.PausedAt, s.ResumeBy, s.Reason, s.By, s.UpdatedAt = in.At, in.ResumeBy, in.Reason, in.By, in.At
	m.lanes[dest] = s
	return m.get(dest), nil
}

// Resume records a resume if the lane is still at in.Version: the
// counters start afresh and the past pauses become in.Pauses.
func (m *Memory) Resume(_ context.Context, dest string, in ResumeInput) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	if s.Version != in.Version || !s.IsPaused() {
		return s, fmt.Errorf("resume %s: %w", dest, ErrChanged)
	}
	s.Mode, s.Version = Active, s.Version+1
	s.ResumeBy, s.ProbeUntil, s.Failures = time.Time{}, time.Time{}, 0
	s.ResumedAt, s.ResumeReason, s.ResumedBy, s.UpdatedAt = in.At, in.Reason, in.By, in.At
	s.Pauses = slices.Clone(in.Pauses)
	s.Windows = slices.DeleteFunc(s.Windows, func(w Window) bool { return slices.Contains(in.Clear, w.Index) })
	m.lanes[dest] = s
	return m.get(dest), nil
}

// StartProbe marks a probe of a paused lane running until until, unless
// one already is.
func (m *Memory) StartProbe(_ context.Context, dest string, at, until time.Time) (State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	switch {
	case !s.IsPaused():
		return s, fmt.Errorf("probe %s: %w", dest, ErrChanged)
	case s.ProbeUntil.After(at):
		return s, fmt.Errorf("probe %s: %w", dest, ErrProbeBusy)
	}
	s.ProbeUntil, s.Probes, s.UpdatedAt = until, s.Probes+1, at
	m.lanes[dest] = s
	return m.get(dest), nil
}

// FinishProbe records a probe's result on a paused lane.
func (m *Memory) FinishProbe(_ context.Context, dest string, r ProbeResult) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.get(dest)
	if !s.IsPaused() {
		return fmt.Errorf("probe %s: %w", dest, ErrChanged)
	}
	s.ProbeUntil = time.Time{}
	s.LastProbeAt, s.LastProbeStatus, s.LastProbeError, s.UpdatedAt = r.At, r.Status, dedupe.ShortError(r.Error), r.At
	m.lanes[dest] = s
	return nil
}

// MemorySwitch is an event source mapping's on/off switch in memory: the
// local stack's pollers stop receiving while it is off. It starts on.
type MemorySwitch struct {
	mu  sync.Mutex
	off bool
	// flips counts the changes, for tests.
	flips int
}

// Enabled reports whether the switch is on.
func (s *MemorySwitch) Enabled(context.Context) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.off, nil
}

// Enable turns it on.
func (s *MemorySwitch) Enable(context.Context) error { s.set(false); return nil }

// Disable turns it off.
func (s *MemorySwitch) Disable(context.Context) error { s.set(true); return nil }

// Flips counts the times the switch changed.
func (s *MemorySwitch) Flips() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.flips
}

func (s *MemorySwitch) set(off bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.off != off {
		s.flips++
	}
	s.off = off
}
