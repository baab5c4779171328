package netguard

import (
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestParseAllowedPrefix(t *testing.T) {
	tests := []struct {
		in   string
		want string // the parsed block, or a fragment of the error
		ok   bool
	}{
		{"10.20.0.0/16", "10.20.0.0/16", true},
		{"10.0.0.0/8", "10.0.0.0/8", true},
		{"172.16.4.0/24", "172.16.4.0/24", true},
		{"192.168.1.7/32", "192.168.1.7/32", true},
		{"100.64.0.0/10", "100.64.0.0/10", true},
		{"127.0.0.0/8", "127.0.0.0/8", true},
		{"fd12:3456::/48", "fd12:3456::/48", true},
		{"10.20.0.1/16", "has host bits set; write the block as 10.20.0.0/16", false},
		{"10.20.0.0", "is not a CIDR block", false},
		{" 10.0.0.0/8", "is not a CIDR block", false},
		{"", "is not a CIDR block", false},
		{"10.0.0.0/33", "is not a CIDR block", false},
		{"169.254.169.254/32", "overlaps 169.254.0.0/16, a link-local address", false},
		{"169.254.0.0/16", "overlaps 169.254.0.0/16", false},
		{"169.0.0.0/8", "overlaps 169.254.0.0/16", false},
		{"0.0.0.0/0", "overlaps", false},
		{"0.0.0.0/8", "overlaps 0.0.0.0/8, a this-network address", false},
		{"224.0.0.0/24", "overlaps 224.0.0.0/4, a multicast address", false},
		{"fe80::/64", "overlaps fe80::/10, a link-local address", false},
		{"fd00:ec2::/32", "overlaps fd00:ec2::254/128, the instance metadata service's IPv6 address", false},
		{"fd00:ec2::254/128", "overlaps fd00:ec2::254/128", false},
		{"fc00::/7", "overlaps fd00:ec2::254/128", false},
		{"::/0", "carries IPv4 addresses", false},
		{"::ffff:10.0.0.0/104", "carries IPv4 addresses", false},
		{"64:ff9b::/96", "carries IPv4 addresses", false},
		{"2002::/16", "carries IPv4 addresses", false},
		// RFC 8215's local-use NAT64 prefix: a translator on it carries any
		// IPv4 address, 169.254.169.254 included.
		{"64:ff9b:1::/48", "carries IPv4 addresses", false},
		{"64:ff9b:1:a9fe::/64", "carries IPv4 addresses", false},
		// Teredo (RFC 4380) carries its server's and client's IPv4 addresses.
		{"2001::/32", "carries IPv4 addresses", false},
		{"8.8.8.0/24", "is not inside one private range", false},
		{"10.0.0.0/7", "is not inside one private range", false},
		{"2001:4860::/32", "is not inside one private range", false},
	}
	for _, tt := range tests {
		p, err := ParseAllowedPrefix(tt.in)
		switch {
		case tt.ok && err != nil:
			t.Errorf("ParseAllowedPrefix(%q) = %v, want %s", tt.in, err, tt.want)
		case tt.ok && p.String() != tt.want:
			t.Errorf("ParseAllowedPrefix(%q) = %s, want %s", tt.in, p, tt.want)
		case !tt.ok && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("ParseAllowedPrefix(%q) = %v, %v; want an error containing %q", tt.in, p, err, tt.want)
		}
	}
}

func TestParseAllowedReportsEveryEntry(t *testing.T) {
	_, err := ParseAllowed([]string{"10.0.0.0/8", "169.254.169.254/32", "10.0.0.0/8", "nope"})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"[1]: 169.254.169.254/32 overlaps", "[2]: 10.0.0.0/8 is listed twice (also [0])", `[3]: "nope" is not a CIDR block`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	many := make([]string, MaxAllowed+1)
	for i := range many {
		many[i] = netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(i), 0, 0}), 16).String()
	}
	if _, err := ParseAllowed(many); err == nil || !strings.Contains(err.Error(), "list at most 20") {
		t.Errorf("ParseAllowed(%d ranges) = %v", len(many), err)
	}
}

// TestAllowedCheck: a listed range opens only itself; other private
// addresses, loopback outside the list and the metadata addresses stay
// refused, in every form that carries them.
func TestAllowedCheck(t *testing.T) {
	a, err := ParseAllowed([]string{"10.20.0.0/16", "127.0.0.1/32", "fd12:3456::/48"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		addr string
		want string // "" allowed, else a fragment of the error
	}{
		{"8.8.8.8", ""},
		{"10.20.0.1", ""},
		{"10.20.255.255", ""},
		{"::ffff:10.20.3.4", ""},
		{"127.0.0.1", ""},
		{"fd12:3456::9", ""},
		{"fd12:3456::9%eth0", ""},
		{"10.21.0.1", "10.21.0.1 is a private-use address, in none of the destination's allowCidrs"},
		{"192.168.0.1", "in none of the destination's allowCidrs"},
		{"127.0.0.2", "in none of the destination's allowCidrs"},
		{"::1", "in none of the destination's allowCidrs"},
		{"fd12:3457::1", "in none of the destination's allowCidrs"},
		{"169.254.169.254", "never reachable"},
		{"::ffff:169.254.169.254", "never reachable"},
		{"64:ff9b::a9fe:a9fe", "never reachable"},
		{"fd00:ec2::254", "the instance metadata service's IPv6 address, never reachable"},
		{"fe80::1", "never reachable"},
		{"0.0.0.0", "never reachable"},
		// NAT64 of an allowed address: judged as IPv6, outside the list.
		{"64:ff9b::a14:1", "in none of the destination's allowCidrs"},
	}
	for _, tt := range tests {
		err := a.Check(netip.MustParseAddr(tt.addr))
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("Check(%s) = %v, want allowed", tt.addr, err)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("Check(%s) = %v, want an error containing %q", tt.addr, err, tt.want)
		}
	}
	// No list: the plain guard.
	if err := Allowed(nil).Check(netip.MustParseAddr("10.20.0.1")); err == nil || err.Error() != "10.20.0.1 is a private-use address" {
		t.Errorf("empty list: %v", err)
	}
}

func TestAllowedCheckHost(t *testing.T) {
	a, _ := ParseAllowed([]string{"10.20.0.0/16"})
	tests := []struct {
		host string
		ok   bool
	}{
		{"example.com", true},
		{"10.20.1.1", true},
		{"receiver.corp.internal", true},
		{"10.21.1.1", false},
		{"169.254.169.254", false},
		{"localhost", false},
		{"0x0a.20.1.1", false},
	}
	for _, tt := range tests {
		if err := a.CheckHost(tt.host); (err == nil) != tt.ok {
			t.Errorf("CheckHost(%q) = %v, want ok=%v", tt.host, err, tt.ok)
		}
	}
	if err := Allowed(nil).CheckHost("receiver.corp.internal"); err == nil {
		t.Error("no list: a .internal name passed")
	}
}

// FuzzParseAllowedPrefix: whatever the parser accepts is a canonical block
// that overlaps no never-reachable range and holds no public address at its
// ends, and Check allows both its ends.
func FuzzParseAllowedPrefix(f *testing.F) {
	for _, s := range []string{"10.0.0.0/8", "127.0.0.1/32", "fd12::/16", "169.254.169.254/32", "0.0.0.0/0", "::ffff:10.0.0.0/104", "10.0.0.1/8", "fd00:ec2::/32", "100.64.0.0/10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParseAllowedPrefix(s)
		if err != nil {
			return
		}
		if p.Masked() != p {
			t.Fatalf("%q: accepted non-canonical %s", s, p)
		}
		for _, b := range never {
			if b.prefix.Overlaps(p) {
				t.Fatalf("%q: accepted %s overlapping %s", s, p, b.prefix)
			}
		}
		first := p.Addr()
		last := lastAddr(p)
		a := Allowed{p}
		for _, addr := range []netip.Addr{first, last} {
			if IsPublic(addr) {
				t.Fatalf("%q: accepted %s holding public %s", s, p, addr)
			}
			if err := a.Check(addr); err != nil {
				t.Fatalf("%q: %s refused inside its own list: %v", s, addr, err)
			}
		}
	})
}

func lastAddr(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 0x80 >> (i % 8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// TestRefusalsAreRefusedErrors: every refusal, of an address, a host or
// by an allow-list, is a *RefusedError naming what was refused, so a
// caller tells it from its own errors with errors.As.
func TestRefusalsAreRefusedErrors(t *testing.T) {
	list, err := ParseAllowed([]string{"10.20.0.0/16"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name, host string
		err        error
	}{
		{"private", "10.1.2.3", Check(netip.MustParseAddr("10.1.2.3"))},
		{"embedded", "::ffff:127.0.0.1", Check(netip.MustParseAddr("::ffff:127.0.0.1"))},
		{"reserved IPv6", "4000::1", Check(netip.MustParseAddr("4000::1"))},
		{"loopback name", "localhost", CheckHost("localhost")},
		{"private-use name", "db.internal", CheckHost("db.internal")},
		{"numeric host", "2130706433", CheckHost("2130706433")},
		{"outside the list", "10.30.0.1", list.Check(netip.MustParseAddr("10.30.0.1"))},
		{"never reachable", "169.254.169.254", list.Check(netip.MustParseAddr("169.254.169.254"))},
		{"host outside the list", "10.30.0.1", list.CheckHost("10.30.0.1")},
	} {
		var refused *RefusedError
		if !errors.As(tt.err, &refused) {
			t.Errorf("%s: %v (%T), want a *RefusedError", tt.name, tt.err, tt.err)
			continue
		}
		if refused.Host != tt.host || refused.Error() != tt.err.Error() {
			t.Errorf("%s: Host %q, text %q; want %q", tt.name, refused.Host, refused.Error(), tt.host)
		}
	}
	if err := list.Check(netip.MustParseAddr("10.20.1.1")); err != nil {
		t.Errorf("inside the list: %v", err)
	}
}
