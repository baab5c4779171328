package https

import (
	"errors"
	"net/netip"
	"strconv"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/netguard"
)

// addressGuard is what the transport asks of every resolved address before
// connecting: nothing with allowPrivateNetworks (nil, local development);
// the public addresses and the destination's allowCidrs, never a metadata
// or link-local address, with allowCidrs; the public addresses otherwise.
func addressGuard(d config.Destination) func(netip.Addr) error {
	if d.AllowPrivateNetworks {
		return nil
	}
	if len(d.AllowCIDRs) == 0 {
		return netguard.Check
	}
	return d.AllowedCIDRs().Check
}

// Reasons a record's error starts with when the attempt's address was
// refused before any byte left: failed attempts like any other (on the
// retry schedule, DEAD at the last), never a silent back-off.
const (
	// ReasonAddressRefused: the address guard refused the host (private,
	// loopback, link-local, outside allowCidrs…): the URL read from its
	// secret before connecting, or any URL's resolved address at connect
	// time. The text names the host or address and its class.
	ReasonAddressRefused = "address_refused"
	// ReasonPortNotOpen: the URL read from its secret names a port the
	// static lane's security group does not open (config.PortError).
	ReasonPortNotOpen = "port_not_open"
)

// refusedError is an attempt refused before connecting, as its record
// shows it: a stable reason, then what was refused (a host or an address
// and its class, a port), never the URL, whose path or query may carry a
// token.
type refusedError struct{ reason, detail string }

func (e *refusedError) Error() string { return e.reason + ": " + e.detail }

// refusedEndpoint reports whether err, from reading the URL in secret
// name, is an address an attempt may not reach rather than a secret that
// could not be read or holds no URL: the address guard's refusal of its
// host, or a port its static lane does not open.
func refusedEndpoint(name string, err error) (*refusedError, bool) {
	var host *netguard.RefusedError
	var port *config.PortError
	switch {
	case errors.As(err, &host):
		return &refusedError{reason: ReasonAddressRefused, detail: "the URL in secret " + strconv.Quote(name) + ": host " + host.Error()}, true
	case errors.As(err, &port):
		return &refusedError{reason: ReasonPortNotOpen, detail: "the URL in secret " + strconv.Quote(name) + ": " + port.Error()}, true
	}
	return nil, false
}

// guardRefusal is the record's text for a connection the address guard
// refused at connect time ("" when err is none).
func guardRefusal(err error) string {
	var host *netguard.RefusedError
	if errors.As(err, &host) {
		return ReasonAddressRefused + ": " + host.Error()
	}
	return ""
}
