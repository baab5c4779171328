package provider

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/hookfan/hookfan/shared/verify"
)

// slackURLVerification is the type of Slack's endpoint handshake.
const slackURLVerification = "url_verification"

// slackKind: X-Slack-Signature over "v0:<timestamp>:<body>"; the body's
// "event_id" and "event.type". Envelopes without an event
// (app_rate_limited) take the top-level "type" and, having no id, the
// body's SHA-256. url_verification is a handshake answered with its
// "challenge".
var slackKind = Kind{
	Name:        Slack,
	Body:        JSONRequired,
	Timestamped: true,
	Verifier: func(p Params) (verify.Verifier, error) {
		return &verify.Slack{Tolerance: p.tolerance()}, nil
	},
	Identify: func(_ Params, _ verify.Header, body []byte) (Identity, error) {
		f, text, err := readFields(body, []string{"event_id"}, []string{"type"}, []string{"event", "type"}, []string{"challenge"})
		if err != nil {
			return Identity{}, err
		}
		top, topErr := f[1].str(ErrTypeMissing, ErrTypeInvalid)
		if top == slackURLVerification {
			challenge, _ := f[3].str(ErrIDMissing, ErrIDInvalid)
			return Identity{Handshake: true, Challenge: challenge, JSONText: text}, nil
		}
		id := Identity{JSONText: text}
		id.ID, err = f[0].str(ErrIDMissing, ErrIDInvalid)
		switch {
		case errors.Is(err, ErrIDMissing):
			id.ID = bodyID(body)
		case err != nil:
			return Identity{}, err
		}
		id.Type, err = f[2].str(ErrTypeMissing, ErrTypeInvalid)
		switch {
		case errors.Is(err, ErrTypeMissing) && topErr != nil:
			return Identity{}, topErr
		case errors.Is(err, ErrTypeMissing):
			id.Type = top
		case err != nil:
			return Identity{}, err
		}
		return id, nil
	},
	Sign: func(_ Params, h http.Header, body []byte, at time.Time, secrets []string) error {
		ts := strconv.FormatInt(at.Unix(), 10)
		h.Set(verify.HeaderSlackTimestamp, ts)
		h.Set(verify.HeaderSlackSignature, "v0="+hex.EncodeToString(mac(sha256.New, []byte(secrets[0]), []byte("v0:"+ts+":"), body)))
		return nil
	},
	EventID: fixed(Place{Field: []string{"event_id"}}),
}
