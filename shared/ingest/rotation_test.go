package ingest_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"

	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

// fakeStore is a Secrets Manager holding one value per name.
type fakeStore struct {
	mu    sync.Mutex
	value map[string]string
	down  bool
	calls int
}

func (s *fakeStore) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls++
	if s.down {
		return nil, &smtypes.InternalServiceError{Message: new("service unavailable")}
	}
	v, ok := s.value[*in.SecretId]
	if !ok {
		return nil, &smtypes.ResourceNotFoundException{Message: new("not found")}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: &v}, nil
}

func (s *fakeStore) set(name, v string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.value[name] = v
}

func (s *fakeStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls
}

// TestRotationWithTheRealCache drives the handler with secrets.Cache: a
// rotated secret is picked up within secrets.DefaultMinRefresh, and forged
// requests cannot turn into a flood of GetSecretValue calls.
func TestRotationWithTheRealCache(t *testing.T) {
	const name = "hookfan/sources/github"
	store := &fakeStore{value: map[string]string{name: "old-secret"}}
	clock := time.Date(2026, 11, 30, 5, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	pub := &fakePublisher{}
	h, err := ingest.New(ingest.Options{
		Sources:   testSources(),
		TopicARN:  topicARN,
		Publisher: pub,
		Secrets:   secrets.NewCache(store, secrets.WithClock(now)),
		Metrics:   metrics.NewRecorder(&memSink{}),
		Replay:    replayguard.NewMemory(),
		Logger:    slog.New(slog.DiscardHandler),
		Now:       now,
	})
	if err != nil {
		t.Fatal(err)
	}
	send := func(secret string) int {
		t.Helper()
		req := signed(t, "github", "github", "push", clock)
		if secret != secretOf("github") {
			// Sign with another secret by rewriting the header.
			other := signedWith(t, "github", "push", secret)
			req.Headers["X-Hub-Signature-256"] = other
			req.MultiValueHeaders["X-Hub-Signature-256"] = []string{other}
		}
		resp, _ := h.Handle(context.Background(), req)
		return resp.StatusCode
	}
	steps := []struct {
		name      string
		advance   time.Duration
		rotate    string // new store value, when set
		secret    string
		wantCode  int
		wantCalls int
	}{
		{"old secret accepted", 0, "", "old-secret", http.StatusAccepted, 1},
		{"rotated: new secret, cache still old, refreshed too recently", 2 * time.Second, `["` + secretOf("github") + `","old-secret"]`, secretOf("github"), http.StatusUnauthorized, 1},
		{"after the refresh bound the new secret is picked up", secrets.DefaultMinRefresh, "", secretOf("github"), http.StatusAccepted, 2},
		{"old secret still accepted during the rotation", time.Second, "", "old-secret", http.StatusAccepted, 2},
		{"forged requests: at most one fetch per bound", time.Second, "", "forged", http.StatusUnauthorized, 2},
		{"forged again", time.Second, "", "forged", http.StatusUnauthorized, 2},
		{"forged after the bound", secrets.DefaultMinRefresh, "", "forged", http.StatusUnauthorized, 3},
	}
	for _, st := range steps {
		clock = clock.Add(st.advance)
		if st.rotate != "" {
			store.set(name, st.rotate)
		}
		if got := send(st.secret); got != st.wantCode {
			t.Errorf("%s: status %d, want %d", st.name, got, st.wantCode)
		}
		if got := store.count(); got != st.wantCalls {
			t.Errorf("%s: GetSecretValue calls = %d, want %d", st.name, got, st.wantCalls)
		}
	}

	// A store outage with nothing cached answers 503 so the provider retries.
	store.mu.Lock()
	store.down = true
	store.mu.Unlock()
	req := signed(t, "shopify", "shopify", "orders.create", clock)
	resp, _ := h.Handle(context.Background(), req)
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodeSecretStoreUnavailable {
		t.Errorf("store down: %d %s, want 503 secret_store_unavailable", resp.StatusCode, resp.Body)
	}
}

// signedWith returns the X-Hub-Signature-256 of a github sample under secret.
func signedWith(t *testing.T, kind, name, secret string) string {
	t.Helper()
	s := eventsSample(kind, name)
	h, err := eventsSign(kind, s, secret)
	if err != nil {
		t.Fatal(err)
	}
	return h.Get("X-Hub-Signature-256")
}
