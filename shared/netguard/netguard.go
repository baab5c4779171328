// Package netguard decides whether a webhook delivery may reach an address:
// only global unicast addresses pass.
//
// The ranges come from the IANA IPv4 and IPv6 Special-Purpose Address
// Registries (an entry passes only when the registry marks it globally
// reachable), plus multicast, IPv4's reserved 240/4 and, for IPv6, anything
// outside 2000::/3, the one global unicast range. Forms that carry an IPv4
// address — IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d),
// IPv4-translated (::ffff:0:a.b.c.d), NAT64 (64:ff9b::/96) and 6to4
// (2002::/16) — are judged by the IPv4 address they carry, since that is
// where a packet to them can end up.
//
// The configuration validator (a destination URL's host) and the delivery
// transport (the resolved IP at connect time) both call Check, so the two
// can never disagree.
package netguard

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// block is one registry entry: the range, how an error names it, and
// whether the registry marks it globally reachable. The most specific
// entry containing an address decides.
type block struct {
	prefix netip.Prefix
	what   string // "a loopback address"
	global bool
}

func refuse(prefix, what string) block {
	return block{prefix: netip.MustParsePrefix(prefix), what: what}
}

func allow(prefix string) block {
	return block{prefix: netip.MustParsePrefix(prefix), global: true}
}

// registries holds the two tables, built on first use: a function that
// never judges an address (ingest) does not pay for them at cold start.
var registries = sync.OnceValues(func() (ipv4, ipv6 []block) { return ipv4Registry(), ipv6Registry() })

// ipv4Registry is the IPv4 Special-Purpose Address Registry (2025) with
// multicast and the reserved and broadcast ranges.
func ipv4Registry() []block {
	return []block{
		refuse("0.0.0.0/8", "a this-network address"),
		refuse("0.0.0.0/32", "a this-host address"),
		refuse("10.0.0.0/8", "a private-use address"),
		refuse("100.64.0.0/10", "a shared (carrier-grade NAT) address"),
		refuse("127.0.0.0/8", "a loopback address"),
		refuse("169.254.0.0/16", "a link-local address"),
		refuse("172.16.0.0/12", "a private-use address"),
		refuse("192.0.0.0/24", "an IETF protocol assignment address"),
		refuse("192.0.0.0/29", "an IPv4 service continuity address"),
		refuse("192.0.0.8/32", "an IPv4 dummy address"),
		allow("192.0.0.9/32"),  // Port Control Protocol anycast
		allow("192.0.0.10/32"), // TURN anycast
		refuse("192.0.0.170/31", "a NAT64/DNS64 discovery address"),
		refuse("192.0.2.0/24", "a documentation address"),
		allow("192.31.196.0/24"), // AS112-v4
		allow("192.52.193.0/24"), // AMT
		// Deprecated by RFC 7526; its 6a44 relay entry (192.88.99.2/32) is
		// refused with the rest of the block.
		refuse("192.88.99.0/24", "a deprecated 6to4 relay anycast address"),
		refuse("192.168.0.0/16", "a private-use address"),
		allow("192.175.48.0/24"), // direct delegation AS112
		refuse("198.18.0.0/15", "a benchmarking address"),
		refuse("198.51.100.0/24", "a documentation address"),
		refuse("203.0.113.0/24", "a documentation address"),
		refuse("224.0.0.0/4", "a multicast address"),
		refuse("240.0.0.0/4", "a reserved address"),
		refuse("255.255.255.255/32", "a limited broadcast address"),
	}
}

// ipv6Registry is the IPv6 Special-Purpose Address Registry (2025) with
// multicast, link-local and the deprecated site-local range. The forms
// that carry an IPv4 address are handled before it (see embedded).
func ipv6Registry() []block {
	return []block{
		refuse("::/128", "the unspecified address"),
		refuse("::1/128", "a loopback address"),
		refuse("64:ff9b:1::/48", "a local-use IPv4/IPv6 translation address"),
		refuse("100::/64", "a discard-only address"),
		refuse("100:0:0:1::/64", "a dummy IPv6 prefix address"),
		refuse("2001::/23", "an IETF protocol assignment address"),
		refuse("2001::/32", "a Teredo address"),
		allow("2001:1::1/128"), // Port Control Protocol anycast
		allow("2001:1::2/128"), // TURN anycast
		allow("2001:1::3/128"), // DNS-SD service registration protocol anycast
		refuse("2001:2::/48", "a benchmarking address"),
		allow("2001:3::/32"),     // AMT
		allow("2001:4:112::/48"), // AS112-v6
		refuse("2001:10::/28", "a deprecated ORCHID address"),
		allow("2001:20::/28"), // ORCHIDv2
		allow("2001:30::/28"), // drone remote ID entity tags
		refuse("2001:db8::/32", "a documentation address"),
		allow("2620:4f:8000::/48"), // direct delegation AS112
		refuse("3fff::/20", "a documentation address"),
		refuse("5f00::/16", "a segment routing (SRv6) SID address"),
		refuse("fc00::/7", "a unique-local address"),
		refuse("fe80::/10", "a link-local address"),
		refuse("fec0::/10", "a deprecated site-local address"),
		refuse("ff00::/8", "a multicast address"),
	}
}

// globalUnicast is the IPv6 Address Space registry's one global unicast range.
var globalUnicast = netip.MustParsePrefix("2000::/3")

// RefusedError is an address or host name a delivery may not reach. Its
// text names the address (or the name) and what it is ("10.1.2.3 is a
// private-use address"), never more of a URL. Every refusal of Check,
// CheckHost and Allowed's methods is one; callers match it with errors.As.
type RefusedError struct {
	// Host is the address or host name refused, as it was checked.
	Host string
	msg  string
}

func (e *RefusedError) Error() string { return e.msg }

func refused(host, format string, args ...any) error {
	return &RefusedError{Host: host, msg: fmt.Sprintf(format, args...)}
}

// Check returns nil when addr is a global unicast address a delivery may
// reach, and otherwise a *RefusedError naming the range it belongs to.
func Check(addr netip.Addr) error {
	if !addr.IsValid() {
		return &RefusedError{msg: "invalid address"}
	}
	addr = addr.WithZone("")
	ipv4, ipv6 := registries()
	if v4, ok := embedded(addr); ok {
		if what, ok := judge(ipv4, v4); !ok {
			return refused(addr.String(), "%s embeds %s, %s", addr, v4, what)
		}
		return nil
	}
	table := ipv4
	if addr.Is6() {
		table = ipv6
	}
	if what, ok := judge(table, addr); !ok {
		return refused(addr.String(), "%s is %s", addr, what)
	}
	if addr.Is6() && !globalUnicast.Contains(addr) {
		return refused(addr.String(), "%s is a reserved address (outside %s, IPv6's global unicast range)", addr, globalUnicast)
	}
	return nil
}

// IsPublic reports whether addr is a global unicast address (Check passes).
func IsPublic(addr netip.Addr) bool { return Check(addr) == nil }

// judge finds the most specific entry of table containing addr; an address
// in no entry is global.
func judge(table []block, addr netip.Addr) (what string, ok bool) {
	best := -1
	for i, b := range table {
		if b.prefix.Contains(addr) && (best < 0 || b.prefix.Bits() > table[best].prefix.Bits()) {
			best = i
		}
	}
	if best < 0 || table[best].global {
		return "", true
	}
	return table[best].what, false
}

// IPv6 forms that carry an IPv4 address in known bits.
var (
	ipv4Compatible = netip.MustParsePrefix("::/96")           // deprecated, RFC 4291
	ipv4Translated = netip.MustParsePrefix("::ffff:0:0:0/96") // SIIT, RFC 2765
	nat64          = netip.MustParsePrefix("64:ff9b::/96")    // RFC 6052
	sixToFour      = netip.MustParsePrefix("2002::/16")       // RFC 3056
)

// embedded returns the IPv4 address an IPv6 address carries, if it has
// one of the forms that carry one. An IPv4 address is its own embedding.
func embedded(addr netip.Addr) (netip.Addr, bool) {
	if addr.Is4() {
		return netip.Addr{}, false
	}
	b := addr.As16()
	last := netip.AddrFrom4([4]byte{b[12], b[13], b[14], b[15]})
	switch {
	case addr.Is4In6():
		return addr.Unmap(), true
	case addr == netip.IPv6Unspecified() || addr == netip.IPv6Loopback():
		return netip.Addr{}, false // the registry names these two
	case ipv4Compatible.Contains(addr), ipv4Translated.Contains(addr), nat64.Contains(addr):
		return last, true
	case sixToFour.Contains(addr):
		return netip.AddrFrom4([4]byte{b[2], b[3], b[4], b[5]}), true
	}
	return netip.Addr{}, false
}

// Special-use domain names that never resolve to a public address.
var (
	loopbackNames   = []string{"localhost"}                      // RFC 6761
	privateUseNames = []string{"local", "home.arpa", "internal"} // RFC 6762, RFC 8375, ICANN 2024
)

// CheckHost judges the host of a destination URL before any lookup: an IP
// literal by Check; a name when it can only mean this machine or a private
// network (localhost and *.localhost, .local, .home.arpa, .internal, with or
// without the final dot), or when it is an IPv4 address written in a
// numeric form other than dotted decimal (2130706433, 0x7f.1, 127.1), which
// some resolvers read as an address. Other names are checked at connect
// time, on the addresses they resolve to.
func CheckHost(host string) error {
	if host == "" {
		return &RefusedError{msg: "empty host"}
	}
	name := strings.TrimSuffix(host, ".")
	if addr, err := netip.ParseAddr(name); err == nil {
		return Check(addr)
	}
	if name == "" {
		return refused(host, "%q is not a host name", host)
	}
	lower := strings.ToLower(name)
	for _, n := range loopbackNames {
		if lower == n || strings.HasSuffix(lower, "."+n) {
			return refused(host, "%q is a loopback name", host)
		}
	}
	for _, n := range privateUseNames {
		if lower == n || strings.HasSuffix(lower, "."+n) {
			return refused(host, "%q is a private-use name", host)
		}
	}
	if numeric(lower[strings.LastIndexByte(lower, '.')+1:]) {
		return refused(host, "%q is an IPv4 address in a numeric form other than dotted decimal", host)
	}
	return nil
}

// numeric reports whether a label is a decimal, octal or 0x-hex number. No
// top-level domain is numeric, so a name ending in one is an address.
func numeric(label string) bool {
	digits := label
	if h, ok := strings.CutPrefix(label, "0x"); ok {
		digits = h
		for i := 0; i < len(digits); i++ {
			if !strings.ContainsRune("0123456789abcdef", rune(digits[i])) {
				return false
			}
		}
		return true
	}
	if digits == "" {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}
