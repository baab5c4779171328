// Package secrets reads source and destination secrets from Secrets Manager
// through an in-memory cache shared by all invocations of a warm function.
//
// A secret's value is either one string or a JSON array of strings; several
// values are active together while a secret rotates. Values never appear in
// errors or logs: errors name the secret, never its contents.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
)

var (
	// ErrNotSet means the secret does not exist, has no current value, or is
	// scheduled for deletion: a caller should fail closed (401).
	ErrNotSet = errors.New("secret not set")
	// ErrInvalid means the secret exists but holds no usable value (empty,
	// binary, or a malformed JSON array): fail closed (401).
	ErrInvalid = errors.New("secret value invalid")
	// ErrUnavailable means the secret store could not be reached or refused
	// for a transient reason: a caller should answer 5xx so the sender retries.
	ErrUnavailable = errors.New("secret store unavailable")
)

// API is the part of the Secrets Manager client the cache uses.
type API interface {
	GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, optFns ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error)
}

// Defaults for a Cache.
const (
	DefaultTTL = 5 * time.Minute
	// DefaultMinRefresh bounds how often Refresh may go back to the store
	// for one secret, so a flood of forged requests cannot become a flood of
	// GetSecretValue calls.
	DefaultMinRefresh = 5 * time.Second
	// DefaultMaxStale is how long a value may still be served after its TTL
	// when the store is unavailable.
	DefaultMaxStale = time.Hour
)

// Cache caches secret values by name.
type Cache struct {
	api        API
	ttl        time.Duration
	minRefresh time.Duration
	maxStale   time.Duration
	now        func() time.Time

	mu      sync.Mutex
	entries map[string]*entry
}

type entry struct {
	values    []string
	fetchedAt time.Time // zero when never fetched successfully
	triedAt   time.Time // last call to the store, successful or not
	mu        sync.Mutex
}

// Option adjusts a Cache.
type Option func(*Cache)

// WithTTL sets how long a value is served before it is fetched again.
func WithTTL(d time.Duration) Option { return func(c *Cache) { c.ttl = d } }

// WithMinRefresh sets the shortest interval between two fetches of one
// secret forced by Refresh.
func WithMinRefresh(d time.Duration) Option { return func(c *Cache) { c.minRefresh = d } }

// WithMaxStale sets how long past its TTL a value may be served while the
// store is unavailable (0 disables serving stale values).
func WithMaxStale(d time.Duration) Option { return func(c *Cache) { c.maxStale = d } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(c *Cache) { c.now = now } }

// NewCache returns an empty cache reading from api.
func NewCache(api API, opts ...Option) *Cache {
	c := &Cache{api: api, ttl: DefaultTTL, minRefresh: DefaultMinRefresh, maxStale: DefaultMaxStale, now: time.Now, entries: map[string]*entry{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func (c *Cache) entry(name string) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[name]
	if !ok {
		e = &entry{}
		c.entries[name] = e
	}
	return e
}

// Get returns the active values of a secret, from the cache while fresh.
func (c *Cache) Get(ctx context.Context, name string) ([]string, error) {
	e := c.entry(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	if !e.fetchedAt.IsZero() && now.Sub(e.fetchedAt) < c.ttl {
		return e.values, nil
	}
	return c.fetch(ctx, name, e, now)
}

// Refresh fetches a secret again before its TTL, typically after a
// verification failed with the cached values (the secret may have just
// rotated). It goes to the store at most once per minRefresh per secret;
// otherwise it returns the cached values. changed reports whether the values
// differ from the ones cached before.
func (c *Cache) Refresh(ctx context.Context, name string) (values []string, changed bool, err error) {
	e := c.entry(name)
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	if !e.triedAt.IsZero() && now.Sub(e.triedAt) < c.minRefresh {
		if e.fetchedAt.IsZero() {
			return nil, false, fmt.Errorf("secret %q: %w", name, ErrNotSet)
		}
		return e.values, false, nil
	}
	old := e.values
	values, err = c.fetch(ctx, name, e, now)
	if err != nil {
		return nil, false, err
	}
	return values, !equal(old, values), nil
}

func (c *Cache) fetch(ctx context.Context, name string, e *entry, now time.Time) ([]string, error) {
	e.triedAt = now
	out, err := c.api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &name})
	if err != nil {
		err = classify(name, err)
		if errors.Is(err, ErrUnavailable) && !e.fetchedAt.IsZero() && now.Sub(e.fetchedAt) < c.ttl+c.maxStale {
			return e.values, nil // serve the last known values through a store outage
		}
		if !errors.Is(err, ErrUnavailable) {
			e.values, e.fetchedAt = nil, time.Time{}
		}
		return nil, err
	}
	if out.SecretString == nil {
		e.values, e.fetchedAt = nil, time.Time{}
		return nil, fmt.Errorf("secret %q holds binary data, want a string or a JSON array of strings: %w", name, ErrInvalid)
	}
	values, err := Parse(*out.SecretString)
	if err != nil {
		e.values, e.fetchedAt = nil, time.Time{}
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
	e.values, e.fetchedAt = values, now
	return values, nil
}

// Parse reads a secret value: one string, or a JSON array of non-empty
// strings. Surrounding whitespace is ignored. Errors never quote the value.
func Parse(s string) ([]string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("empty value: %w", ErrInvalid)
	}
	if !strings.HasPrefix(s, "[") {
		return []string{s}, nil
	}
	var values []string
	if err := json.Unmarshal([]byte(s), &values); err != nil {
		return nil, fmt.Errorf("value starts with '[' but is not a JSON array of strings: %w", ErrInvalid)
	}
	out := values[:0]
	for _, v := range values {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("JSON array holds no non-empty string: %w", ErrInvalid)
	}
	return out, nil
}

// classify maps a Secrets Manager error to ErrNotSet or ErrUnavailable by
// its type, never by its text.
func classify(name string, err error) error {
	var notFound *types.ResourceNotFoundException
	var invalidReq *types.InvalidRequestException
	var decrypt *types.DecryptionFailure
	switch {
	case errors.As(err, &notFound), errors.As(err, &invalidReq):
		return fmt.Errorf("secret %q: %w", name, ErrNotSet)
	case errors.As(err, &decrypt):
		return fmt.Errorf("secret %q cannot be decrypted: %w", name, ErrUnavailable)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("secret %q: %w: %w", name, ErrUnavailable, err)
	default:
		return fmt.Errorf("secret %q: %w: %w", name, ErrUnavailable, err)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
