package config

// TLS is a destination's TLS beyond the defaults: the client certificate
// deliveries present (mutual TLS), the private CA its server's certificate
// is verified against, or both. Each is read at run time from Secrets
// Manager, so a rotated pair or CA is used once stored (within the secrets
// cache's TTL).
type TLS struct {
	// ClientCertificateSecret, when set, names a secret holding the client
	// certificate (leaf first, then any intermediates) and its unencrypted
	// private key, as PEM: one bundle of CERTIFICATE blocks and one
	// PRIVATE KEY block, or a JSON object {"certificate": "<PEM>",
	// "privateKey": "<PEM>"} (the console's key/value form). Without it
	// no client certificate is presented.
	ClientCertificateSecret string `json:"clientCertificateSecret,omitempty"`
	// CASecret, when set, names a secret holding the PEM bundle of the CA
	// certificates the destination's server certificate must chain to: it
	// replaces the system's roots for this destination (a private CA). It
	// stands alone: a receiver with a private CA that asks for no client
	// certificate needs only it.
	CASecret string `json:"caSecret,omitempty"`
}

// validateTLS checks a destination's tls section.
func (d *Destination) validateTLS(p *problems, at string) {
	t := d.TLS
	if t == nil {
		return
	}
	if t.ClientCertificateSecret == "" && t.CASecret == "" {
		p.add(at, "is empty; set clientCertificateSecret (the client certificate and key to present, mutual TLS), caSecret (the private CA the server's certificate chains to), or both (docs/configuration.md#mutual-tls), or remove tls")
	}
	if t.ClientCertificateSecret != "" {
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
			p.add(at, "is set but the url uses %s; a client certificate is presented, and a CA trusted, only over https", u.Scheme)
		}
	}
}

// TLSSecrets are the secrets a destination's tls section reads, each once.
func (d Destination) TLSSecrets() []string {
	if d.TLS == nil {
		return nil
	}
	var out []string
	if d.TLS.ClientCertificateSecret != "" {
		out = append(out, d.TLS.ClientCertificateSecret)
	}
	if d.TLS.CASecret != "" && d.TLS.CASecret != d.TLS.ClientCertificateSecret {
		out = append(out, d.TLS.CASecret)
	}
	return out
}
