package cost_test

import (
	"testing"

	"github.com/hookfan/hookfan/infra/tools/cost"
)

// TestPacingLinesByHand checks the paced lanes' figures against sums done
// by hand: leases of 100 ms of the rate (at most half the burst), a write
// each, at $0.625 per million writes.
func TestPacingLinesByHand(t *testing.T) {
	for _, tt := range []struct {
		rate, lease int
		perMillion  float64
	}{
		{1, 1, 0.625},        // 1/s: a token is 1 s, no lease
		{5, 1, 0.625},        // 200 ms a token: no lease
		{50, 5, 0.125},       // 20 ms: 5 a lease
		{500, 50, 0.0125},    // 2 ms: 50
		{5000, 500, 0.00125}, // 0.2 ms: 500
	} {
		if got := cost.LeaseSize(tt.rate); got != tt.lease {
			t.Errorf("%d/s: lease of %d, want %d", tt.rate, got, tt.lease)
		}
		if got := cost.PacingPerMillion(tt.rate); !near(got, tt.perMillion) {
			t.Errorf("%d/s: %v per million deliveries, want %v", tt.rate, got, tt.perMillion)
		}
	}
	// A write every 5 s for a 30-day month (2,592,000 s): 518,400 writes.
	if got, want := cost.AdaptiveMonthMax(), 518400*0.625/1e6; !near(got, want) {
		t.Errorf("adaptive month: %v, want %v", got, want)
	}
}
