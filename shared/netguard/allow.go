package netguard

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
)

// MaxAllowed is the most ranges one destination's allowCidrs may list: the
// list travels in the deliver function's environment (4 KB in all).
const MaxAllowed = 20

// never holds the ranges no allow-list can open: the instance metadata
// service and the other link-local services (Amazon DNS at 169.254.169.253,
// the ECS and EKS credential endpoints, the time service), the "this
// network" block (0.0.0.0 connects to the local host), multicast and the
// reserved and broadcast block. A prefix overlapping one of them is
// refused when parsed; an address in one is refused at dial time whatever
// the list says.
var never = []block{
	refuse("169.254.0.0/16", "a link-local address (the instance metadata service lives there)"),
	refuse("0.0.0.0/8", "a this-network address"),
	refuse("224.0.0.0/4", "a multicast address"),
	refuse("240.0.0.0/4", "a reserved or broadcast address"),
	refuse("fe80::/10", "a link-local address"),
	refuse("fd00:ec2::254/128", "the instance metadata service's IPv6 address"),
	refuse("ff00::/8", "a multicast address"),
	refuse("::/128", "the unspecified address"),
}

// carriers are the IPv6 forms that carry an IPv4 address (see embedded): a
// range of them could carry a metadata address, so an allow-list names the
// IPv4 range instead.
var carriers = []netip.Prefix{ipv4Compatible, ipv4Translated, nat64, sixToFour, netip.MustParsePrefix("::ffff:0:0/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"), // RFC 8215: local-use NAT64, whose translators embed IPv4 at any RFC 6052 length
	netip.MustParsePrefix("2001::/32"),      // Teredo (RFC 4380)
}

// Allowed is a destination's allowCidrs, parsed: private ranges its
// deliveries may reach besides every public address.
type Allowed []netip.Prefix

// ParseAllowed parses a destination's allowCidrs and reports every bad
// entry at once, each naming the entry and the fix.
func ParseAllowed(cidrs []string) (Allowed, error) {
	var errs []error
	if len(cidrs) > MaxAllowed {
		errs = append(errs, fmt.Errorf("%d ranges; list at most %d (merge neighbouring ranges)", len(cidrs), MaxAllowed))
	}
	out := make(Allowed, 0, len(cidrs))
	seen := map[netip.Prefix]int{}
	for i, s := range cidrs {
		p, err := ParseAllowedPrefix(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("[%d]: %w", i, err))
			continue
		}
		if first, dup := seen[p]; dup {
			errs = append(errs, fmt.Errorf("[%d]: %s is listed twice (also [%d]); keep one", i, p, first))
			continue
		}
		seen[p] = i
		out = append(out, p)
	}
	return out, errors.Join(errs...)
}

// ParseAllowedPrefix parses one allowCidrs entry: a CIDR block in canonical
// form (no host bits set) inside one private or otherwise non-public
// range of the special-purpose registries, overlapping none of the ranges
// that are never reachable.
func ParseAllowedPrefix(s string) (netip.Prefix, error) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil || strings.TrimSpace(s) != s {
		return netip.Prefix{}, fmt.Errorf("%q is not a CIDR block; write it as 10.20.0.0/16 or fd12:3456::/48", s)
	}
	if p.Addr().Is4In6() || overlapsAny(p, carriers) && p.Addr().Is6() {
		return netip.Prefix{}, fmt.Errorf("%s is an IPv6 range that carries IPv4 addresses; list the IPv4 range itself (e.g. 10.20.0.0/16)", p)
	}
	if m := p.Masked(); m != p {
		return netip.Prefix{}, fmt.Errorf("%s has host bits set; write the block as %s", s, m)
	}
	for _, b := range never {
		if b.prefix.Overlaps(p) {
			return netip.Prefix{}, fmt.Errorf("%s overlaps %s, %s, which deliveries never reach; list only the private ranges of your receivers", p, b.prefix, b.what)
		}
	}
	if _, ok := private(p); !ok {
		return netip.Prefix{}, fmt.Errorf("%s is not inside one private range (such as 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 100.64.0.0/10 or fc00::/7); public addresses are reachable already: list only private ranges", p)
	}
	return p, nil
}

// private returns the non-public registry entry that contains the whole
// of p, if one does.
func private(p netip.Prefix) (block, bool) {
	ipv4, ipv6 := registries()
	table := ipv4
	if p.Addr().Is6() {
		table = ipv6
	}
	for _, b := range table {
		if !b.global && b.prefix.Bits() <= p.Bits() && b.prefix.Contains(p.Addr()) {
			return b, true
		}
	}
	return block{}, false
}

func overlapsAny(p netip.Prefix, list []netip.Prefix) bool {
	for _, q := range list {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}

// Check returns nil when a delivery may reach addr: a public address (the
// package's Check), or one inside a listed range and in none of the ranges
// that are never reachable. Otherwise the error says why.
func (a Allowed) Check(addr netip.Addr) error {
	err := Check(addr)
	if err == nil || len(a) == 0 {
		return err
	}
	addr = addr.WithZone("")
	if what, ok := Never(addr); ok {
		return refused(addr.String(), "%s is %s, never reachable whatever allowCidrs lists", addr, what)
	}
	plain := addr.Unmap()
	for _, p := range a {
		if p.Contains(plain) {
			return nil
		}
	}
	return refused(addr.String(), "%v, in none of the destination's allowCidrs", err)
}

// Never reports whether addr (or the IPv4 address it carries) is in a
// range no allow-list opens, and names the range.
func Never(addr netip.Addr) (string, bool) {
	addr = addr.WithZone("")
	if v4, ok := embedded(addr); ok {
		addr = v4
	}
	for _, b := range never {
		if b.prefix.Contains(addr) {
			return b.what, true
		}
	}
	return "", false
}

// CheckHost judges the host of a destination URL as the package's
// CheckHost does, with the allow-list: an IP literal inside a listed range
// passes; a private-use name (.internal, .local, .home.arpa, as a private
// hosted zone's receivers are named) passes, since the address it resolves
// to is judged at connect time. Loopback names and numeric forms are still
// refused.
func (a Allowed) CheckHost(host string) error {
	err := CheckHost(host)
	if err == nil || len(a) == 0 {
		return err
	}
	name := strings.TrimSuffix(host, ".")
	if addr, perr := netip.ParseAddr(name); perr == nil {
		return a.Check(addr)
	}
	lower := strings.ToLower(name)
	for _, n := range privateUseNames {
		if lower == n || strings.HasSuffix(lower, "."+n) {
			return nil
		}
	}
	return err
}
