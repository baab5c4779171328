package ingest

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestProxyHeaderValues(t *testing.T) {
	tests := []struct {
		name   string
		h      proxyHeader
		lookup string
		want   []string
	}{
		{"exact single", proxyHeader{single: map[string]string{"Stripe-Signature": "a"}}, "Stripe-Signature", []string{"a"}},
		{"case-insensitive single", proxyHeader{single: map[string]string{"stripe-signature": "a"}}, "Stripe-Signature", []string{"a"}},
		{"absent", proxyHeader{single: map[string]string{"X-Other": "a"}}, "Stripe-Signature", nil},
		{"multi preferred over single", proxyHeader{single: map[string]string{"X-A": "last"}, multi: map[string][]string{"X-A": {"first", "last"}}}, "x-a", []string{"first", "last"}},
		{"several spellings, multi, stable order", proxyHeader{multi: map[string][]string{"x-a": {"3"}, "X-A": {"1", "2"}, "X-a": {"4"}}}, "X-A", []string{"1", "2", "4", "3"}},
		{"several spellings, single, stable order", proxyHeader{single: map[string]string{"x-a": "3", "X-A": "1", "X-a": "2"}}, "x-A", []string{"1", "2", "3"}},
		{"same length, other name", proxyHeader{multi: map[string][]string{"X-B": {"b"}}}, "X-A", nil},
		{"nil maps", proxyHeader{}, "X-A", nil},
		// strings.EqualFold alone would match these: U+017F folds to s, U+212A to k.
		{"non-ASCII spelling", proxyHeader{multi: map[string][]string{"\u017ftripe-Signature": {"a"}}}, "Stripe-Signature", nil},
		{"Kelvin sign", proxyHeader{single: map[string]string{"X-\u212a": "a"}}, "X-K", nil},
	}
	for _, tt := range tests {
		for range 20 { // map order varies between iterations
			if diff := cmp.Diff(tt.want, tt.h.Values(tt.lookup)); diff != "" {
				t.Fatalf("%s (-want +got):\n%s", tt.name, diff)
			}
		}
	}
}

// TestProxyHeaderValuesKeepsTheEvent checks that a caller appending to the
// values it got never writes into the event's headers.
func TestProxyHeaderValuesKeepsTheEvent(t *testing.T) {
	backing := make([]string, 1, 4)
	backing[0] = "a"
	h := proxyHeader{multi: map[string][]string{"X-A": backing}}
	vs := h.Values("x-a")
	_ = append(vs, "b")
	if got := backing[:2][1]; got != "" {
		t.Errorf("append to the values wrote %q into the event's slice", got)
	}
}
