package reconcile

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// githubApp is a GitHub App's credential as its secret holds it: the App's
// id and its private key (PEM), for a hook {"app": true}.
type githubApp struct {
	AppID      json.Number `json:"appId"`
	PrivateKey string      `json:"privateKey"`
}

// githubAuth is what GitHub's API is called with: the secret itself (a
// token: fine-grained or classic, with the hook's read and write
// permission), or, when the secret is a JSON object {"appId",
// "privateKey"}, a JSON Web Token signed with the App's key for nine
// minutes (GitHub accepts at most ten), as GitHub's App hook endpoints
// require.
func githubAuth(secret string, now time.Time) (string, error) {
	s := strings.TrimSpace(secret)
	if !strings.HasPrefix(s, "{") {
		if s == "" || strings.ContainsAny(s, " \t\r\n") {
			return "", errors.New("the GitHub token in reconcile.secretName is empty or holds white space")
		}
		return s, nil
	}
	var app githubApp
	if err := json.Unmarshal([]byte(s), &app); err != nil {
		return "", fmt.Errorf("the GitHub App credential in reconcile.secretName is not {\"appId\": N, \"privateKey\": \"-----BEGIN…\"}: %w", err)
	}
	id, err := strconv.ParseInt(app.AppID.String(), 10, 64)
	if err != nil || id <= 0 {
		return "", errors.New("the GitHub App credential's appId is not a positive number")
	}
	block, _ := pem.Decode([]byte(app.PrivateKey))
	if block == nil {
		return "", errors.New("the GitHub App credential's privateKey is not PEM")
	}
	key, err := parseRSAKey(block.Bytes)
	if err != nil {
		return "", err
	}
	return signJWT(key, id, now)
}

func parseRSAKey(der []byte) (*rsa.PrivateKey, error) {
	if k, err := x509.ParsePKCS1PrivateKey(der); err == nil {
		return k, nil
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, errors.New("the GitHub App credential's privateKey is not an RSA key (PKCS #1 or #8)")
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("the GitHub App credential's privateKey is not an RSA key")
	}
	return rk, nil
}

// signJWT is an RS256 JSON Web Token for App id, issued a minute back (to
// allow for clock drift, as GitHub advises) and expiring nine minutes on.
func signJWT(key *rsa.PrivateKey, id int64, now time.Time) (string, error) {
	enc := base64.RawURLEncoding
	header := enc.EncodeToString([]byte(`{"alg":"RS256","typ":"JWT"}`))
	claims, _ := json.Marshal(map[string]int64{"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(9 * time.Minute).Unix(), "iss": id})
	signed := header + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signed))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("sign the GitHub App's token: %w", err)
	}
	return signed + "." + enc.EncodeToString(sig), nil
}
