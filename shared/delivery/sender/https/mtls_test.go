package https

import (
	"errors"
	"net"
	"testing"
)

// TestHandshakeRefusedWithoutCertificate: a receiver's other alert, with
// no client certificate set, names no clientCertificateSecret to check.
func TestHandshakeRefusedWithoutCertificate(t *testing.T) {
	alert := &net.OpError{Op: "remote error", Err: errors.New("tls: protocol version not supported")}
	for _, tt := range []struct {
		name   string
		noCert bool
		want   string
	}{
		{"certificate set", false, "tls_refused_by_destination: the destination refused the TLS handshake (alert: tls: protocol version not supported); check that it trusts the client certificate in tls.clientCertificateSecret and that the certificate has not expired"},
		{"caSecret alone", true, "tls_refused_by_destination: the destination refused the TLS handshake (alert: tls: protocol version not supported); no client certificate is presented (tls.clientCertificateSecret is not set): check the TLS versions the receiver accepts"},
	} {
		e := &handshakeError{reason: ReasonTLSRefusedByDestination, err: alert, noCertificate: tt.noCert}
		if got := e.Error(); got != tt.want {
			t.Errorf("%s: %q\nwant %q", tt.name, got, tt.want)
		}
	}
}
