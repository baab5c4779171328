package https

import (
	"context"
	"encoding/base64"
	"errors"
	"sync"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
)

const testSecretID = "hookfan/destinations/orders"

// fakeSecrets serves secret values.
type fakeSecrets struct {
	mu     sync.Mutex
	values []string
}

func (f *fakeSecrets) Get(_ context.Context, name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name != testSecretID {
		return nil, errors.New("unknown secret " + name)
	}
	return f.values, nil
}

func (f *fakeSecrets) set(values ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values = values
}

// TestSignerReuse: the signer is rebuilt only when the secret changes.
func TestSignerReuse(t *testing.T) {
	// Two signing secrets (whsec_ and 32 bytes of base64).
	s1, s2 := "whsec_"+base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef")), "whsec_"+base64.StdEncoding.EncodeToString([]byte("fedcba9876543210fedcba9876543210"))
	secrets := &fakeSecrets{values: []string{s1}}
	d := config.Destination{Name: "orders", URL: "http://127.0.0.1:1/", AllowPrivateNetworks: true}
	s, err := New(Options{Destination: d, SecretID: testSecretID, Secrets: secrets, Client: NewClient(d)})
	if err != nil {
		t.Fatal(err)
	}
	a, err := s.currentSigner(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.currentSigner(context.Background())
	secrets.set(s1, s2)
	c, _ := s.currentSigner(context.Background())
	if a != b || c == a || c.Keys() != 2 {
		t.Errorf("signers %p %p %p (keys %d), want the first reused and a new one with 2 keys after rotation", a, b, c, c.Keys())
	}
}
