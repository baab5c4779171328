package provider

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// standardKind: the Standard Webhooks scheme (webhook-* or svix-*
// headers); the id from webhook-id, the type from the body's "type" when
// present (the specification recommends it, not requires it).
var standardKind = Kind{
	Name:        StandardWebhooks,
	Body:        JSONRequired,
	Timestamped: true,
	Verifier: func(p Params) (verify.Verifier, error) {
		return &verify.StandardWebhooks{Tolerance: p.tolerance()}, nil
	},
	Identify: func(_ Params, h verify.Header, body []byte) (Identity, error) {
		idHeader, _, _ := verify.StandardHeaders(h)
		id := Identity{ID: first(h, idHeader)}
		if id.ID == "" {
			return Identity{}, ErrIDMissing
		}
		f, text, err := readFields(body, []string{"type"})
		if err != nil {
			return Identity{}, err
		}
		id.JSONText = text
		id.Type, err = f[0].str(ErrTypeMissing, ErrTypeInvalid)
		switch {
		case errors.Is(err, ErrTypeMissing):
			id.Type = DefaultType
		case err != nil:
			return Identity{}, err
		}
		return id, nil
	},
	Sign: func(_ Params, h http.Header, body []byte, at time.Time, secrets []string) error {
		id := h.Get(verify.HeaderWebhookID)
		if id == "" {
			return fmt.Errorf("the request has no %s header to sign", verify.HeaderWebhookID)
		}
		sig, err := StandardSignature(id, at, body, secrets...)
		if err != nil {
			return err
		}
		h.Set(verify.HeaderWebhookTimestamp, strconv.FormatInt(at.Unix(), 10))
		h.Set(verify.HeaderWebhookSignature, sig)
		return nil
	},
	EventID: fixed(Place{Header: verify.HeaderWebhookID}),
}

// StandardSignature returns a webhook-signature value: one "v1,<base64>"
// per secret, space-separated. Secrets are "whsec_<base64>" (the prefix is
// optional).
func StandardSignature(id string, at time.Time, body []byte, secrets ...string) (string, error) {
	ts := strconv.FormatInt(at.Unix(), 10)
	sigs := make([]string, 0, len(secrets))
	for i, s := range secrets {
		key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, verify.StandardSecretPrefix))
		if err != nil || len(key) == 0 {
			return "", fmt.Errorf("secret %d of %d is not %s followed by base64", i+1, len(secrets), verify.StandardSecretPrefix)
		}
		sigs = append(sigs, "v1,"+base64.StdEncoding.EncodeToString(mac(sha256.New, key, []byte(id+"."+ts+"."), body)))
	}
	return strings.Join(sigs, " "), nil
}
