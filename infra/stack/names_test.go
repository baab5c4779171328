package stack

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
)

func TestOutputID(t *testing.T) {
	tests := []struct{ name, want string }{
		{"stripe", "Stripe"},
		{"order-events", "OrderEvents"},
		{"a-1", "A1"},
		{"0day", "0day"},
	}
	for _, tt := range tests {
		if got := outputID(tt.name); got != tt.want {
			t.Errorf("outputID(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestCheckOutputIDs(t *testing.T) {
	cfg := &config.Config{
		Sources:      []config.Source{{Name: "a-b"}, {Name: "ab"}},
		Destinations: []config.Destination{{Name: "x-1"}, {Name: "x1"}, {Name: "y"}},
	}
	err := checkOutputIDs(cfg)
	if err == nil || !strings.Contains(err.Error(), `"x-1" and "x1"`) {
		t.Errorf("got %v, want the colliding destinations named", err)
	}
	if err != nil && strings.Contains(err.Error(), `"a-b"`) {
		t.Errorf("a-b (AB) and ab (Ab) do not collide: %v", err)
	}
}

func TestCheckEnvironment(t *testing.T) {
	small := map[string]string{config.EnvMetricsSink: "emf", ingest.EnvSources: strings.Repeat("s", 3000)}
	if err := checkEnvironment("Hookfan/Ingest", small); err != nil {
		t.Errorf("3 KB environment: %v", err)
	}
	big := map[string]string{config.EnvMetricsSink: "emf", ingest.EnvSources: strings.Repeat("s", 4100)}
	err := checkEnvironment("Hookfan/Ingest", big)
	if err == nil || !strings.Contains(err.Error(), "Hookfan/Ingest") || !strings.Contains(err.Error(), ingest.EnvSources+"=") {
		t.Errorf("got %v, want an error naming the function and the variables", err)
	}
}

func TestRetentionDays(t *testing.T) {
	for _, days := range []int{1, 14, 30, 365, 3653} {
		if r, err := retentionDays(days); err != nil || r == "" {
			t.Errorf("retentionDays(%d) = %q, %v", days, r, err)
		}
	}
	if _, err := retentionDays(31); err == nil {
		t.Error("retentionDays(31): want an error")
	}
}

func TestSecretARNs(t *testing.T) {
	tests := []struct {
		in            string
		arn, complete bool
	}{
		{"hookfan/sources/stripe", false, false},
		{"arn:aws:secretsmanager:eu-west-1:123456789012:secret:shopify-AbCdEf", true, true},
		{"arn:aws:secretsmanager:eu-west-1:123456789012:secret:shopify", true, false},
		{"arn:aws-us-gov:secretsmanager:us-gov-west-1:123456789012:secret:a/b-123456", true, true},
	}
	for _, tt := range tests {
		if got := isSecretARN(tt.in); got != tt.arn {
			t.Errorf("isSecretARN(%q) = %v", tt.in, got)
		}
		if got := completeARN.MatchString(tt.in); got != tt.complete {
			t.Errorf("complete(%q) = %v", tt.in, got)
		}
	}
}

// TestOutputsDoNotGrowWithDestinations: a lane adds no output to the
// parent (its lane is described in its own stack and parameter); only
// sources do, and too many of them fail early with the fix.
func TestOutputsDoNotGrowWithDestinations(t *testing.T) {
	cfg := &config.Config{Sources: make([]config.Source, 3)}
	for _, n := range []int{0, 98, 99, 300, 1000} {
		cfg.Destinations = make([]config.Destination, n)
		if got := outputCount(cfg); got != 7 {
			t.Errorf("%d destinations: %d outputs, want 7 (API, 3 sources, dashboard, index, operator role)", n, got)
		}
		if err := checkOutputCount(cfg); err != nil {
			t.Errorf("%d destinations: %v", n, err)
		}
	}
	cfg.API = config.API{DomainName: "hooks.example.com", CertificateArn: "arn:aws:acm:eu-west-1:123456789012:certificate/x"}
	if got := outputCount(cfg); got != 8 {
		t.Errorf("with a domain and no hosted zone: %d outputs, want 8 (its DNS target too)", got)
	}
	cfg.Sources = make([]config.Source, MaxOutputs-4)
	if err := checkOutputCount(cfg); err == nil || !strings.Contains(err.Error(), "split the configuration") {
		t.Errorf("%d sources: got %v, want the limit and the fix", len(cfg.Sources), err)
	}
}

func TestMostDestinations(t *testing.T) {
	for _, tt := range []struct{ fixed, want int }{
		{0, 488},  // 488 lanes + 12 pages = 500
		{50, 440}, // 440 lanes + 10 pages + 50
		{460, 40}, // the overview holds 40: no page yet
		{461, 39}, // 39 + 461
		{500, 0},  // nothing fits
	} {
		got := mostDestinations(tt.fixed)
		if got != tt.want {
			t.Errorf("mostDestinations(%d) = %d, want %d", tt.fixed, got, tt.want)
		}
		if pages := (got - 1) / LanesPerDashboard; got > 0 && tt.fixed+got+pages > MaxResources {
			t.Errorf("mostDestinations(%d) = %d needs %d resources", tt.fixed, got, tt.fixed+got+pages)
		}
	}
}
