package main

import (
	"fmt"
	"net"
	"strings"
)

// allowNonLoopbackFlag is the flag that lets --listen take an address
// other machines can reach.
const allowNonLoopbackFlag = "--allow-non-loopback"

// checkListen refuses a --listen address that other machines may reach,
// unless allowed: the local stack's sources verify with the secrets of
// --secrets, which for make dev are published in the repository
// (infra/local/dev-secrets.json), so anyone who reaches the port can send
// events that verify. Allowed, it returns the warning to print.
func checkListen(addr string, allowed bool, secretsFile string) (warning string, err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("--listen %q: %v; use host:port, such as 127.0.0.1:8080", addr, err)
	}
	if isLoopback(host) {
		return "", nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	if !allowed {
		return "", fmt.Errorf("--listen %q serves %s, which other machines may reach, while the sources verify with the secrets of --secrets (make dev's are published in the repository); use a loopback address (127.0.0.1:8080, [::1]:8080, localhost:8080), or add %s if you mean it", addr, where, allowNonLoopbackFlag)
	}
	secrets := secretsFile
	if secrets == "" {
		secrets = "none given: every source refuses"
	}
	return strings.Join([]string{
		"WARNING: the local stack listens on " + addr + " (" + where + "), beyond this machine's loopback.",
		"WARNING: its sources verify with the secrets of --secrets (" + secrets + "); make dev's are published in the",
		"WARNING: repository, so anyone who reaches this port can send events that verify and are delivered.",
	}, "\n"), nil
}

// isLoopback reports whether host names this machine's loopback only: an
// IP in 127.0.0.0/8 or ::1, or localhost. An empty host (every
// interface) and any other name are not.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
