package config

// TLS is a destination's mutual TLS: the client certificate deliveries
// present, and optionally the private CA its server's certificate is
// verified against. Both are read at run time from Secrets Manager, so a
// rotated pair or CA is used once stored (within the secrets cache's TTL).
type TLS struct {
	// ClientCertificateSecret names a secret holding the client
	// certificate (leaf first, then any intermediates) and its unencrypted
	// private key, as PEM: one bundle of CERTIFICATE blocks and one
	// PRIVATE KEY block, or a JSON object {"certificate": "<PEM>",
	// "privateKey": "<PEM>"} (the console's key/value form).
	ClientCertificateSecret string `json:"clientCertificateSecret"`
	// CASecret, when set, names a secret holding the PEM bundle of the CA
	// certificates the destination's server certificate must chain to: it
	// replaces the system's roots for this destination (a private CA).
	CASecret string `json:"caSecret,omitempty"`
}

// validateTLS checks a destination's tls section.
func (d *Destination) validateTLS(p *problems, at string) {
	t := d.TLS
	if t == nil {
		return
	}
	if t.ClientCertificateSecret == "" {
		p.add(at+".clientCertificateSecret", "missing; name the Secrets Manager secret that holds the client certificate and its private key as PEM (docs/configuration.md#mutual-tls)")
	} else {
		validSecretName(p, at+".clientCertificateSecret", t.ClientCertificateSecret)
	}
	if t.CASecret != "" {
		validSecretName(p, at+".caSecret", t.CASecret)
		if t.CASecret == t.ClientCertificateSecret {
			p.add(at+".caSecret", "%q is also the clientCertificateSecret; the CA bundle goes in a secret of its own (or leave caSecret out to verify against the system's roots)", t.CASecret)
		}
	}
	if d.URL != "" {
		if u, ok := parseAbsolute(d.URL); ok && u.Scheme != "https" {
			p.add(at, "is set but the url uses %s; a client certificate is presented only over https", u.Scheme)
		}
	}
}

// TLSSecrets are the secrets a destination's tls section reads, each once.
func (d Destination) TLSSecrets() []string {
	if d.TLS == nil {
		return nil
	}
	out := []string{d.TLS.ClientCertificateSecret}
	if d.TLS.CASecret != "" && d.TLS.CASecret != d.TLS.ClientCertificateSecret {
		out = append(out, d.TLS.CASecret)
	}
	return out
}
