package main

import (
	"strings"
	"testing"
)

// TestCheckListen: --listen takes a loopback address; any other is
// refused, naming the flag, the value and the fix, unless
// --allow-non-loopback is given, when it warns.
func TestCheckListen(t *testing.T) {
	tests := []struct {
		addr    string
		allowed bool
		refused bool
		warns   bool
	}{
		{addr: "127.0.0.1:8080"},
		{addr: "127.0.0.2:0"},
		{addr: "[::1]:8080"},
		{addr: "localhost:8080"},
		{addr: "LOCALHOST:8080"},
		{addr: "127.0.0.1:8080", allowed: true},
		{addr: ":8080", refused: true},
		{addr: "0.0.0.0:8080", refused: true},
		{addr: "[::]:8080", refused: true},
		{addr: "192.168.1.10:8080", refused: true},
		{addr: "10.0.0.1:8080", refused: true},
		{addr: "myhost.example:8080", refused: true},
		{addr: "localhost.example:8080", refused: true},
		{addr: ":8080", allowed: true, warns: true},
		{addr: "0.0.0.0:8080", allowed: true, warns: true},
		{addr: "192.168.1.10:8080", allowed: true, warns: true},
	}
	for _, tt := range tests {
		warning, err := checkListen(tt.addr, tt.allowed, "infra/local/dev-secrets.json")
		switch {
		case tt.refused && err == nil:
			t.Errorf("%s: accepted, want refused", tt.addr)
		case tt.refused && !(strings.Contains(err.Error(), `--listen "`+tt.addr+`"`) && strings.Contains(err.Error(), "--allow-non-loopback") && strings.Contains(err.Error(), "127.0.0.1:8080")):
			t.Errorf("%s: error %q, want the flag, the value, a loopback address and --allow-non-loopback", tt.addr, err)
		case !tt.refused && err != nil:
			t.Errorf("%s (allowed %v): refused: %v", tt.addr, tt.allowed, err)
		case tt.warns && !(strings.HasPrefix(warning, "WARNING:") && strings.Contains(warning, tt.addr) && strings.Contains(warning, "dev-secrets.json")):
			t.Errorf("%s: warning %q, want one naming the address and the secrets", tt.addr, warning)
		case !tt.warns && warning != "":
			t.Errorf("%s: warning %q, want none", tt.addr, warning)
		}
	}
	if _, err := checkListen("8080", false, ""); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("a port alone: %v, want an error asking for host:port", err)
	}
}
