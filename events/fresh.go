package events

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
)

// WithEventID returns a copy of the sample carrying id as the provider's own
// event id, where that provider keeps it: a body field (Stripe "id", Slack
// "event_id"), a header (GitHub, Shopify, Standard Webhooks), or for the
// generic kinds the place ev names. A generic source without an id location
// derives its id from the body, so the body's top-level "id" is set
// instead. The local sender and the load test use it to make each send a
// distinct event; sending the same id twice imitates a provider's retry.
func WithEventID(s Sample, id string, ev config.EventFields) (Sample, error) {
	s = s.Clone()
	switch s.Kind {
	case config.KindStripe:
		return setBodyField(s, []string{"id"}, id)
	case config.KindSlack:
		return setBodyField(s, []string{"event_id"}, id)
	case config.KindGitHub:
		s.Header.Set("X-GitHub-Delivery", id)
	case config.KindShopify:
		s.Header.Set("X-Shopify-Webhook-Id", id)
		s.Header.Set("X-Shopify-Event-Id", id)
	case config.KindStandardWebhooks:
		s.Header.Set(headerStdID, id)
	case config.KindHMAC, config.KindToken:
		switch {
		case ev.IDHeader != "":
			s.Header.Set(ev.IDHeader, id)
		case ev.IDField != "":
			return setBodyField(s, strings.Split(ev.IDField, "."), id)
		default:
			return setBodyField(s, []string{"id"}, id)
		}
	default:
		return s, fmt.Errorf("sample %s/%s: unknown kind", s.Kind, s.Name)
	}
	return s, nil
}

// setBodyField sets a string at a path of a JSON object body, creating
// intermediate objects as needed.
func setBodyField(s Sample, path []string, value string) (Sample, error) {
	var doc map[string]any
	if err := json.Unmarshal(s.Body, &doc); err != nil {
		return s, fmt.Errorf("sample %s/%s: body is not a JSON object: %w", s.Kind, s.Name, err)
	}
	obj := doc
	for _, k := range path[:len(path)-1] {
		next, ok := obj[k].(map[string]any)
		if !ok {
			next = map[string]any{}
			obj[k] = next
		}
		obj = next
	}
	obj[path[len(path)-1]] = value
	body, err := json.Marshal(doc)
	if err != nil {
		return s, err
	}
	s.Body = body
	return s, nil
}
