package secrets

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/google/go-cmp/cmp"
)

// fakeStore is a Secrets Manager stand-in: a value per name, or an error.
type fakeStore struct {
	mu     sync.Mutex
	values map[string]*string
	err    error
	calls  int
}

func (f *fakeStore) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.err != nil {
		return nil, f.err
	}
	v, ok := f.values[*in.SecretId]
	if !ok {
		return nil, &types.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: v}, nil
}

type clock struct{ t time.Time }

func (c *clock) now() time.Time          { return c.t }
func (c *clock) advance(d time.Duration) { c.t = c.t.Add(d) }
func newClock() *clock                   { return &clock{t: time.Unix(1_700_000_000, 0)} }

func TestParse(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr string
	}{
		{"whsec_abc", []string{"whsec_abc"}, ""},
		{"  token \n", []string{"token"}, ""},
		{`["old","new"]`, []string{"old", "new"}, ""},
		{`[" a ", "", "b"]`, []string{"a", "b"}, ""},
		{"", nil, "empty value: secret value invalid"},
		{"   ", nil, "empty value: secret value invalid"},
		{`[]`, nil, "JSON array holds no non-empty string: secret value invalid"},
		{`["",""]`, nil, "JSON array holds no non-empty string: secret value invalid"},
		{`[1,2]`, nil, "value starts with '[' but is not a JSON array of strings: secret value invalid"},
		{`[secret-value`, nil, "value starts with '[' but is not a JSON array of strings: secret value invalid"},
	}
	for _, tt := range tests {
		got, err := Parse(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("Parse(%q) error %v is not ErrInvalid", tt.in, err)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" || gotErr != tt.wantErr {
			t.Errorf("Parse(%q) = %v, %q; want %v, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
		if strings.Contains(gotErr, "secret-value") {
			t.Errorf("Parse error quotes the secret: %q", gotErr)
		}
	}
}

func TestCacheTTLAndRefresh(t *testing.T) {
	store := &fakeStore{values: map[string]*string{"s": aws.String("one")}}
	clk := newClock()
	c := NewCache(store, WithClock(clk.now), WithTTL(time.Minute), WithMinRefresh(5*time.Second))
	ctx := context.Background()

	get := func() []string {
		t.Helper()
		v, err := c.Get(ctx, "s")
		if err != nil {
			t.Fatalf("Get: %v", err)
		}
		return v
	}
	if diff := cmp.Diff([]string{"one"}, get()); diff != "" {
		t.Fatal(diff)
	}
	store.values["s"] = aws.String(`["one","two"]`)
	clk.advance(30 * time.Second)
	if diff := cmp.Diff([]string{"one"}, get()); diff != "" {
		t.Errorf("within TTL: %s", diff)
	}
	if store.calls != 1 {
		t.Errorf("calls within TTL = %d, want 1", store.calls)
	}
	// A failed verification forces a refresh: the rotated value arrives at once.
	v, changed, err := c.Refresh(ctx, "s")
	if err != nil || !changed || !cmp.Equal(v, []string{"one", "two"}) {
		t.Errorf("Refresh = %v, %v, %v; want [one two], true, nil", v, changed, err)
	}
	// A second refresh within minRefresh does not reach the store.
	clk.advance(time.Second)
	v, changed, err = c.Refresh(ctx, "s")
	if err != nil || changed || store.calls != 2 || !cmp.Equal(v, []string{"one", "two"}) {
		t.Errorf("bounded Refresh = %v, %v, %v with %d calls; want cached values, no call", v, changed, err, store.calls)
	}
	clk.advance(5 * time.Second)
	if _, changed, _ = c.Refresh(ctx, "s"); changed || store.calls != 3 {
		t.Errorf("Refresh after minRefresh: changed=%v calls=%d; want false, 3", changed, store.calls)
	}
	clk.advance(time.Minute)
	get()
	if store.calls != 4 {
		t.Errorf("calls after TTL = %d, want 4", store.calls)
	}
}

func TestCacheErrors(t *testing.T) {
	ctx := context.Background()
	t.Run("not found is ErrNotSet", func(t *testing.T) {
		c := NewCache(&fakeStore{values: map[string]*string{}})
		_, err := c.Get(ctx, "missing")
		if !errors.Is(err, ErrNotSet) || err.Error() != `secret "missing": secret not set` {
			t.Errorf("Get = %v, want ErrNotSet", err)
		}
	})
	t.Run("binary secret is ErrInvalid", func(t *testing.T) {
		c := NewCache(&fakeStore{values: map[string]*string{"b": nil}})
		if _, err := c.Get(ctx, "b"); !errors.Is(err, ErrInvalid) {
			t.Errorf("Get = %v, want ErrInvalid", err)
		}
	})
	t.Run("outage is ErrUnavailable, stale value served within maxStale", func(t *testing.T) {
		store := &fakeStore{values: map[string]*string{"s": aws.String("v")}}
		clk := newClock()
		c := NewCache(store, WithClock(clk.now), WithTTL(time.Minute), WithMaxStale(10*time.Minute))
		if _, err := c.Get(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		store.err = errors.New("dial tcp: connection refused")
		clk.advance(5 * time.Minute)
		if v, err := c.Get(ctx, "s"); err != nil || !cmp.Equal(v, []string{"v"}) {
			t.Errorf("Get during outage within maxStale = %v, %v; want [v]", v, err)
		}
		clk.advance(10 * time.Minute)
		if _, err := c.Get(ctx, "s"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Get past maxStale = %v, want ErrUnavailable", err)
		}
		fresh := NewCache(store)
		if _, err := fresh.Get(ctx, "s"); !errors.Is(err, ErrUnavailable) {
			t.Errorf("Get with nothing cached = %v, want ErrUnavailable", err)
		}
	})
	t.Run("deleted secret stops working at once", func(t *testing.T) {
		store := &fakeStore{values: map[string]*string{"s": aws.String("v")}}
		clk := newClock()
		c := NewCache(store, WithClock(clk.now), WithTTL(time.Minute))
		if _, err := c.Get(ctx, "s"); err != nil {
			t.Fatal(err)
		}
		delete(store.values, "s")
		clk.advance(2 * time.Minute)
		if _, err := c.Get(ctx, "s"); !errors.Is(err, ErrNotSet) {
			t.Errorf("Get after deletion = %v, want ErrNotSet", err)
		}
	})
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"whsec_x", `["a","b"]`, `[`, ` [ "x" ] `, `["\u0000"]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		values, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			if len(s) > 8 && strings.Contains(err.Error(), s) {
				t.Fatalf("error quotes the value")
			}
			return
		}
		if len(values) == 0 {
			t.Fatal("no values and no error")
		}
		for _, v := range values {
			if v == "" || strings.TrimSpace(v) != v {
				t.Fatalf("value %q not trimmed or empty", v)
			}
		}
	})
}

// hangingStore answers like fakeStore once released; until then every call
// hangs until its context ends.
type hangingStore struct {
	fakeStore
	release chan struct{}
	mu      sync.Mutex
	started int
}

func (h *hangingStore) GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	h.mu.Lock()
	h.started++
	h.mu.Unlock()
	select {
	case <-h.release:
		return h.fakeStore.GetSecretValue(ctx, in, opts...)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

func (h *hangingStore) calls() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.started
}

// TestHangingStoreServesStale: once the TTL has passed and the store hangs,
// a request still gets the cached secret well before its own deadline (a
// 10 s ingest deadline here), concurrent requests get it at once, one call
// at most is in flight, and after it fails the store is left alone for the
// back-off window.
func TestHangingStoreServesStale(t *testing.T) {
	store := &hangingStore{fakeStore: fakeStore{values: map[string]*string{"s": aws.String("v")}}, release: make(chan struct{})}
	clk := &syncClock{t: time.Unix(1_700_000_000, 0)}
	c := NewCache(store, WithClock(clk.now), WithTTL(time.Minute))
	close(store.release)
	if _, err := c.Get(context.Background(), "s"); err != nil {
		t.Fatal(err)
	}
	store.release = make(chan struct{}) // hang from now on
	clk.advance(2 * time.Minute)
	primed := store.calls()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			v, err := c.Get(ctx, "s")
			if err != nil || !cmp.Equal(v, []string{"v"}) {
				t.Errorf("Get = %v, %v; want the cached [v]", v, err)
			}
			if ctx.Err() != nil {
				t.Errorf("Get answered only at the request's deadline: %v", ctx.Err())
			}
		})
	}
	wg.Wait()
	if n := store.calls() - primed; n != 1 {
		t.Errorf("%d store calls for 20 concurrent requests, want 1", n)
	}
	clk.advance(time.Second)
	if v, err := c.Get(ctx, "s"); err != nil || !cmp.Equal(v, []string{"v"}) {
		t.Errorf("Get within the back-off window = %v, %v; want the cached [v]", v, err)
	}
	if n := store.calls() - primed; n != 1 {
		t.Errorf("%d store calls within the back-off window, want still 1", n)
	}
}

// TestFailingStoreOncePerWindow: a failing store is called at most once per
// back-off window, whether a stale value is served meanwhile or, with
// nothing cached, the failure itself.
func TestFailingStoreOncePerWindow(t *testing.T) {
	for _, cached := range []bool{true, false} {
		store := &fakeStore{values: map[string]*string{"s": aws.String("v")}}
		clk := newClock()
		c := NewCache(store, WithClock(clk.now), WithTTL(time.Minute), WithBackoff(10*time.Second))
		ctx := context.Background()
		if cached {
			if _, err := c.Get(ctx, "s"); err != nil {
				t.Fatal(err)
			}
			clk.advance(2 * time.Minute)
		}
		store.err = errors.New("dial tcp: i/o timeout")
		before := store.calls
		for range 295 { // 29.5 s of requests, one every 100 ms
			v, err := c.Get(ctx, "s")
			switch {
			case cached && (err != nil || !cmp.Equal(v, []string{"v"})):
				t.Fatalf("cached: Get = %v, %v; want the stale [v]", v, err)
			case !cached && !errors.Is(err, ErrUnavailable):
				t.Fatalf("nothing cached: Get = %v, %v; want ErrUnavailable", v, err)
			}
			clk.advance(100 * time.Millisecond)
		}
		if got := store.calls - before; got != 3 {
			t.Errorf("cached %v: %d store calls in 29.5 s, want 3 (one per 10 s window)", cached, got)
		}
		// Refresh respects the window too.
		if _, _, _ = c.Refresh(ctx, "s"); store.calls-before != 3 {
			t.Errorf("cached %v: Refresh within the window called the store", cached)
		}
	}
}

// TestColdCacheSingleFlight: with nothing cached, concurrent requests share
// one store call.
func TestColdCacheSingleFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		store := &hangingStore{fakeStore: fakeStore{values: map[string]*string{"s": aws.String("v")}}, release: make(chan struct{})}
		c := NewCache(store)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				if v, err := c.Get(context.Background(), "s"); err != nil || !cmp.Equal(v, []string{"v"}) {
					t.Errorf("Get = %v, %v; want [v]", v, err)
				}
			})
		}
		// Every request is blocked now: one in the store call, the others
		// behind it (or, with the bug, each in a store call of its own).
		synctest.Wait()
		if store.calls() == 0 {
			t.Fatal("no request reached the store")
		}
		close(store.release)
		wg.Wait()
		if n := store.calls(); n != 1 {
			t.Errorf("%d store calls, want 1", n)
		}
	})
}

// syncClock is a clock safe for concurrent readers.
type syncClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *syncClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *syncClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// TestValueVerbatim: a header's secret is its whole string, not read as a
// JSON array nor trimmed; it is cached and refreshed like any secret, apart
// from the parsed reading of the same secret.
func TestValueVerbatim(t *testing.T) {
	ctx := context.Background()
	clk := newClock()
	store := &fakeStore{values: map[string]*string{
		"token": aws.String(`["Bearer a"]`),
		"empty": aws.String(""),
	}}
	c := NewCache(store, WithClock(clk.now))
	v, err := c.Value(ctx, "token")
	if err != nil || v != `["Bearer a"]` {
		t.Fatalf("Value = %q, %v; want the string verbatim", v, err)
	}
	parsed, err := c.Get(ctx, "token")
	if err != nil || !cmp.Equal(parsed, []string{"Bearer a"}) {
		t.Fatalf("Get = %q, %v; want the parsed array", parsed, err)
	}
	if store.calls != 2 {
		t.Errorf("%d store calls, want 2 (one per reading)", store.calls)
	}
	if _, err := c.Value(ctx, "token"); err != nil || store.calls != 2 {
		t.Errorf("a fresh Value went to the store (%d calls, %v)", store.calls, err)
	}
	store.mu.Lock()
	store.values["token"] = aws.String("Bearer b")
	store.mu.Unlock()
	clk.advance(DefaultMinRefresh)
	v, changed, err := c.RefreshValue(ctx, "token")
	if err != nil || !changed || v != "Bearer b" {
		t.Errorf("RefreshValue = %q, %v, %v; want the new value, changed", v, changed, err)
	}
	if _, err := c.Value(ctx, "empty"); !errors.Is(err, ErrInvalid) || strings.Contains(err.Error(), "Bearer") {
		t.Errorf("empty: %v, want ErrInvalid", err)
	}
	if _, err := c.Value(ctx, "absent"); !errors.Is(err, ErrNotSet) {
		t.Errorf("absent: %v, want ErrNotSet", err)
	}
}
