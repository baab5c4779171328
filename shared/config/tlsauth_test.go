package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tlsAuthConfig is a configuration with one destination whose JSON is dest.
func tlsAuthConfig(dest string) []byte {
	return []byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}], "destinations": [` + dest + `]}`)
}

// TestTLSAndOAuth2Valid: a destination with both sections parses, survives
// the function's environment and names its secrets.
func TestTLSAndOAuth2Valid(t *testing.T) {
	c, err := Parse(tlsAuthConfig(`{"name": "bank", "url": "https://hooks.bank.example/in",
	  "headers": [{"name": "X-Api-Key", "secretName": "hookfan/bank/key"}],
	  "tls": {"clientCertificateSecret": "hookfan/bank/client-cert", "caSecret": "hookfan/bank/ca"},
	  "auth": {"oauth2": {"tokenUrl": "https://idp.bank.example/oauth2/token", "clientSecret": "hookfan/bank/oauth",
	    "scopes": ["webhooks:write", "events"], "audience": "https://hooks.bank.example", "clientAuth": "body"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Destination("bank")
	back, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(d))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("environment round trip (-want +got):\n%s", diff)
	}
	want := []string{"hookfan/bank/key", "hookfan/bank/client-cert", "hookfan/bank/ca", "hookfan/bank/oauth"}
	if diff := cmp.Diff(want, d.Secrets()); diff != "" {
		t.Errorf("Secrets (-want +got):\n%s", diff)
	}
	if got := d.OAuth2Config().ClientAuthStyle(); got != OAuth2ClientAuthBody {
		t.Errorf("ClientAuthStyle = %q", got)
	}
	// A local token endpoint over http with allowPrivateNetworks.
	if _, err := Parse(tlsAuthConfig(`{"name": "dev", "url": "http://127.0.0.1:9000/", "allowPrivateNetworks": true,
	  "auth": {"oauth2": {"tokenUrl": "http://127.0.0.1:9001/token", "clientSecret": "dev/oauth"}}}`)); err != nil {
		t.Errorf("local token endpoint: %v", err)
	}
}

// TestTLSCAAlone: a private CA without a client certificate (a receiver
// that asks for none) is a valid tls section; the lane reads the CA's
// secret only.
func TestTLSCAAlone(t *testing.T) {
	c, err := Parse(tlsAuthConfig(`{"name": "private", "url": "https://hooks.corp.example/in", "tls": {"caSecret": "hookfan/private/ca"}}`))
	if err != nil {
		t.Fatal(err)
	}
	d, _ := c.Destination("private")
	back, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(d))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("environment round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hookfan/private/ca"}, d.TLSSecrets()); diff != "" {
		t.Errorf("TLSSecrets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"hookfan/private/ca"}, d.Secrets()); diff != "" {
		t.Errorf("Secrets (-want +got):\n%s", diff)
	}
	if strings.Contains(EncodeDestination(d), "clientCertificateSecret") {
		t.Errorf("the environment names an empty clientCertificateSecret: %s", EncodeDestination(d))
	}
}

// TestTLSAndOAuth2Invalid: every problem is reported at once, naming the
// field, the bad value and the fix.
func TestTLSAndOAuth2Invalid(t *testing.T) {
	tests := []struct {
		name, dest string
		want       []string
	}{
		{"tls without a certificate, bad CA name", `{"name": "d", "url": "https://h.example/", "tls": {"caSecret": "bad name!"}}`, []string{
			`destinations[0].tls.caSecret: "bad name!" is not a valid Secrets Manager name or ARN`,
		}},
		{"tls empty", `{"name": "d", "url": "https://h.example/", "tls": {}}`, []string{
			`destinations[0].tls: is empty; set clientCertificateSecret (the client certificate and key to present, mutual TLS), caSecret (the private CA the server's certificate chains to), or both`,
		}},
		{"tls with empty names", `{"name": "d", "url": "https://h.example/", "tls": {"clientCertificateSecret": "", "caSecret": ""}}`, []string{
			`destinations[0].tls: is empty; set clientCertificateSecret`,
		}},
		{"a CA alone over http", `{"name": "d", "url": "http://127.0.0.1/", "allowPrivateNetworks": true, "tls": {"caSecret": "ca"}}`, []string{
			`destinations[0].tls: is set but the url uses http; a client certificate is presented, and a CA trusted, only over https`,
		}},
		{"one secret for both", `{"name": "d", "url": "https://h.example/", "tls": {"clientCertificateSecret": "c", "caSecret": "c"}}`, []string{
			`destinations[0].tls.caSecret: "c" is also the clientCertificateSecret; the CA bundle goes in a secret of its own`,
		}},
		{"tls over http", `{"name": "d", "url": "http://127.0.0.1/", "allowPrivateNetworks": true, "tls": {"clientCertificateSecret": "c"}}`, []string{
			`destinations[0].tls: is set but the url uses http; a client certificate is presented, and a CA trusted, only over https`,
		}},
		{"oauth2 empty", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {}}}`, []string{
			`destinations[0].auth.oauth2.tokenUrl: missing; set the identity provider's token endpoint`,
			`destinations[0].auth.oauth2.clientSecret: missing; name the Secrets Manager secret holding {"clientId": "…", "clientSecret": "…"}`,
		}},
		{"oauth2 token url over http", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {"tokenUrl": "http://idp.example/token", "clientSecret": "o"}}}`, []string{
			`destinations[0].auth.oauth2.tokenUrl: "http://idp.example/token" uses http; deliveries must use https`,
		}},
		{"oauth2 token url private", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {"tokenUrl": "https://169.254.169.254/token", "clientSecret": "o"}}}`, []string{
			`destinations[0].auth.oauth2.tokenUrl: host 169.254.169.254 is a link-local address; use a public host`,
		}},
		{"oauth2 token url with credentials", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {"tokenUrl": "https://id:pw_1@idp.example/token", "clientSecret": "o"}}}`, []string{
			`destinations[0].auth.oauth2.tokenUrl: "https://REDACTED@idp.example/token" carries credentials`,
		}},
		{"oauth2 relative token url", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {"tokenUrl": "/token", "clientSecret": "o"}}}`, []string{
			`destinations[0].auth.oauth2.tokenUrl: "/token" is not an absolute URL`,
		}},
		{"oauth2 scopes, audience, style", `{"name": "d", "url": "https://h.example/", "auth": {"oauth2": {"tokenUrl": "https://idp.example/token", "clientSecret": "o",
		    "scopes": ["a b", "", "x", "x"], "audience": " aud", "clientAuth": "jwt"}}}`, []string{
			`destinations[0].auth.oauth2.scopes[0]: "a b" is not one OAuth 2.0 scope`,
			`destinations[0].auth.oauth2.scopes[1]: is empty`,
			`destinations[0].auth.oauth2.scopes[3]: "x" is already scopes[2]`,
			`destinations[0].auth.oauth2.audience: " aud" holds surrounding white space`,
			`destinations[0].auth.oauth2.clientAuth: "jwt" is not known; use "basic"`,
		}},
		{"oauth2 and an Authorization header", `{"name": "d", "url": "https://h.example/", "headers": [{"name": "authorization", "secretName": "t"}],
		    "auth": {"oauth2": {"tokenUrl": "https://idp.example/token", "clientSecret": "o"}}}`, []string{
			`destinations[0].auth.oauth2: is set and headers also set Authorization`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tlsAuthConfig(tt.dest))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
			if got, want := strings.Count(err.Error(), "\n")+1, len(tt.want); got != want {
				t.Errorf("%d problems, want %d:\n%v", got, want, err)
			}
			if strings.Contains(err.Error(), "pw_1") {
				t.Errorf("the error shows the URL's password: %v", err)
			}
		})
	}
}
