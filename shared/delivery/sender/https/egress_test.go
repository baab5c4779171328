package https

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// TestAllowCidrs: with the real dialer against real listeners, a
// destination whose allowCidrs lists 127.0.0.1/32 reaches the server on
// 127.0.0.1, while a server that really listens on 127.0.0.2 (another
// non-public address, outside the list) is refused before connect(2), as
// are other private ranges and the metadata addresses. Loopback stands in
// for a peered VPC's range: one machine has no 10.x receiver to dial.
func TestAllowCidrs(t *testing.T) {
	inPort, inAccepted := countingServer(t, "tcp4", "127.0.0.1:0")
	outPort, outAccepted := countingServer(t, "tcp4", "127.0.0.2:0")
	port6, accepted6 := countingServer(t, "tcp6", "[::1]:0")
	d := config.Destination{Name: "peered", URL: "https://127.0.0.1/", TimeoutSeconds: 2, AllowCIDRs: []string{"127.0.0.1/32", "10.20.0.0/16"}}
	if err := d.CheckURL("https://127.0.0.1/"); err != nil {
		t.Fatalf("the destination's own URL: %v", err)
	}
	tests := []struct {
		name string
		host string
		ok   bool
	}{
		{"listed loopback address", "127.0.0.1:" + inPort, true},
		{"listed, IPv4-mapped", "[::ffff:127.0.0.1]:" + inPort, true},
		{"loopback outside the list", "127.0.0.2:" + outPort, false},
		{"IPv6 loopback outside the list", "[::1]:" + port6, false},
		{"private outside the list", "10.21.0.1:443", false},
		{"other private range", "192.168.1.1:443", false},
		{"metadata service", "169.254.169.254:80", false},
		{"metadata service, IPv4-mapped", "[::ffff:169.254.169.254]:80", false},
		{"metadata service, NAT64", "[64:ff9b::169.254.169.254]:80", false},
		{"metadata service, IPv6", "[fd00:ec2::254]:80", false},
		{"link-local", "169.254.1.1:443", false},
		{"IPv6 link-local", "[fe80::1]:443", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			probe := &dialProbe{}
			client := newClient(d, probe.after)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+tt.host+"/hooks", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := client.Do(req)
			if tt.ok {
				if err != nil {
					t.Fatalf("POST to %s: %v", tt.host, err)
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("status %d, want 200", resp.StatusCode)
				}
				return
			}
			if err == nil {
				resp.Body.Close()
				t.Fatalf("POST to %s succeeded, want refused", tt.host)
			}
			if !errors.Is(err, ErrBlockedAddress) {
				t.Errorf("error = %v, want %v", err, ErrBlockedAddress)
			}
			if seen := probe.addresses(); len(seen) != 0 {
				t.Errorf("connections attempted to %v, want none", seen)
			}
		})
	}
	if n := inAccepted.Load(); n < 1 {
		t.Errorf("the listed server accepted %d connections, want at least 1", n)
	}
	if n, n6 := outAccepted.Load(), accepted6.Load(); n != 0 || n6 != 0 {
		t.Errorf("the servers outside the list accepted %d and %d connections, want none", n, n6)
	}
}

// TestAllowCidrsMessage: the record says why, naming the address and the
// list.
func TestAllowCidrsMessage(t *testing.T) {
	d := config.Destination{Name: "peered", AllowCIDRs: []string{"10.20.0.0/16"}}
	err := checkAddress(addressGuard(d), "10.30.0.1:443")
	want := "destination address not allowed: 10.30.0.1 is a private-use address, in none of the destination's allowCidrs"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	err = checkAddress(addressGuard(d), "169.254.169.254:80")
	want = "destination address not allowed: 169.254.169.254 is a link-local address (the instance metadata service lives there), never reachable whatever allowCidrs lists"
	if err == nil || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
}

// TestAddressGuardChoice: allowPrivateNetworks opens everything, allowCidrs
// its list, neither only the public addresses.
func TestAddressGuardChoice(t *testing.T) {
	if addressGuard(config.Destination{AllowPrivateNetworks: true}) != nil {
		t.Error("allowPrivateNetworks: a guard")
	}
	plain := addressGuard(config.Destination{})
	listed := addressGuard(config.Destination{AllowCIDRs: []string{"10.20.0.0/16"}})
	for _, tt := range []struct {
		addr          string
		plain, listed bool
	}{
		{"8.8.8.8", true, true},
		{"10.20.0.1", false, true},
		{"10.30.0.1", false, false},
	} {
		if got := checkAddress(plain, tt.addr+":443") == nil; got != tt.plain {
			t.Errorf("no list, %s: allowed %v", tt.addr, got)
		}
		if got := checkAddress(listed, tt.addr+":443") == nil; got != tt.listed {
			t.Errorf("allowCidrs, %s: allowed %v", tt.addr, got)
		}
	}
}
