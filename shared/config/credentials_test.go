package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckURL: a URL read from its secret meets the rules of a configured
// one, and the error never shows it (its path or query is the token).
func TestCheckURL(t *testing.T) {
	tests := []struct {
		url          string
		allowPrivate bool
		want         string // "" when accepted
	}{
		{"https://hooks.example.com/t/tok_1?key=k_1", false, ""},
		{"http://127.0.0.1:9000/t/tok_1", true, ""},
		{"http://hooks.example.com/t/tok_1", false, "the URL uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)"},
		{"https://10.0.0.7/t/tok_1", false, "host 10.0.0.7 is a private-use address; use a public host, or set allowPrivateNetworks for local development"},
		{"https://169.254.169.254/latest/tok_1", false, "host 169.254.169.254 is a link-local address; use a public host, or set allowPrivateNetworks for local development"},
		{"https://u:tok_1@hooks.example.com/", false, "the URL carries credentials; remove them from the URL (deliveries are authenticated by their signature; a subscriber's credential goes in a header with secretName)"},
		{"https://hooks.example.com/tok_1#f", false, "the URL has a fragment; remove the #part"},
		{"ftp://hooks.example.com/tok_1", false, "the URL has a scheme other than https; use https"},
		{"https://hooks.example.com/tok_1\n", false, "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{`"https://hooks.example.com/tok_1"`, false, "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
	}
	for _, tt := range tests {
		err := CheckURL(tt.url, tt.allowPrivate)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("CheckURL(%q) = %q, want %q", tt.url, got, tt.want)
		}
		if strings.Contains(got, "tok_1") {
			t.Errorf("CheckURL(%q) shows the token: %s", tt.url, got)
		}
	}
}

func TestURLHostAndSecrets(t *testing.T) {
	c, err := Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [
	    {"name": "plain", "url": "https://hooks.example.com:8443/t/tok_1?page=1"},
	    {"name": "hidden", "urlSecretName": "hookfan/dest/hidden/url",
	     "headers": [{"name": "Authorization", "secretName": "hookfan/dest/hidden/token"}, {"name": "X-Key", "secretName": "hookfan/dest/hidden/url"}]}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := c.Destination("plain")
	hidden, _ := c.Destination("hidden")
	if got := plain.URLHost(); got != "https://hooks.example.com:8443" {
		t.Errorf("URLHost = %q", got)
	}
	if got := hidden.URLHost(); got != "" {
		t.Errorf("URLHost of a secret URL = %q, want empty", got)
	}
	if diff := cmp.Diff([]string{"hookfan/dest/hidden/token", "hookfan/dest/hidden/url"}, hidden.Secrets()); diff != "" {
		t.Errorf("Secrets (-want +got):\n%s", diff)
	}
	if got := plain.Secrets(); len(got) != 0 {
		t.Errorf("Secrets of a plain destination = %v", got)
	}
	// The function's slice carries the secret's name, and reads back.
	back, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(hidden))
	if err != nil || back.URLSecretName != hidden.URLSecretName || back.URL != "" {
		t.Errorf("round trip: %+v, %v", back, err)
	}
}
