package cost

import (
	"math"
	"testing"
)

// TestEgressByHand: the static egress lines, worked out by hand.
func TestEgressByHand(t *testing.T) {
	near := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	two := EgressFixed(2)
	near("NAT gateways, 2 zones", two[0].USD, 2*0.045*730)     // $65.70
	near("public IPv4, 2 zones", two[1].USD, 2*0.005*730)      // $7.30
	near("a month, 1 zone", Sum(EgressFixed(1)), 0.050*730)    // $36.50
	near("a month, 3 zones", Sum(EgressFixed(3)), 3*0.050*730) // $109.50
	per := EgressPerMillion(1)
	near("NAT processing, 1 KB", per[0].USD, 1e6*(1024+3072)/(1<<30)*0.045)
	near("flow logs", per[1].USD, 1e6*1040.0/(1<<30)*0.50)
	near("interface endpoints, 2 zones, 3 services", EgressInterfaceEndpoints(2, 3), 6*0.01*730) // $43.80
	if EgressPrices.GatewayEndpoint.USD != 0 {
		t.Error("gateway endpoints priced")
	}
	// Bigger bodies cost more to process, never less.
	if EgressPerMillion(256)[0].USD <= per[0].USD {
		t.Error("NAT processing does not grow with the body")
	}
}

// TestEgressTypesApart: the egress types are priced once, apart from the
// rest of the model.
func TestEgressTypesApart(t *testing.T) {
	for typ := range EgressPricedTypes {
		if _, dup := PricedTypes[typ]; dup {
			t.Errorf("%s is in PricedTypes and EgressPricedTypes", typ)
		}
	}
}
