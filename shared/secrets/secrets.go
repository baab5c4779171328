// Package secrets reads source and destination secrets from Secrets Manager
// through an in-memory cache shared by all invocations of a warm function.
//
// A secret's value is either one string or a JSON array of strings; several
// values are active together while a secret rotates. Values never appear in
// errors or logs: errors name the secret, never its contents.
//
// Through a store outage the cache keeps answering: each call to the store
// has its own short deadline, at most one is in flight per secret, requests
// arriving meanwhile get the cached value, and after a failure the store is
// left alone for a back-off window while the last value (up to maxStale
// past its TTL) or the failure is served.
package secrets

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
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
	// DefaultFetchTimeout bounds each call to the store, whatever the
	// deadline of the request that needed it.
	DefaultFetchTimeout = 2 * time.Second
	// DefaultBackoff is how long after a failed call the store is left
	// alone: meanwhile a stale value is served, or with none the failure.
	DefaultBackoff = 10 * time.Second
)

// Cache caches secret values by name. A value is fetched again once its
// TTL has passed, by one call at a time per secret, in the background of
// the requests that need it: the request that finds the value expired
// waits for the call (at most the fetch timeout), and requests arriving
// while it is in flight are answered with the cached value at once. After
// a failed call the store is left alone for the back-off window.
type Cache struct {
	api          API
	ttl          time.Duration
	minRefresh   time.Duration
	maxStale     time.Duration
	fetchTimeout time.Duration
	backoff      time.Duration
	now          func() time.Time

	mu      sync.Mutex
	entries map[entryKey]*entry
}

// entryKey names a cached secret and how its value is read: parsed (one
// string or a JSON array) or verbatim.
type entryKey struct {
	name     string
	verbatim bool
}

// entry is one secret's state. Its mutex is never held during a call to
// the store.
type entry struct {
	verbatim  bool // the value is used as it is (Value), not parsed (Get)
	mu        sync.Mutex
	values    []string
	fetchedAt time.Time // last success; zero when nothing usable is cached
	triedAt   time.Time // last call to the store, successful or not
	failedAt  time.Time // last failed call; zero after a success
	failure   error     // its error
	flight    *flight   // the call in progress
}

// flight is one call to the store; done is closed when the entry holds its
// outcome.
type flight struct{ done chan struct{} }

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

// WithFetchTimeout sets the deadline of each call to the store.
func WithFetchTimeout(d time.Duration) Option { return func(c *Cache) { c.fetchTimeout = d } }

// WithBackoff sets how long after a failed call the store is left alone.
func WithBackoff(d time.Duration) Option { return func(c *Cache) { c.backoff = d } }

// WithClock replaces time.Now, for tests.
func WithClock(now func() time.Time) Option { return func(c *Cache) { c.now = now } }

// NewCache returns an empty cache reading from api.
func NewCache(api API, opts ...Option) *Cache {
	c := &Cache{api: api, ttl: DefaultTTL, minRefresh: DefaultMinRefresh, maxStale: DefaultMaxStale,
		fetchTimeout: DefaultFetchTimeout, backoff: DefaultBackoff, now: time.Now, entries: map[entryKey]*entry{}}
	for _, o := range opts {
		o(c)
	}
	return c
}

func (c *Cache) entry(k entryKey) *entry {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.entries[k]
	if !ok {
		e = &entry{verbatim: k.verbatim}
		c.entries[k] = e
	}
	return e
}

// Get returns the active values of a secret, from the cache while fresh.
func (c *Cache) Get(ctx context.Context, name string) ([]string, error) {
	return c.get(ctx, entryKey{name: name})
}

// Value returns a secret's value verbatim: the whole secret string, not
// read as a JSON array (a header's value, such as "Bearer …"). It is cached
// and refreshed as Get's values are; an empty or binary secret is
// ErrInvalid. The value never appears in errors.
func (c *Cache) Value(ctx context.Context, name string) (string, error) {
	values, err := c.get(ctx, entryKey{name: name, verbatim: true})
	if err != nil {
		return "", err
	}
	return values[0], nil
}

// RefreshValue is Refresh for a secret read with Value.
func (c *Cache) RefreshValue(ctx context.Context, name string) (value string, changed bool, err error) {
	values, changed, err := c.refresh(ctx, entryKey{name: name, verbatim: true})
	if err != nil {
		return "", false, err
	}
	return values[0], changed, nil
}

func (c *Cache) get(ctx context.Context, k entryKey) ([]string, error) {
	name := k.name
	e := c.entry(k)
	e.mu.Lock()
	now := c.now()
	switch {
	case c.fresh(e, now):
		defer e.mu.Unlock()
		return e.values, nil
	case c.backingOff(e, now):
		defer e.mu.Unlock()
		return c.fallback(name, e, now)
	case e.flight != nil && c.usable(e, now):
		// Another request is fetching it: the value it replaces still serves.
		defer e.mu.Unlock()
		return e.values, nil
	}
	f := e.flight
	if f == nil {
		f = c.start(ctx, name, e, now)
	}
	e.mu.Unlock()
	return c.wait(ctx, name, e, f)
}

// Refresh fetches a secret again before its TTL, typically after a
// verification failed with the cached values (the secret may have just
// rotated). It goes to the store at most once per minRefresh per secret,
// and not within the back-off window after a failure; otherwise it returns
// the cached values. changed reports whether the values differ from the
// ones cached before.
func (c *Cache) Refresh(ctx context.Context, name string) (values []string, changed bool, err error) {
	return c.refresh(ctx, entryKey{name: name})
}

func (c *Cache) refresh(ctx context.Context, k entryKey) (values []string, changed bool, err error) {
	name := k.name
	e := c.entry(k)
	e.mu.Lock()
	now := c.now()
	old := e.values
	if (!e.triedAt.IsZero() && now.Sub(e.triedAt) < c.minRefresh) || c.backingOff(e, now) {
		defer e.mu.Unlock()
		values, err := c.fallback(name, e, now)
		return values, false, err
	}
	f := e.flight
	if f == nil {
		f = c.start(ctx, name, e, now)
	}
	e.mu.Unlock()
	values, err = c.wait(ctx, name, e, f)
	if err != nil {
		return nil, false, err
	}
	return values, !slices.Equal(old, values), nil
}

// fresh reports whether the cached values are within their TTL.
func (c *Cache) fresh(e *entry, now time.Time) bool {
	return !e.fetchedAt.IsZero() && now.Sub(e.fetchedAt) < c.ttl
}

// usable reports whether the cached values may still be served: within
// the TTL, or past it by at most maxStale.
func (c *Cache) usable(e *entry, now time.Time) bool {
	return !e.fetchedAt.IsZero() && now.Sub(e.fetchedAt) < c.ttl+c.maxStale
}

// backingOff reports whether a failed call is recent enough that the store
// is left alone.
func (c *Cache) backingOff(e *entry, now time.Time) bool {
	return !e.failedAt.IsZero() && now.Sub(e.failedAt) < c.backoff
}

// fallback is the answer without a call: the cached values while usable,
// else the last failure.
func (c *Cache) fallback(name string, e *entry, now time.Time) ([]string, error) {
	switch {
	case c.usable(e, now):
		return e.values, nil
	case e.failure != nil:
		return nil, e.failure
	default:
		return nil, fmt.Errorf("secret %q: %w", name, ErrNotSet)
	}
}

// start begins the one call to the store for e; e.mu is held. The call
// runs on its own deadline, detached from the request that started it, so
// that request's end does not fail it for the others.
func (c *Cache) start(ctx context.Context, name string, e *entry, now time.Time) *flight {
	f := &flight{done: make(chan struct{})}
	e.flight, e.triedAt = f, now
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.fetchTimeout)
	go func() {
		defer cancel()
		values, err := c.fetch(fctx, name, e.verbatim)
		e.mu.Lock()
		c.settle(e, values, err)
		e.flight = nil
		e.mu.Unlock()
		close(f.done)
	}()
	return f
}

// wait waits for a call to the store and answers from the entry it
// settled; a request whose context ends first is answered from the cache
// as it stands.
func (c *Cache) wait(ctx context.Context, name string, e *entry, f *flight) ([]string, error) {
	select {
	case <-f.done:
	case <-ctx.Done():
		e.mu.Lock()
		defer e.mu.Unlock()
		if now := c.now(); c.usable(e, now) {
			return e.values, nil
		}
		return nil, fmt.Errorf("secret %q: %w: %w", name, ErrUnavailable, ctx.Err())
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	now := c.now()
	if c.fresh(e, now) {
		return e.values, nil
	}
	return c.fallback(name, e, now)
}

// settle records a call's outcome; e.mu is held. An unavailable store
// keeps the cached values for fallback; a definite answer (no such secret,
// an unusable value) drops them, so a deleted secret stops working at once.
func (c *Cache) settle(e *entry, values []string, err error) {
	now := c.now()
	if err == nil {
		e.values, e.fetchedAt, e.failedAt, e.failure = values, now, time.Time{}, nil
		return
	}
	e.failedAt, e.failure = now, err
	if !errors.Is(err, ErrUnavailable) {
		e.values, e.fetchedAt = nil, time.Time{}
	}
}

// fetch makes one call to the store and reads the value: parsed, or as
// one verbatim value.
func (c *Cache) fetch(ctx context.Context, name string, verbatim bool) ([]string, error) {
	out, err := c.api.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: &name})
	if err != nil {
		return nil, classify(name, err)
	}
	if out.SecretString == nil {
		return nil, fmt.Errorf("secret %q holds binary data, want a string or a JSON array of strings: %w", name, ErrInvalid)
	}
	if verbatim {
		if *out.SecretString == "" {
			return nil, fmt.Errorf("secret %q is empty: %w", name, ErrInvalid)
		}
		return []string{*out.SecretString}, nil
	}
	values, err := Parse(*out.SecretString)
	if err != nil {
		return nil, fmt.Errorf("secret %q: %w", name, err)
	}
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
		return fmt.Errorf("secret %q cannot be decrypted: %w: %w", name, ErrUnavailable, err)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return fmt.Errorf("secret %q: %w: %w", name, ErrUnavailable, err)
	default:
		return fmt.Errorf("secret %q: %w: %w", name, ErrUnavailable, err)
	}
}
