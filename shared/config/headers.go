package config

import (
	"fmt"
	"slices"
	"strings"
)

// Limits on a destination's headers.
const (
	// MaxHeaders bounds the headers of one destination.
	MaxHeaders = 20
	// MaxHeaderValueBytes bounds one header's value, static or from a
	// secret (a JWT bearer token fits with room to spare).
	MaxHeaderValueBytes = 8192
)

// Header is one header a destination gets with every delivery. Exactly one
// of Value and SecretName is set.
type Header struct {
	// Name is the header's name: an HTTP token, not one of the headers HTTP
	// or Hookfan itself sets.
	Name string `json:"name"`
	// Value is a static value. It lives in the configuration, the template
	// and the function's environment: use SecretName for credentials.
	Value string `json:"value,omitempty"`
	// SecretName is a Secrets Manager secret whose whole value is the
	// header's value, verbatim (for example "Bearer eyJ…").
	SecretName string `json:"secretName,omitempty"`
}

// reservedHeaders are names a destination's headers may not set: HTTP's
// hop-by-hop and framing headers, which the client manages and a proxy
// would act on, Expect (the client would wait for a 100 Continue), and the
// headers every delivery carries already.
var reservedHeaders = map[string]string{
	"connection":          "a hop-by-hop header the HTTP client manages",
	"keep-alive":          "a hop-by-hop header the HTTP client manages",
	"proxy-authenticate":  "a hop-by-hop header",
	"proxy-authorization": "a hop-by-hop header; deliveries never go through a proxy",
	"te":                  "a hop-by-hop header the HTTP client manages",
	"trailer":             "a framing header the HTTP client manages",
	"transfer-encoding":   "a framing header the HTTP client manages",
	"upgrade":             "a hop-by-hop header",
	"host":                "set from the destination's url",
	"content-length":      "set from the body by the HTTP client",
	"expect":              "it makes the HTTP client wait for a 100 Continue",
	"content-type":        "every delivery carries the provider's own",
	"user-agent":          "every delivery carries hookfan/<version>",
}

// reservedPrefixes are header name prefixes Hookfan owns: the Standard
// Webhooks headers, Svix's names for them (a Svix library reads those
// first), and Hookfan's own.
var reservedPrefixes = []string{"webhook-", "svix-", "hookfan-"}

// validateHeaders checks a destination's headers: names are HTTP tokens,
// none is reserved or repeated (names compare without regard to case), and
// each has exactly one of value and secretName.
func (d *Destination) validateHeaders(p *problems, at string) {
	if len(d.Headers) > MaxHeaders {
		p.add(at, "has %d headers; use at most %d", len(d.Headers), MaxHeaders)
	}
	seen := map[string]int{}
	for i, h := range d.Headers {
		field := fmt.Sprintf("%s[%d]", at, i)
		lower := strings.ToLower(h.Name)
		switch {
		case h.Name == "":
			p.add(field+".name", "missing; name the header, such as Authorization or X-Api-Key")
		case !isHeaderName(h.Name):
			p.add(field+".name", "%q is not a valid HTTP header name; use 1 to 128 letters, digits or !#$%%&'*+.^_`|~-", h.Name)
		case reservedHeaders[lower] != "":
			p.add(field+".name", "%q cannot be set: %s", h.Name, reservedHeaders[lower])
		case slices.ContainsFunc(reservedPrefixes, func(pre string) bool { return strings.HasPrefix(lower, pre) }):
			p.add(field+".name", "%q cannot be set: names starting with %s are the signature's and Hookfan's own headers", h.Name, strings.Join(reservedPrefixes, ", "))
		default:
			if first, dup := seen[lower]; dup {
				p.add(field+".name", "%q is already set by %s[%d] (header names ignore case); set each header once", h.Name, at, first)
			}
			seen[lower] = i
		}
		switch {
		case h.Value == "" && h.SecretName == "":
			p.add(field, "has neither value nor secretName; set one (secretName for credentials)")
		case h.Value != "" && h.SecretName != "":
			p.add(field, "has both value and secretName; keep one")
		case h.SecretName != "":
			validSecretName(p, field+".secretName", h.SecretName)
		default:
			if err := CheckHeaderValue(h.Value); err != nil {
				p.add(field+".value", "%v", err)
			}
			// The value is never quoted: it may be the credential.
			if why, ok := credentialHeader(h.Name); ok && isHeaderName(h.Name) {
				p.add(field+".value", "is a static value for %q, a credential's header (its name has %q): a static value lives in the configuration, the template and the function's environment; store it in Secrets Manager and name the secret with secretName instead of value (docs/configuration.md#destination-headers)", h.Name, why)
			}
		}
	}
}

// CheckHeaderValue reports why v cannot be a header's value: empty, longer
// than MaxHeaderValueBytes, or holding a control character other than tab
// (CR and LF would split the request; NUL ends it in some servers). The
// error never quotes the value: it may come from a secret.
func CheckHeaderValue(v string) error {
	switch {
	case v == "":
		return fmt.Errorf("is empty")
	case len(v) > MaxHeaderValueBytes:
		return fmt.Errorf("is %d bytes; use at most %d", len(v), MaxHeaderValueBytes)
	}
	for i := 0; i < len(v); i++ {
		if c := v[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return fmt.Errorf("holds a control character (byte %d, 0x%02x); a header value may hold none but tab", i, c)
		}
	}
	if v[0] == ' ' || v[0] == '\t' || v[len(v)-1] == ' ' || v[len(v)-1] == '\t' {
		return fmt.Errorf("starts or ends with white space, which HTTP drops; remove it")
	}
	return nil
}

// HeaderSecrets are the secrets a destination's headers are read from, in
// order, each once.
func (d Destination) HeaderSecrets() []string {
	var out []string
	for _, h := range d.Headers {
		if h.SecretName != "" && !slices.Contains(out, h.SecretName) {
			out = append(out, h.SecretName)
		}
	}
	return out
}
