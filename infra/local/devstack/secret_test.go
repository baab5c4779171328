package devstack_test

import (
	"regexp"
	"testing"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/signing"
)

// TestNewDestinationSecretIsTheDeployedForm: a generated local secret looks
// like the deployed stack's (32 letters and digits, no whsec_ prefix) and
// signs with a 24-byte key, as a subscriber's whsec_<value> decodes it.
func TestNewDestinationSecretIsTheDeployedForm(t *testing.T) {
	shape := regexp.MustCompile(`^[A-Za-z0-9]{32}$`)
	a, b := devstack.NewDestinationSecret(), devstack.NewDestinationSecret()
	if a == b {
		t.Fatal("two generated secrets are equal")
	}
	for _, s := range []string{a, b} {
		if !shape.MatchString(s) {
			t.Errorf("%q: want 32 letters and digits", s)
		}
		key, err := signing.ParseSecret("whsec_" + s)
		if err != nil || len(key) != 24 {
			t.Errorf("whsec_%s: key of %d bytes (%v), want 24", s, len(key), err)
		}
	}
}
