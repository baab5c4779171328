// Package netguard classifies IP addresses as publicly routable or not.
//
// Both the configuration validator (a destination URL whose host is a literal
// non-public IP) and the delivery transport (the resolved IP at connect time)
// use the same classification, so the two can never disagree.
package netguard

import (
	"fmt"
	"net/netip"
)

// blocked lists every range a webhook delivery must never reach unless the
// destination explicitly allows private networks.
var blocked = []struct {
	prefix netip.Prefix
	reason string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "this-network"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "IETF protocol assignments"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "zero (unspecified)"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "unique-local"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// Check returns nil when addr is a public unicast address, and otherwise an
// error naming the kind of range it belongs to. IPv4-mapped IPv6 addresses
// (::ffff:a.b.c.d) are judged by their IPv4 form; NAT64 (64:ff9b::/96) by the
// IPv4 address they embed.
func Check(addr netip.Addr) error {
	if !addr.IsValid() {
		return fmt.Errorf("invalid address")
	}
	addr = addr.WithZone("")
	if addr.Is4In6() {
		addr = addr.Unmap()
	}
	if nat64 := netip.MustParsePrefix("64:ff9b::/96"); nat64.Contains(addr) {
		b := addr.As16()
		addr = netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	}
	for _, b := range blocked {
		if b.prefix.Contains(addr) {
			return fmt.Errorf("%s is a %s address", addr, b.reason)
		}
	}
	return nil
}

// IsPublic reports whether addr is a public unicast address.
func IsPublic(addr netip.Addr) bool { return Check(addr) == nil }
