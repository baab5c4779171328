package payload

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Memory is S3's twin: a bucket in memory, for tests.
type Memory struct {
	Bucket string

	mu      sync.Mutex
	objects map[string][]byte
	// Err, when set, fails every call (an outage).
	Err error
}

// NewMemory returns an empty store for bucket.
func NewMemory(bucket string) *Memory { return &Memory{Bucket: bucket, objects: map[string][]byte{}} }

// Put stores a copy of body.
func (m *Memory) Put(_ context.Context, eventID string, body []byte) (Reference, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return Reference{}, m.Err
	}
	ref := NewReference(m.Bucket, eventID, body)
	m.objects[ref.Key] = slices.Clone(body)
	return ref, nil
}

// Get returns a copy of the object a reference names, checked against it.
func (m *Memory) Get(_ context.Context, ref Reference) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.Err != nil {
		return nil, m.Err
	}
	if ref.Bucket != m.Bucket {
		return nil, fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	b, ok := m.objects[ref.Key]
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

// Delete removes an object (a test's stand-in for the lifecycle).
func (m *Memory) Delete(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, key)
}

// Keys lists the stored keys, sorted.
func (m *Memory) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.objects))
	for k := range m.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
