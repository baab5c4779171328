package https

import (
	"strings"
	"testing"
	"time"
)

// TestParseTokenResponse: the lifetime read from expires_in (a number, or
// a number in a string; a default without it; capped), replaced early.
func TestParseTokenResponse(t *testing.T) {
	start := time.Unix(1_700_000_000, 0)
	for _, tt := range []struct {
		body            string
		refresh, expire time.Duration
	}{
		{`{"access_token": "a", "token_type": "Bearer", "expires_in": 3600}`, 3540 * time.Second, time.Hour},
		{`{"access_token": "a", "token_type": "bearer", "expires_in": "600"}`, 540 * time.Second, 600 * time.Second},
		{`{"access_token": "a", "expires_in": 30}`, 15 * time.Second, 30 * time.Second},
		{`{"access_token": "a"}`, DefaultTokenLifetime - TokenEarly, DefaultTokenLifetime},
		{`{"access_token": "a", "expires_in": 1e9}`, MaxTokenLifetime - TokenEarly, MaxTokenLifetime},
	} {
		tok, err := parseTokenResponse([]byte(tt.body), start)
		if err != nil {
			t.Errorf("%s: %v", tt.body, err)
			continue
		}
		if tok.refreshAt.Sub(start) != tt.refresh || tok.expiresAt.Sub(start) != tt.expire {
			t.Errorf("%s: refresh after %s, expiry after %s; want %s, %s", tt.body, tok.refreshAt.Sub(start), tok.expiresAt.Sub(start), tt.refresh, tt.expire)
		}
	}
}

// FuzzParseTokenResponse: any answer is read or refused, never a panic;
// an error never holds the access token.
func FuzzParseTokenResponse(f *testing.F) {
	for _, s := range []string{`{"access_token": "secret-token-value", "expires_in": 60}`, `{"access_token": "secret-token-value", "token_type": "x y"}`,
		`{"access_token": "secret-token-value", "expires_in": "NaN"}`, `{"access_token": ""}`, `[]`, `null`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		tok, err := parseTokenResponse([]byte(body), time.Unix(0, 0))
		if err != nil && strings.Contains(body, "secret-token-value") && strings.Contains(err.Error(), "secret-token-value") {
			t.Errorf("error holds the token: %v", err)
		}
		if err == nil && (tok.value == "" || !tok.refreshAt.Before(tok.expiresAt.Add(1))) {
			t.Errorf("token %+v", tok)
		}
		_, _ = ParseClientCredentials(body)
		_ = oauthErrorCode([]byte(body))
	})
}

// TestCodeLike: what an OAuth error code or token type may look like, as
// the regexp ^[A-Za-z0-9_.:-]{1,64}$ said it.
func TestCodeLike(t *testing.T) {
	for s, want := range map[string]bool{
		"invalid_client": true, "urn:ietf:params:oauth:error-x.1": true, "Bearer": true, strings.Repeat("a", 64): true,
		"": false, strings.Repeat("a", 65): false, "bad code": false, "é": false, "a\n": false, "<script>": false,
	} {
		if got := codeLike(s); got != want {
			t.Errorf("codeLike(%q) = %v, want %v", s, got, want)
		}
	}
}
