package https

import (
	"net/netip"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/netguard"
)

// addressGuard is what the transport asks of every resolved address before
// connecting: nothing with allowPrivateNetworks (nil, local development);
// the public addresses and the destination's allowCidrs, never a metadata
// or link-local address, with allowCidrs; the public addresses otherwise.
func addressGuard(d config.Destination) func(netip.Addr) error {
	if d.AllowPrivateNetworks {
		return nil
	}
	if len(d.AllowCIDRs) == 0 {
		return netguard.Check
	}
	return d.AllowedCIDRs().Check
}
