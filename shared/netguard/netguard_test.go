package netguard

import (
	"net/netip"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" for public
	}{
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"2606:4700::1111", ""},
		{"0.0.0.0", "0.0.0.0 is a this-network address"},
		{"0.1.2.3", "0.1.2.3 is a this-network address"},
		{"10.0.0.1", "10.0.0.1 is a private address"},
		{"100.64.0.1", "100.64.0.1 is a carrier-grade NAT address"},
		{"100.127.255.254", "100.127.255.254 is a carrier-grade NAT address"},
		{"100.128.0.1", ""},
		{"127.0.0.1", "127.0.0.1 is a loopback address"},
		{"127.255.0.9", "127.255.0.9 is a loopback address"},
		{"169.254.169.254", "169.254.169.254 is a link-local address"},
		{"172.16.0.1", "172.16.0.1 is a private address"},
		{"172.31.255.255", "172.31.255.255 is a private address"},
		{"172.32.0.1", ""},
		{"192.168.1.1", "192.168.1.1 is a private address"},
		{"224.0.0.1", "224.0.0.1 is a multicast address"},
		{"255.255.255.255", "255.255.255.255 is a broadcast address"},
		{"::", ":: is a zero (unspecified) address"},
		{"::1", "::1 is a loopback address"},
		{"fc00::1", "fc00::1 is a unique-local address"},
		{"fd12:3456::1", "fd12:3456::1 is a unique-local address"},
		{"fe80::1", "fe80::1 is a link-local address"},
		{"fe80::1%eth0", "fe80::1 is a link-local address"},
		{"ff02::1", "ff02::1 is a multicast address"},
		{"::ffff:127.0.0.1", "127.0.0.1 is a loopback address"},
		{"::ffff:169.254.169.254", "169.254.169.254 is a link-local address"},
		{"::ffff:10.1.1.1", "10.1.1.1 is a private address"},
		{"::ffff:8.8.8.8", ""},
		{"64:ff9b::a9fe:a9fe", "169.254.169.254 is a link-local address"},
		{"64:ff9b::808:808", ""},
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
