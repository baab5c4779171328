package events

import (
	"encoding/json"
	"fmt"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

// WithEventID returns a copy of the sample carrying id as the provider's own
// event id, where the sample's kind keeps it (shared/provider): a body
// field (Stripe "id", Slack "event_id"), a header (GitHub, Shopify,
// Standard Webhooks), or for the generic kinds the place ev names. A
// generic source without an id place derives its id from the body, so the
// body's top-level "id" is set instead. The local sender and the load test
// use it to make each send a distinct event; sending the same id twice
// imitates a provider's retry.
func WithEventID(s Sample, id string, ev config.EventFields) (Sample, error) {
	k, ok := provider.Lookup(s.Kind)
	if !ok {
		return s, fmt.Errorf("sample %s/%s: unknown kind", s.Kind, s.Name)
	}
	s = s.Clone()
	switch place := k.EventID(provider.Params{Event: ev.Places()}); {
	case place.Header != "":
		s.Header.Set(place.Header, id)
		return s, nil
	case len(place.Field) > 0:
		return setBodyField(s, place.Field, id)
	default:
		return setBodyField(s, []string{"id"}, id)
	}
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
