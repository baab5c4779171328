package config

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
)

// Credentials belong in Secrets Manager. A static header value and a
// destination URL live in the configuration, the synthesized template, the
// deliver function's environment and (the URL) the stack's SSM index, where
// anyone who can read one of them could send as Hookfan; so credential-like
// header names must take their value from a secret, a URL carrying a token
// is read from a secret too, and two sources may not share one secret.

// credentialHeaders are the header names that carry credentials whatever
// their spelling, compared in lower case.
var credentialHeaders = []string{"authorization", "proxy-authorization", "cookie", "x-api-key"}

// credentialWords are the parts of a header name that mark it as carrying
// a credential (X-Auth-Token, X-Client-Secret, Api-Key, X-Password).
var credentialWords = []string{"token", "secret", "key", "auth", "password"}

// credentialHeader reports whether a header named name carries a
// credential, and the word of the name that says so.
func credentialHeader(name string) (why string, ok bool) {
	lower := strings.ToLower(name)
	for _, h := range credentialHeaders {
		if lower == h {
			return h, true
		}
	}
	for _, w := range credentialWords {
		if strings.Contains(lower, w) {
			return w, true
		}
	}
	return "", false
}

// validateSourceSecrets refuses two sources verifying with one secret: a
// request signed for one verifies at the other, so a request captured at
// one source is accepted (and published as the other's) at the other, and
// neither's replay protection knows the other's requests.
func (c *Config) validateSourceSecrets(p *problems) {
	first := map[string]int{}
	for i, s := range c.Sources {
		if s.Verify.SecretName == "" {
			continue
		}
		j, dup := first[s.Verify.SecretName]
		if !dup {
			first[s.Verify.SecretName] = i
			continue
		}
		p.add(fmt.Sprintf("sources[%d].verify.secretName", i),
			"%q is also the secret of sources[%d] (%q): a request signed for either source verifies at both, so a request captured at one is accepted at the other; give source %q a secret of its own (the provider issues one per endpoint)",
			s.Verify.SecretName, j, c.Sources[j].Name, s.Name)
	}
}

// validateURLQuery refuses a configured URL whose query names a
// credential (?token=, ?api_key=): the URL lives in the template and the
// function's environment, so such an endpoint takes urlSecretName. The
// message shows the host and the parameter's name, never its value.
func (d *Destination) validateURLQuery(p *problems, at string, u *url.URL) {
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return // the subscriber's to read as it will; nothing here names a credential for sure
	}
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if why, ok := credentialHeader(name); ok {
			p.add(at, "the query of %s names %q, a credential's parameter (its name has %q): the URL lives in the configuration, the template and the function's environment; store the whole URL in a Secrets Manager secret and name it with urlSecretName instead of url",
				d.URLHost(), name, why)
		}
	}
}

// Secrets are the secrets a destination reads at run time beside its
// signing secret: its URL's, then its headers', then its client
// certificate's, CA's and OAuth 2.0 client's, each once.
func (d Destination) Secrets() []string {
	out := d.HeaderSecrets()
	if d.URLSecretName != "" && !slices.Contains(out, d.URLSecretName) {
		out = append([]string{d.URLSecretName}, out...)
	}
	for _, name := range append(d.TLSSecrets(), d.OAuth2Secrets()...) {
		if !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}
