package cost

import (
	"math"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
)

// TestClientAuthCost: each tls or auth.oauth2 secret is billed once a
// month and read once per cache TTL; the deployment's secret count holds
// them, each name once.
func TestClientAuthCost(t *testing.T) {
	// $0.40 + 8,640 reads (30 days / 5 min) at $0.05 per 10,000.
	if got, want := ClientAuthSecretFixed(), 0.40+8640.0/1e4*0.05; math.Abs(got-want) > 1e-9 {
		t.Errorf("ClientAuthSecretFixed = %v, want %v", got, want)
	}
	cfg := Reference(2)
	cfg.Destinations[0].TLS = &config.TLS{ClientCertificateSecret: "c", CASecret: "ca"}
	cfg.Destinations[0].Auth = &config.Auth{OAuth2: &config.OAuth2{TokenURL: "https://idp.example/t", ClientSecret: "o"}}
	cfg.Destinations[1].TLS = &config.TLS{ClientCertificateSecret: "c"} // the same secret, billed once
	if got, want := Resources(cfg).BilledSecrets, Resources(Reference(2)).BilledSecrets+3; got != want {
		t.Errorf("BilledSecrets = %d, want %d", got, want)
	}
}
