package payload

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Memory is S3's twin: the payload bucket, and the archive bucket's copies
// when Archive is set, in memory, for tests.
type Memory struct {
	Bucket string
	// Archive names the archive bucket that Put writes a copy into; "": none.
	Archive string

	mu       sync.Mutex
	objects  map[string][]byte
	archived map[string][]byte
	// Err, when set, fails every call (an outage).
	Err error
}

// NewMemory returns an empty store for bucket.
func NewMemory(bucket string) *Memory {
	return &Memory{Bucket: bucket, objects: map[string][]byte{}, archived: map[string][]byte{}}
}

// Put stores a copy of body (and, with Archive set, a copy in the archive).
func (m *Memory) Put(_ context.Context, source, eventID string, body []byte) (Reference, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return Reference{}, m.Err
	}
	ref := NewReference(m.Bucket, source, eventID, body)
	m.objects[ref.Key] = slices.Clone(body)
	if m.Archive != "" {
		m.archived[ref.Key] = slices.Clone(body)
	}
	return ref, nil
}

// Restore writes body again as the object ref names.
func (m *Memory) Restore(_ context.Context, ref Reference, body []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ref); err != nil {
		return err
	}
	if err := ref.Verify(body); err != nil {
		return fmt.Errorf("%s: %w", ref.Key, err)
	}
	m.objects[ref.Key] = slices.Clone(body)
	return nil
}

// Get returns a copy of the object a reference names, checked against it,
// or the archive's copy once the object is gone (as S3.Get).
func (m *Memory) Get(_ context.Context, ref Reference) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ref); err != nil {
		return nil, err
	}
	body, err := get(m.objects, ref)
	if errors.Is(err, ErrNotFound) && m.Archive != "" {
		if archived, aerr := get(m.archived, ref); aerr == nil {
			return archived, nil
		}
	}
	return body, err
}

// GetArchived returns the archive's copy of the body a reference names.
func (m *Memory) GetArchived(_ context.Context, ref Reference) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.check(ref); err != nil {
		return nil, err
	}
	if m.Archive == "" {
		return nil, fmt.Errorf("%s: no archive: %w", ref.Key, ErrNotFound)
	}
	return get(m.archived, ref)
}

func (m *Memory) check(ref Reference) error {
	if m.Err != nil {
		return m.Err
	}
	if ref.Bucket != m.Bucket {
		return fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	return nil
}

func get(objects map[string][]byte, ref Reference) ([]byte, error) {
	b, ok := objects[ref.Key]
	if !ok {
		return nil, fmt.Errorf("%s: %w", ref.Key, ErrNotFound)
	}
	if err := ref.Verify(b); err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Key, err)
	}
	return slices.Clone(b), nil
}

// Replace overwrites an object's bytes (a test's stand-in for damage).
func (m *Memory) Replace(key string, body []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[key] = slices.Clone(body)
}

// Delete removes an object from the payload bucket (a test's stand-in for
// the lifecycle).
func (m *Memory) Delete(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
}

// DeleteArchived removes the archive's copy (its lifecycle).
func (m *Memory) DeleteArchived(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.archived, key)
}

// Keys lists the payload bucket's keys, sorted.
func (m *Memory) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.objects)
}

// ArchivedKeys lists the archive's copies, sorted.
func (m *Memory) ArchivedKeys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return sortedKeys(m.archived)
}

func sortedKeys(objects map[string][]byte) []string {
	keys := make([]string, 0, len(objects))
	for k := range objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
