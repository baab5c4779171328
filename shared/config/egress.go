package config

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/hookfan/hookfan/shared/netguard"
)

// Egress paths a destination's deliveries take.
const (
	// EgressPublic delivers from Lambda's own, changing public addresses
	// (default).
	EgressPublic = "public"
	// EgressStatic delivers from the stack's VPC, through its NAT gateways'
	// Elastic IPs: the addresses a receiver can allow-list.
	EgressStatic = "static"
)

// Availability zones of the egress VPC: one NAT gateway and one Elastic IP
// in each.
const (
	DefaultEgressZones = 2
	MinEgressZones     = 1
	MaxEgressZones     = 3
)

// Egress is the stack's static egress: a VPC of its own whose NAT gateways
// give the lanes with "egress": "static" fixed public addresses.
type Egress struct {
	// StaticAddresses builds the VPC, its NAT gateways and their Elastic IPs.
	StaticAddresses bool `json:"staticAddresses,omitempty"`
	// Zones is the number of availability zones (1 to 3): one NAT gateway
	// and one address each. Default 2, or the number of AllocationIDs.
	Zones int `json:"zones,omitempty"`
	// AllocationIDs are Elastic IPs allocated outside the stack
	// (eipalloc-…), one per zone, in zone order: addresses a receiver
	// already allows. Without them the stack allocates its own and retains
	// them when the stack or the VPC goes.
	AllocationIDs []string `json:"allocationIds,omitempty"`
	// CIDR is the VPC's IPv4 range: a private /16 to /22, overlapping no
	// network a receiver is reached through. Default DefaultEgressCIDR.
	CIDR string `json:"cidr,omitempty"`
}

// DefaultEgressCIDR is the egress VPC's range unless egress.cidr says
// otherwise: an uncommon block of 10/8, so that a peered network is
// unlikely to overlap it.
const DefaultEgressCIDR = "10.198.0.0/20"

// The egress VPC's size: room for three zones' /28 and /24 subnets.
const (
	MinEgressCIDRBits = 16
	MaxEgressCIDRBits = 22
)

// VPCRange is the egress VPC's range in force.
func (e Egress) VPCRange() string {
	if e.CIDR == "" {
		return DefaultEgressCIDR
	}
	return e.CIDR
}

// ZoneCount is the number of zones (and addresses) in force: 0 without
// static addresses.
func (e Egress) ZoneCount() int {
	switch {
	case !e.StaticAddresses:
		return 0
	case e.Zones != 0:
		return e.Zones
	case len(e.AllocationIDs) != 0:
		return len(e.AllocationIDs)
	}
	return DefaultEgressZones
}

// StaticEgress reports whether the destination's deliveries leave through
// the stack's static addresses.
func (d Destination) StaticEgress() bool { return d.Egress == EgressStatic }

// EgressPorts are the TCP ports a static lane's security group opens, in
// this order and each once: 443 (the AWS APIs the function calls through
// the NAT gateways, and https's default), the url's port, and
// auth.oauth2's tokenUrl's port. A URL read from urlSecretName is refused
// at run time on any other (a *PortError).
func (d Destination) EgressPorts() []int {
	ports := []int{443}
	add := func(raw string) {
		if p, ok := urlPort(raw); ok && !slices.Contains(ports, p) {
			ports = append(ports, p)
		}
	}
	add(d.URL)
	if o := d.OAuth2Config(); o != nil {
		add(o.TokenURL)
	}
	return ports
}

// urlPort is the TCP port a URL connects to: its own, or its scheme's.
func urlPort(raw string) (int, bool) {
	u, ok := parseAbsolute(raw)
	if !ok {
		return 0, false
	}
	if s := u.Port(); s != "" {
		p, err := strconv.Atoi(s)
		return p, err == nil && p >= 1 && p <= 65535
	}
	switch u.Scheme {
	case "https":
		return 443, true
	case "http":
		return 80, true
	}
	return 0, false
}

// PortError is a URL read at run time (urlSecretName) on a port its
// static lane's security group does not open: connecting would only time
// out. Its text names the port and the open ones, never the URL.
type PortError struct {
	Port int
	Open []int
}

func (e *PortError) Error() string {
	open := make([]string, len(e.Open))
	for i, p := range e.Open {
		open[i] = strconv.Itoa(p)
	}
	return fmt.Sprintf("the URL's port %d is not open in the static lane's security group, which lets out TCP %s only (443, and the ports of url and auth.oauth2.tokenUrl); store a URL on one of them", e.Port, strings.Join(open, ", "))
}

// checkEgressPort refuses, on a static lane, a URL whose port its
// security group does not open.
func (d Destination) checkEgressPort(raw string) error {
	if !d.StaticEgress() {
		return nil
	}
	p, ok := urlPort(raw)
	if !ok || slices.Contains(d.EgressPorts(), p) {
		return nil
	}
	return &PortError{Port: p, Open: d.EgressPorts()}
}

// StaticLanes lists the destinations that deliver from the static
// addresses.
func (c *Config) StaticLanes() []string {
	var out []string
	for _, d := range c.Destinations {
		if d.StaticEgress() {
			out = append(out, d.Name)
		}
	}
	return out
}

// AllowedCIDRs is the destination's allowCidrs, parsed (validation has
// refused every bad entry; one that slipped through is dropped, which can
// only refuse more).
func (d Destination) AllowedCIDRs() netguard.Allowed {
	a, _ := netguard.ParseAllowed(d.AllowCIDRs)
	return a
}

// allowsLoopback reports whether the destination's allowCidrs open a
// loopback address: for the local stack, whose receivers listen on this
// machine; deployed, loopback is the Lambda runtime API and extensions.
func (d Destination) allowsLoopback() bool {
	for _, p := range d.AllowedCIDRs() {
		if p.Overlaps(loopback4) || p.Overlaps(loopback6) {
			return true
		}
	}
	return false
}

var (
	loopback4 = netip.MustParsePrefix("127.0.0.0/8")
	loopback6 = netip.MustParsePrefix("::1/128")
)

// validateEgress checks the destination's own egress fields: its path and
// its allowCidrs.
func (d *Destination) validateEgress(p *problems, at string) {
	switch d.Egress {
	case "", EgressPublic, EgressStatic:
	default:
		p.add(at+".egress", "%q is not an egress path; use %q (default: Lambda's changing addresses) or %q (the stack's Elastic IPs, with egress.staticAddresses)", d.Egress, EgressPublic, EgressStatic)
	}
	if d.AllowCIDRs == nil {
		return
	}
	if len(d.AllowCIDRs) == 0 {
		p.add(at+".allowCidrs", "empty list; list the private ranges the destination may reach (e.g. [\"10.20.0.0/16\"]) or remove allowCidrs")
		return
	}
	if d.AllowPrivateNetworks {
		p.add(at+".allowCidrs", "set together with allowPrivateNetworks, which opens every private range (and the metadata service); keep allowCidrs and remove allowPrivateNetworks (it is for local development)")
	}
	if len(d.AllowCIDRs) > netguard.MaxAllowed {
		p.add(at+".allowCidrs", "%d ranges; list at most %d (merge neighbouring ranges)", len(d.AllowCIDRs), netguard.MaxAllowed)
	}
	seen := map[string]int{}
	for i, s := range d.AllowCIDRs {
		field := fmt.Sprintf("%s.allowCidrs[%d]", at, i)
		pfx, err := netguard.ParseAllowedPrefix(s)
		if err != nil {
			p.add(field, "%v", err)
			continue
		}
		if first, dup := seen[pfx.String()]; dup {
			p.add(field, "%s is listed twice (also allowCidrs[%d]); keep one", pfx, first)
			continue
		}
		seen[pfx.String()] = i
	}
}

// validateEgress checks the top-level egress and every destination's use
// of it.
func (c *Config) validateEgress(p *problems) {
	e := c.Egress
	if !e.StaticAddresses {
		if e.Zones != 0 {
			p.add("egress.zones", "%d set without staticAddresses; set \"staticAddresses\": true or remove zones", e.Zones)
		}
		if len(e.AllocationIDs) != 0 {
			p.add("egress.allocationIds", "set without staticAddresses; set \"staticAddresses\": true or remove allocationIds")
		}
		if e.CIDR != "" {
			p.add("egress.cidr", "%q set without staticAddresses; set \"staticAddresses\": true or remove cidr", e.CIDR)
		}
		for i, d := range c.Destinations {
			if d.StaticEgress() {
				p.add(fmt.Sprintf("destinations[%d].egress", i), "%q but the stack has no static addresses; set \"egress\": {\"staticAddresses\": true} at the top level, or remove egress from %s", EgressStatic, d.Name)
			}
		}
		return
	}
	if e.Zones != 0 && (e.Zones < MinEgressZones || e.Zones > MaxEgressZones) {
		p.add("egress.zones", "%d is out of range; use %d to %d availability zones, one NAT gateway and Elastic IP each (default %d)", e.Zones, MinEgressZones, MaxEgressZones, DefaultEgressZones)
	}
	if n := len(e.AllocationIDs); n != 0 {
		switch {
		case e.Zones != 0 && n != e.Zones:
			p.add("egress.allocationIds", "%d allocation ids for %d zones; give one Elastic IP per zone (each NAT gateway needs its own), or set zones to %d", n, e.Zones, n)
		case e.Zones == 0 && n > MaxEgressZones:
			p.add("egress.allocationIds", "%d allocation ids; the egress VPC spans at most %d zones, one Elastic IP each", n, MaxEgressZones)
		}
	}
	c.validateEgressRange(p)
	seen := map[string]int{}
	for i, id := range e.AllocationIDs {
		field := fmt.Sprintf("egress.allocationIds[%d]", i)
		if !isAllocationID(id) {
			p.add(field, "%q is not an Elastic IP allocation id; use the AllocationId of an address in the stack's region and account (eipalloc- and 8 or 17 hex digits, from aws ec2 describe-addresses)", id)
			continue
		}
		if first, dup := seen[id]; dup {
			p.add(field, "%q is listed twice (also allocationIds[%d]); each zone's NAT gateway needs its own address", id, first)
			continue
		}
		seen[id] = i
	}
}

// isAllocationID matches eipalloc- and 8 or 17 lowercase hex digits.
func isAllocationID(s string) bool {
	hex, ok := strings.CutPrefix(s, "eipalloc-")
	if !ok || (len(hex) != 8 && len(hex) != 17) {
		return false
	}
	return all(hex, func(c byte) bool { return digit(c) || (c >= 'a' && c <= 'f') })
}

// validateEgressRange checks egress.cidr: a canonical IPv4 block of 10/8,
// 172.16/12 or 192.168/16 of /16 to /22, which no destination's
// allowCidrs overlaps (a receiver cannot sit in the egress VPC itself,
// and a peered network overlapping it is unroutable).
func (c *Config) validateEgressRange(p *problems) {
	raw := c.Egress.VPCRange()
	pfx, err := netip.ParsePrefix(raw)
	switch {
	case err != nil || !pfx.Addr().Is4():
		p.add("egress.cidr", "%q is not an IPv4 CIDR block; use a private /16 to /22 such as %s", raw, DefaultEgressCIDR)
		return
	case pfx.Masked() != pfx:
		p.add("egress.cidr", "%s has host bits set; write the block as %s", raw, pfx.Masked())
		return
	case pfx.Bits() < MinEgressCIDRBits || pfx.Bits() > MaxEgressCIDRBits:
		p.add("egress.cidr", "%s is a /%d; use /%d to /%d (a VPC holds at most a /16; three zones' subnets need a /22)", raw, pfx.Bits(), MinEgressCIDRBits, MaxEgressCIDRBits)
		return
	}
	private := false
	for _, r := range []string{"10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"} {
		q := netip.MustParsePrefix(r)
		if q.Bits() <= pfx.Bits() && q.Contains(pfx.Addr()) {
			private = true
		}
	}
	if !private {
		p.add("egress.cidr", "%s is not inside 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16; use a private block", raw)
		return
	}
	for i, d := range c.Destinations {
		for j, s := range d.AllowCIDRs {
			if a, err := netguard.ParseAllowedPrefix(s); err == nil && a.Overlaps(pfx) {
				p.add(fmt.Sprintf("destinations[%d].allowCidrs[%d]", i, j), "%s overlaps the egress VPC's own range %s; a receiver is reached through a network that does not overlap it: set egress.cidr to another block", a, pfx)
			}
		}
	}
}
