package netguard

import (
	"net/netip"
	"testing"
)

// TestCheck has a row for every entry of the IANA IPv4 and IPv6
// Special-Purpose Address Registries (and the multicast, reserved and
// non-global-unicast ranges outside them), at both ends of each range where
// that matters, plus every form that carries an IPv4 address.
func TestCheck(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" when the address is global unicast
	}{
		// IPv4: global unicast.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.216.34", ""},
		{"100.63.255.255", ""},
		{"100.128.0.1", ""},
		{"172.15.255.255", ""},
		{"172.32.0.1", ""},
		{"192.0.1.1", ""},
		{"198.17.255.255", ""},
		{"198.20.0.1", ""},
		{"223.255.255.254", ""},
		// IPv4 Special-Purpose Address Registry, not globally reachable.
		{"0.0.0.0", "0.0.0.0 is a this-host address"},
		{"0.1.2.3", "0.1.2.3 is a this-network address"},
		{"0.255.255.255", "0.255.255.255 is a this-network address"},
		{"10.0.0.1", "10.0.0.1 is a private-use address"},
		{"10.255.255.254", "10.255.255.254 is a private-use address"},
		{"100.64.0.1", "100.64.0.1 is a shared (carrier-grade NAT) address"},
		{"100.127.255.254", "100.127.255.254 is a shared (carrier-grade NAT) address"},
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"127.255.0.9", "127.255.0.9 is a loopback address"},
		{"169.254.169.254", "169.254.169.254 is a link-local address"},
		{"169.254.0.1", "169.254.0.1 is a link-local address"},
		{"172.16.0.1", "172.16.0.1 is a private-use address"},
		{"172.31.255.255", "172.31.255.255 is a private-use address"},
		{"192.0.0.1", "192.0.0.1 is an IPv4 service continuity address"},
		{"192.0.0.8", "192.0.0.8 is an IPv4 dummy address"},
		{"192.0.0.11", "192.0.0.11 is an IETF protocol assignment address"},
		{"192.0.0.170", "192.0.0.170 is a NAT64/DNS64 discovery address"},
		{"192.0.0.171", "192.0.0.171 is a NAT64/DNS64 discovery address"},
		{"192.0.0.255", "192.0.0.255 is an IETF protocol assignment address"},
		{"192.0.2.1", "192.0.2.1 is a documentation address"},
		{"192.88.99.1", "192.88.99.1 is a deprecated 6to4 relay anycast address"},
		{"192.88.99.2", "192.88.99.2 is a deprecated 6to4 relay anycast address"},
		{"192.168.1.1", "192.168.1.1 is a private-use address"},
		{"198.18.0.1", "198.18.0.1 is a benchmarking address"},
		{"198.19.255.254", "198.19.255.254 is a benchmarking address"},
		{"198.51.100.7", "198.51.100.7 is a documentation address"},
		{"203.0.113.9", "203.0.113.9 is a documentation address"},
		{"240.0.0.1", "240.0.0.1 is a reserved address"},
		{"255.255.255.254", "255.255.255.254 is a reserved address"},
		{"255.255.255.255", "255.255.255.255 is a limited broadcast address"},
		{"224.0.0.1", "224.0.0.1 is a multicast address"},
		{"239.255.255.250", "239.255.255.250 is a multicast address"},
		// IPv4 registry entries marked globally reachable.
		{"192.0.0.9", ""},       // Port Control Protocol anycast
		{"192.0.0.10", ""},      // TURN anycast
		{"192.31.196.1", ""},    // AS112-v4
		{"192.52.193.1", ""},    // AMT
		{"192.175.48.1", ""},    // direct delegation AS112
		{"192.175.48.255", ""},  // direct delegation AS112
		{"192.31.195.255", ""},  // next to AS112-v4
		{"192.88.98.255", ""},   // next to the 6to4 relay block
		{"192.88.100.0", ""},    // next to the 6to4 relay block
		{"203.0.114.1", ""},     // next to TEST-NET-3
		{"198.51.101.1", ""},    // next to TEST-NET-2
		{"169.255.0.1", ""},     // next to link-local
		{"126.255.255.255", ""}, // next to loopback
		{"128.0.0.1", ""},       // next to loopback
		{"11.0.0.1", ""},        // next to 10/8
		{"9.255.255.255", ""},   // next to 10/8
		{"223.255.255.255", ""}, // last unicast before multicast
		{"192.167.255.255", ""}, // next to 192.168/16
		{"192.169.0.0", ""},     // next to 192.168/16
		{"1.0.0.0", ""},         // next to 0/8
		{"100.63.255.254", ""},  // next to shared space
		{"172.15.255.254", ""},  // next to 172.16/12
		{"192.0.3.0", ""},       // next to TEST-NET-1
		{"198.17.255.254", ""},  // next to benchmarking
		{"192.52.194.0", ""},    // next to AMT
		{"192.175.49.0", ""},    // next to AS112 delegation
		{"100.64.0.0", "100.64.0.0 is a shared (carrier-grade NAT) address"},
		{"172.16.0.0", "172.16.0.0 is a private-use address"},

		// IPv6: global unicast.
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::200e", ""},
		{"2001:4860:4860::8888", ""},
		{"2000::1", ""},
		{"3ffe::1", ""},
		{"3fff:1000::1", ""}, // just past 3fff::/20
		{"3fff:ffff::1", ""},
		// IPv6 Special-Purpose Address Registry, not globally reachable.
		{"::", ":: is the unspecified address"},
		{"::1", "::1 is a loopback address"},
		{"64:ff9b:1::1", "64:ff9b:1::1 is a local-use IPv4/IPv6 translation address"},
		{"100::1", "100::1 is a discard-only address"},
		{"100::ffff:ffff:ffff:ffff", "100::ffff:ffff:ffff:ffff is a discard-only address"},
		{"100:0:0:1::1", "100:0:0:1::1 is a dummy IPv6 prefix address"},
		{"2001::1", "2001::1 is a Teredo address"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "2001:0:4136:e378:8000:63bf:3fff:fdd2 is a Teredo address"},
		{"2001:1::4", "2001:1::4 is an IETF protocol assignment address"},
		{"2001:2::1", "2001:2::1 is a benchmarking address"},
		{"2001:2:0:ffff::1", "2001:2:0:ffff::1 is a benchmarking address"},
		{"2001:10::1", "2001:10::1 is a deprecated ORCHID address"},
		{"2001:1f:ffff::1", "2001:1f:ffff::1 is a deprecated ORCHID address"},
		{"2001:40::1", "2001:40::1 is an IETF protocol assignment address"},
		{"2001:1ff::1", "2001:1ff::1 is an IETF protocol assignment address"},
		{"2001:db8::1", "2001:db8::1 is a documentation address"},
		{"3fff::1", "3fff::1 is a documentation address"},
		{"3fff:fff:ffff::1", "3fff:fff:ffff::1 is a documentation address"},
		{"5f00::1", "5f00::1 is a segment routing (SRv6) SID address"},
		{"5f00:ffff::1", "5f00:ffff::1 is a segment routing (SRv6) SID address"},
		{"fc00::1", "fc00::1 is a unique-local address"},
		{"fd12:3456::1", "fd12:3456::1 is a unique-local address"},
		{"fe80::1", "fe80::1 is a link-local address"},
		{"fe80::1%eth0", "fe80::1 is a link-local address"},
		{"febf::1", "febf::1 is a link-local address"},
		{"fec0::1", "fec0::1 is a deprecated site-local address"},
		{"ff02::1", "ff02::1 is a multicast address"},
		{"ff0e::101", "ff0e::101 is a multicast address"},
		// Outside 2000::/3, the only IPv6 global unicast range.
		{"4000::1", "4000::1 is a reserved address (outside 2000::/3, IPv6's global unicast range)"},
		{"1::1", "1::1 is a reserved address (outside 2000::/3, IPv6's global unicast range)"},
		{"e000::1", "e000::1 is a reserved address (outside 2000::/3, IPv6's global unicast range)"},
		{"101::1", "101::1 is a reserved address (outside 2000::/3, IPv6's global unicast range)"},
		{"5eff::1", "5eff::1 is a reserved address (outside 2000::/3, IPv6's global unicast range)"},
		// IPv6 registry entries marked globally reachable.
		{"2001:1::1", ""},       // PCP anycast
		{"2001:1::2", ""},       // TURN anycast
		{"2001:1::3", ""},       // DNS-SD SRP anycast
		{"2001:3::1", ""},       // AMT
		{"2001:4:112::1", ""},   // AS112-v6
		{"2001:20::1", ""},      // ORCHIDv2
		{"2001:30::1", ""},      // drone remote ID entity tags
		{"2620:4f:8000::1", ""}, // direct delegation AS112
		{"2001:200::1", ""},     // just past 2001::/23

		// Forms carrying an IPv4 address are judged by that address.
		{"::ffff:127.0.0.1", "::ffff:127.0.0.1 embeds 127.0.0.1, a loopback address"},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254 embeds 169.254.169.254, a link-local address"},
		{"::ffff:10.1.1.1", "::ffff:10.1.1.1 embeds 10.1.1.1, a private-use address"},
		{"::ffff:0.0.0.0", "::ffff:0.0.0.0 embeds 0.0.0.0, a this-host address"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "::7f00:1 embeds 127.0.0.1, a loopback address"},
		{"::169.254.169.254", "::a9fe:a9fe embeds 169.254.169.254, a link-local address"},
		{"::10.0.0.1", "::a00:1 embeds 10.0.0.1, a private-use address"},
		{"::2", "::2 embeds 0.0.0.2, a this-network address"},
		{"::8.8.8.8", ""},
		{"::ffff:0:127.0.0.1", "::ffff:0:7f00:1 embeds 127.0.0.1, a loopback address"},
		{"::ffff:0:10.0.0.1", "::ffff:0:a00:1 embeds 10.0.0.1, a private-use address"},
		{"::ffff:0:8.8.8.8", ""},
		{"64:ff9b::a9fe:a9fe", "64:ff9b::a9fe:a9fe embeds 169.254.169.254, a link-local address"},
		{"64:ff9b::127.0.0.1", "64:ff9b::7f00:1 embeds 127.0.0.1, a loopback address"},
		{"64:ff9b::808:808", ""},
		{"2002:7f00:1::", "2002:7f00:1:: embeds 127.0.0.1, a loopback address"},
		{"2002:a9fe:a9fe::1", "2002:a9fe:a9fe::1 embeds 169.254.169.254, a link-local address"},
		{"2002:c0a8:101:1::1", "2002:c0a8:101:1::1 embeds 192.168.1.1, a private-use address"},
		{"2002:808:808::1", ""},
	}
	for _, tt := range tests {
		err := Check(netip.MustParseAddr(tt.addr))
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Check(%s) = %q, want %q", tt.addr, got, tt.want)
		}
		if IsPublic(netip.MustParseAddr(tt.addr)) != (tt.want == "") {
			t.Errorf("IsPublic(%s) disagrees with Check", tt.addr)
		}
	}
	if Check(netip.Addr{}) == nil {
		t.Error("Check(zero Addr) = nil, want an error")
	}
}

// TestCheckHost judges the host part of a destination URL: literals through
// Check, and names that can only mean this machine or a private network.
func TestCheckHost(t *testing.T) {
	tests := []struct {
		host string
		want string
	}{
		{"hooks.example.com", ""},
		{"hooks.example.com.", ""},
		{"8.8.8.8", ""},
		{"2606:4700::1111", ""},
		{"xn--bcher-kva.example", ""},
		{"123.example.com", ""},
		{"localhost", `"localhost" is a loopback name`},
		{"localhost.", `"localhost." is a loopback name`},
		{"LocalHost", `"LocalHost" is a loopback name`},
		{"api.localhost", `"api.localhost" is a loopback name`},
		{"api.localhost.", `"api.localhost." is a loopback name`},
		{"printer.local", `"printer.local" is a private-use name`},
		{"printer.local.", `"printer.local." is a private-use name`},
		{"router.home.arpa", `"router.home.arpa" is a private-use name`},
		{"db.internal", `"db.internal" is a private-use name`},
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"127.0.0.1.", "127.0.0.1 is a loopback address"},
		{"::127.0.0.1", "::7f00:1 embeds 127.0.0.1, a loopback address"},
		{"::ffff:169.254.169.254", "::ffff:169.254.169.254 embeds 169.254.169.254, a link-local address"},
		{"2130706433", `"2130706433" is an IPv4 address in a numeric form other than dotted decimal`},
		{"0x7f.1", `"0x7f.1" is an IPv4 address in a numeric form other than dotted decimal`},
		{"127.1", `"127.1" is an IPv4 address in a numeric form other than dotted decimal`},
		{"0177.0.0.1", `"0177.0.0.1" is an IPv4 address in a numeric form other than dotted decimal`},
		{"", "empty host"},
		{".", `"." is not a host name`},
	}
	for _, tt := range tests {
		err := CheckHost(tt.host)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckHost(%q) = %q, want %q", tt.host, got, tt.want)
		}
	}
}
