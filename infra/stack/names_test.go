package stack

import (
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/config"
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
	small := map[string]string{config.EnvMetricsSink: "emf", config.EnvSources: strings.Repeat("s", 3000)}
	if err := checkEnvironment("Hookfan/Ingest", small); err != nil {
		t.Errorf("3 KB environment: %v", err)
	}
	big := map[string]string{config.EnvMetricsSink: "emf", config.EnvSources: strings.Repeat("s", 4100)}
	err := checkEnvironment("Hookfan/Ingest", big)
	if err == nil || !strings.Contains(err.Error(), "Hookfan/Ingest") || !strings.Contains(err.Error(), config.EnvSources+"=") {
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

func TestCheckOutputCount(t *testing.T) {
	cfg := &config.Config{Sources: make([]config.Source, 2)}
	cfg.Destinations = make([]config.Destination, MaxDestinations(2))
	if err := checkOutputCount(cfg); err != nil || outputCount(cfg) > MaxOutputs {
		t.Errorf("%d destinations: %v (%d outputs)", len(cfg.Destinations), err, outputCount(cfg))
	}
	cfg.Destinations = append(cfg.Destinations, config.Destination{})
	if err := checkOutputCount(cfg); err == nil || !strings.Contains(err.Error(), "at most 98 destinations") {
		t.Errorf("%d destinations: got %v, want the limit named", len(cfg.Destinations), err)
	}
}
