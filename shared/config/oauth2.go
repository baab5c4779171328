package config

import (
	"fmt"
	"strings"
)

// OAuth 2.0 client authentication at the token endpoint (RFC 6749 2.3.1).
const (
	// OAuth2ClientAuthBasic sends the client id and secret in an HTTP Basic
	// Authorization header (client_secret_basic; the default).
	OAuth2ClientAuthBasic = "basic"
	// OAuth2ClientAuthBody sends them as client_id and client_secret form
	// fields (client_secret_post).
	OAuth2ClientAuthBody = "body"
)

// Limits on the oauth2 section.
const (
	MaxOAuth2Scopes      = 50
	MaxOAuth2ScopeBytes  = 256
	MaxOAuth2AudienceLen = 1024
)

// OAuth2 is the client credentials grant (RFC 6749 4.4) a destination's
// deliveries get their bearer token with.
type OAuth2 struct {
	// TokenURL is the identity provider's token endpoint: https (http only
	// with allowPrivateNetworks), reached through the same address guard as
	// the destination.
	TokenURL string `json:"tokenUrl"`
	// ClientSecret names a Secrets Manager secret whose value is the JSON
	// object {"clientId": "…", "clientSecret": "…"}: the client's id and
	// secret rotate together and neither lives in the configuration.
	ClientSecret string `json:"clientSecret"`
	// Scopes are requested with the token (the scope parameter), if any.
	Scopes []string `json:"scopes,omitempty"`
	// Audience is sent as the audience parameter, for identity providers
	// that want it (Auth0, some others); "" sends none.
	Audience string `json:"audience,omitempty"`
	// ClientAuth is how the client authenticates at the token endpoint:
	// "basic" (default) or "body".
	ClientAuth string `json:"clientAuth,omitempty"`
}

// ClientAuthStyle is ClientAuth with its default.
func (o OAuth2) ClientAuthStyle() string {
	if o.ClientAuth == "" {
		return OAuth2ClientAuthBasic
	}
	return o.ClientAuth
}

// OAuth2Config is the destination's oauth2 section, nil without one.
func (d Destination) OAuth2Config() *OAuth2 {
	if d.Auth == nil {
		return nil
	}
	return d.Auth.OAuth2
}

// validateOAuth2 checks a destination's auth.oauth2 section.
func (d *Destination) validateOAuth2(p *problems, at string) {
	o := d.OAuth2Config()
	if o == nil {
		return
	}
	at += ".oauth2"
	if o.TokenURL == "" {
		p.add(at+".tokenUrl", "missing; set the identity provider's token endpoint, such as https://idp.example.com/oauth2/token")
	} else if u, ok := parseAbsolute(o.TokenURL); !ok {
		p.add(at+".tokenUrl", "%q is not an absolute URL; use https://host/path of the identity provider's token endpoint", o.TokenURL)
	} else {
		subject := fmt.Sprintf("%q", o.TokenURL)
		if u.User != nil {
			subject = fmt.Sprintf("%q", redactUser(u))
		}
		probs, _ := urlProblems(u, d.AllowPrivateNetworks, d.AllowedCIDRs(), subject)
		for _, msg := range probs {
			p.add(at+".tokenUrl", "%s", msg)
		}
	}
	if o.ClientSecret == "" {
		p.add(at+".clientSecret", "missing; name the Secrets Manager secret holding {\"clientId\": \"…\", \"clientSecret\": \"…\"} (docs/configuration.md#oauth-20-client-credentials)")
	} else {
		validSecretName(p, at+".clientSecret", o.ClientSecret)
	}
	if len(o.Scopes) > MaxOAuth2Scopes {
		p.add(at+".scopes", "has %d scopes; use at most %d", len(o.Scopes), MaxOAuth2Scopes)
	}
	seen := map[string]int{}
	for i, s := range o.Scopes {
		field := fmt.Sprintf("%s.scopes[%d]", at, i)
		switch {
		case s == "":
			p.add(field, "is empty; remove it or name a scope, such as webhooks:write")
		case len(s) > MaxOAuth2ScopeBytes:
			p.add(field, "is %d bytes; use at most %d", len(s), MaxOAuth2ScopeBytes)
		case !isScopeToken(s):
			p.add(field, "%q is not one OAuth 2.0 scope; a scope has no spaces, quotes or backslashes (list several scopes as several entries)", s)
		default:
			if j, dup := seen[s]; dup {
				p.add(field, "%q is already scopes[%d]; list each scope once", s, j)
			}
			seen[s] = i
		}
	}
	if o.Audience != "" {
		if len(o.Audience) > MaxOAuth2AudienceLen {
			p.add(at+".audience", "is %d bytes; use at most %d", len(o.Audience), MaxOAuth2AudienceLen)
		} else if strings.TrimSpace(o.Audience) != o.Audience || strings.ContainsFunc(o.Audience, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			p.add(at+".audience", "%q holds surrounding white space or control characters; use the audience exactly as the identity provider names it (often the API's URL)", o.Audience)
		}
	}
	switch o.ClientAuth {
	case "", OAuth2ClientAuthBasic, OAuth2ClientAuthBody:
	default:
		p.add(at+".clientAuth", "%q is not known; use %q (HTTP Basic, the default) or %q (client_id and client_secret in the form body)", o.ClientAuth, OAuth2ClientAuthBasic, OAuth2ClientAuthBody)
	}
	for _, h := range d.Headers {
		if strings.EqualFold(h.Name, "Authorization") {
			p.add(at, "is set and headers also set Authorization; the OAuth 2.0 bearer token is the Authorization header: remove that header")
			break
		}
	}
}

// isScopeToken reports whether s is a scope-token (RFC 6749 3.3):
// %x21 / %x23-5B / %x5D-7E.
func isScopeToken(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c == 0x22 || c == 0x5c || c > 0x7e {
			return false
		}
	}
	return s != ""
}

// OAuth2Secrets are the secrets a destination's auth.oauth2 section reads.
func (d Destination) OAuth2Secrets() []string {
	if o := d.OAuth2Config(); o != nil && o.ClientSecret != "" {
		return []string{o.ClientSecret}
	}
	return nil
}
