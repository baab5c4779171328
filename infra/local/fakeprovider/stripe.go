// Package fakeprovider serves Stripe- and GitHub-shaped APIs on loopback
// for the tests and the local stack: what reconciliation (shared/reconcile)
// lists and redelivers, implemented as the providers document it, and the
// senders that POST their signed webhooks to Hookfan's gateway.
//
// Stripe: GET /v1/events, newest first, limit 1 to 100 (default 10),
// starting_after/ending_before cursors with has_more, created[gte|gt|lte|lt]
// (or created=N), types[] (exact, up to 20) or type (one, "*" wildcard),
// and nothing older than 30 days; Bearer secret-key authentication.
//
// GitHub: GET /repos/{o}/{r}/hooks/{id}/deliveries, /orgs/{org}/hooks/{id}/
// deliveries and /app/hook/deliveries, newest first, per_page 1 to 100
// (default 30), the next page's cursor in the Link header, nothing older
// than 3 days; POST .../deliveries/{id}/attempts re-sends the delivery,
// signed with the hook's secret of the moment, with the same guid, and
// records the attempt (redelivery true). Bearer token authentication.
package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/provider"
)

// StripeRetention is how far back the fake lists events, as Stripe.
const StripeRetention = 30 * 24 * time.Hour

// Stripe is a Stripe-shaped events API and sender.
type Stripe struct {
	// Key is the secret (or restricted) key the API accepts.
	Key string
	// Now is the fake's clock (default time.Now).
	Now func() time.Time
	// WebhookURL and WebhookSecret are the endpoint POST /_fake/events
	// sends to (Hookfan's /webhooks/{source}) and its whsec_ secret.
	WebhookURL, WebhookSecret string

	mu     sync.Mutex
	events []stripeEvent // in creation order
	seq    int
}

type stripeEvent struct {
	id, typ string
	created time.Time
	body    []byte
}

// StripeEvent is an event the fake made.
type StripeEvent struct {
	ID, Type string
	Created  time.Time
	// Body is the event object, as the API lists it and a webhook carries it.
	Body []byte
}

func (s *Stripe) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// NewEvent makes an event of type typ created at (now when zero), with
// data.object = object (a JSON object; {} when nil), as Stripe's API
// renders it.
func (s *Stripe) NewEvent(typ string, at time.Time, object json.RawMessage) StripeEvent {
	if at.IsZero() {
		at = s.now()
	}
	if object == nil {
		object = json.RawMessage(`{}`)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	id := fmt.Sprintf("evt_fake%016d%06d", at.UnixNano()/1000, s.seq)
	body, err := json.Marshal(map[string]any{
		"id": id, "object": "event", "api_version": "2024-06-20", "created": at.Unix(),
		"data": map[string]any{"object": object}, "livemode": false, "pending_webhooks": 1,
		"request": map[string]any{"id": nil, "idempotency_key": nil}, "type": typ,
	})
	if err != nil {
		panic(err) // maps of plain values and a valid RawMessage
	}
	s.events = append(s.events, stripeEvent{id: id, typ: typ, created: at, body: body})
	return StripeEvent{ID: id, Type: typ, Created: at, Body: body}
}

// Send POSTs ev to url as Stripe's webhook would: signed now with secret
// (a whsec_… endpoint secret). It returns the status ingest answered.
func (s *Stripe) Send(ctx context.Context, client *http.Client, url, secret string, ev StripeEvent) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(ev.Body))
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("User-Agent", "Stripe/1.0 (+https://stripe.com/docs/webhooks)")
	req.Header.Set("Stripe-Signature", provider.StripeSignature(ev.Body, s.now(), secret))
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

// ServeHTTP serves GET /v1/events, and POST /_fake/events (form: type,
// send=false to create an event whose webhook never leaves, ago=10m to
// create it that long ago: reconciliation leaves events younger than
// reconcile.Settle to the next run), which makes an event and sends it to
// WebhookURL as Stripe would.
func (s *Stripe) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == ControlStripeEvents && r.Method == http.MethodPost:
		s.control(w, r)
	case r.URL.Path != "/v1/events":
		stripeError(w, http.StatusNotFound, "invalid_request_error", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").")
	case r.Method != http.MethodGet:
		stripeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "Unrecognized request URL ("+r.Method+": "+r.URL.Path+").")
	case r.Header.Get("Authorization") != "Bearer "+s.Key || s.Key == "":
		stripeError(w, http.StatusUnauthorized, "invalid_request_error", "Invalid API Key provided.")
	default:
		s.list(w, r)
	}
}

func (s *Stripe) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 10
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", "Invalid integer: limit must be between 1 and 100.")
			return
		}
		limit = n
	}
	keep, msg := stripeFilter(q)
	if msg != "" {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", msg)
		return
	}
	s.mu.Lock()
	oldest := s.now().Add(-StripeRetention)
	var all []stripeEvent
	for i := len(s.events) - 1; i >= 0; i-- { // newest first
		if e := s.events[i]; !e.created.Before(oldest) {
			all = append(all, e)
		}
	}
	s.mu.Unlock()
	slices.SortStableFunc(all, func(a, b stripeEvent) int { return b.created.Compare(a.created) })
	after, before := q.Get("starting_after"), q.Get("ending_before")
	if after != "" && before != "" {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", "You may only specify one of these parameters: ending_before, starting_after.")
		return
	}
	// The cursor is an event of the account, whether or not the filters
	// keep it.
	start, end := 0, len(all)
	if cursor := after + before; cursor != "" {
		i := slices.IndexFunc(all, func(e stripeEvent) bool { return e.id == cursor })
		if i < 0 {
			stripeError(w, http.StatusBadRequest, "invalid_request_error", "No such event: '"+cursor+"'")
			return
		}
		if after != "" {
			start = i + 1
		} else {
			end = i
		}
	}
	var page []stripeEvent
	for _, e := range all[start:end] {
		if keep(e) {
			page = append(page, e)
		}
	}
	more := len(page) > limit
	if more {
		if before != "" {
			page = page[len(page)-limit:]
		} else {
			page = page[:limit]
		}
	}
	data := make([]json.RawMessage, len(page))
	for i, e := range page {
		data[i] = e.body
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data, "has_more": more, "url": "/v1/events"})
}

// stripeFilter reads the created and type filters.
func stripeFilter(q map[string][]string) (keep func(stripeEvent) bool, msg string) {
	var bounds []func(time.Time) bool
	for key, cmp := range map[string]func(t, b time.Time) bool{
		"created[gte]": func(t, b time.Time) bool { return !t.Before(b) },
		"created[gt]":  func(t, b time.Time) bool { return t.After(b) },
		"created[lte]": func(t, b time.Time) bool { return !t.After(b) },
		"created[lt]":  func(t, b time.Time) bool { return t.Before(b) },
		"created":      func(t, b time.Time) bool { return t.Equal(b) },
	} {
		vs := q[key]
		if len(vs) == 0 {
			continue
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil {
			return nil, "Invalid timestamp: " + key + " must be a Unix timestamp."
		}
		b := time.Unix(n, 0)
		bounds = append(bounds, func(t time.Time) bool { return cmp(t.Truncate(time.Second), b) })
	}
	types, typ := q["types[]"], ""
	if vs := q["type"]; len(vs) > 0 {
		typ = vs[0]
	}
	switch {
	case len(types) > 0 && typ != "":
		return nil, "You may pass either type or types, but not both."
	case len(types) > 20:
		return nil, "Invalid array: types may hold at most 20 values."
	}
	for _, t := range types {
		if strings.Contains(t, "*") {
			return nil, "Invalid types[]: " + t + " (wildcards are accepted in type only)."
		}
	}
	return func(e stripeEvent) bool {
		for _, in := range bounds {
			if !in(e.created) {
				return false
			}
		}
		switch {
		case len(types) > 0:
			return slices.Contains(types, e.typ)
		case typ == "":
			return true
		case strings.HasSuffix(typ, "*"):
			return strings.HasPrefix(e.typ, strings.TrimSuffix(typ, "*"))
		}
		return e.typ == typ
	}, ""
}

func stripeError(w http.ResponseWriter, status int, typ, message string) {
	writeJSON(w, status, map[string]any{"error": map[string]string{"type": typ, "message": message}})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// ControlStripeEvents is the fake's own endpoint that makes an event.
const ControlStripeEvents = "/_fake/events"

func (s *Stripe) control(w http.ResponseWriter, r *http.Request) {
	typ := r.FormValue("type")
	if typ == "" {
		typ = "payment_intent.succeeded"
	}
	ago, err := agoParam(r)
	if err != nil {
		stripeError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}
	ev := s.NewEvent(typ, s.now().Add(-ago), nil)
	out := map[string]any{"id": ev.ID, "type": ev.Type, "sent": false}
	if r.FormValue("send") != "false" && s.WebhookURL != "" {
		status, err := s.Send(r.Context(), http.DefaultClient, s.WebhookURL, s.WebhookSecret, ev)
		out["sent"], out["status"] = true, status
		if err != nil {
			out["error"] = err.Error()
		}
	}
	writeJSON(w, http.StatusCreated, out)
}

// agoParam reads the control endpoints' ago: a duration before now, 0
// when absent.
func agoParam(r *http.Request) (time.Duration, error) {
	v := r.FormValue("ago")
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("ago=%q is not a duration such as 10m", v)
	}
	return d, nil
}
