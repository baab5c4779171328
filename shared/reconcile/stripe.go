package reconcile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/provider"
)

// Stripe's events API (GET /v1/events): newest first, paged by
// starting_after with has_more, filtered by created[gte]/[lte] and by
// types[] (up to 20 exact types) or type (one, with a "*" wildcard).
const (
	stripePageSize = 100
	stripeMaxTypes = 20
	// stripeMaxIDBytes bounds an event id (Stripe's ids are short:
	// "evt_" and about 24 characters).
	stripeMaxIDBytes = 255
)

type stripeLister struct {
	// types are the query's type parameters: nil to list every type.
	types url.Values
}

// stripeTypes limits the listing to the types the source's destinations
// can want: types[] when every destination that takes the source lists
// exact types (20 at most), type=prefix* when they all want one prefix;
// else nil (every type, filtered here).
func stripeTypes(wants []want, source string) url.Values {
	var exact, prefixes []string
	for _, w := range wants {
		if len(w.filter.Types) == 0 {
			return nil // every type, or every type but some
		}
		for _, t := range w.filter.Types {
			if strings.HasSuffix(t, "*") {
				prefixes = append(prefixes, t)
			} else if !contains(exact, t) {
				exact = append(exact, t)
			}
		}
	}
	switch {
	case len(wants) == 0:
		return nil
	case len(prefixes) == 0 && len(exact) <= stripeMaxTypes:
		return url.Values{"types[]": exact}
	case len(prefixes) == 1 && len(exact) == 0:
		return url.Values{"type": prefixes}
	}
	return nil
}

// stripePage is one page of GET /v1/events.
type stripePage struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
}

// stripeEvent is what a listed event must carry, beyond what the kind's
// Identify reads.
type stripeEvent struct {
	Object  string `json:"object"`
	Created int64  `json:"created"`
}

func (l *stripeLister) list(ctx context.Context, rn *run, since, until time.Time, visit func([]found) error) error {
	api, err := url.Parse(rn.src.api)
	if err != nil {
		return stopf(ReasonBadPage, "apiUrl: %v", err)
	}
	kind, _ := provider.Lookup(provider.Stripe)
	after := ""
	seen := map[string]bool{}
	for page := 0; ; page++ {
		if page == MaxPages {
			return stopf(ReasonPageCap, "more than %d pages of events; the API pages forever, or the window holds more than %d events (run ops reconcile with a later --since)", MaxPages, MaxPages*stripePageSize)
		}
		q := url.Values{
			"limit":        {strconv.Itoa(stripePageSize)},
			"created[gte]": {strconv.FormatInt(since.Unix(), 10)},
			"created[lte]": {strconv.FormatInt(until.Unix(), 10)},
		}
		for k, v := range l.types {
			q[k] = v
		}
		if after != "" {
			q.Set("starting_after", after)
		}
		u := api.JoinPath("v1", "events")
		u.RawQuery = q.Encode()
		req, err := newRequest(http.MethodGet, u.String(), nil)
		if err != nil {
			return stopf(ReasonBadPage, "%v", err)
		}
		req.Header.Set("Authorization", "Bearer "+rn.key)
		a, err := rn.call(ctx, req)
		if err != nil {
			return err
		}
		batch, last, more, err := parseStripePage(a.body, kind, rn.src.params, rn.src.name)
		if err != nil {
			return stopf(ReasonBadPage, "GET %s: %v", redact(u), err)
		}
		var keep []found
		for _, e := range batch {
			switch {
			case e.err != nil:
				rn.skipEvent(ReasonBadEvent, e.err.Error())
			case seen[e.ProviderID]:
				// A page repeating an event: counted once.
			case e.At.Before(since.Truncate(time.Second)) || e.At.After(until):
				// Outside the window the query asked for: not ours to judge.
			default:
				seen[e.ProviderID] = true
				keep = append(keep, e.found)
			}
		}
		if len(keep) > 0 {
			if err := visit(keep); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
		if last == "" || last == after {
			return stopf(ReasonBadPage, "GET %s: has_more with no usable cursor (last event id %q)", redact(u), truncate(last, 64))
		}
		after = last
	}
}

// stripeFound is a listed event, or why it was left out.
type stripeFound struct {
	found
	err error
}

// parseStripePage reads one page: each event checked as ingest would
// (the kind's Identify: one JSON object, no duplicate keys, a string id
// and type), plus object "event", a positive created and an id of
// Stripe's shape. last is the cursor for the next page: the last event's
// id when it is of the right shape ("" when not).
func parseStripePage(body []byte, kind provider.Kind, params provider.Params, source string) (events []stripeFound, last string, more bool, err error) {
	var p stripePage
	if err := json.Unmarshal(body, &p); err != nil {
		return nil, "", false, fmt.Errorf("not a list of events: %w", err)
	}
	if p.Object != "list" {
		return nil, "", false, fmt.Errorf("object is %q; want \"list\"", truncate(p.Object, 32))
	}
	if p.HasMore && len(p.Data) == 0 {
		return nil, "", false, errors.New("has_more with no events")
	}
	for i, raw := range p.Data {
		f, err := parseStripeEvent(raw, kind, params, source)
		if err != nil {
			err = fmt.Errorf("event %d of the page: %w", i, err)
		}
		events = append(events, stripeFound{found: f, err: err})
		if i == len(p.Data)-1 && err == nil {
			last = f.ProviderID
		}
	}
	return events, last, p.HasMore, nil
}

func parseStripeEvent(raw []byte, kind provider.Kind, params provider.Params, source string) (found, error) {
	ident, err := kind.Identify(params, http.Header{}, raw)
	if err != nil {
		return found{}, err
	}
	if !validStripeID(ident.ID) {
		return found{}, fmt.Errorf("id %q is not a Stripe event id (evt_ and letters or digits)", truncate(ident.ID, 64))
	}
	if !message.ValidAttribute(ident.Type) {
		return found{}, fmt.Errorf("event %s: type %q is not 1 to %d bytes of text without control characters", ident.ID, truncate(ident.Type, 64), message.MaxAttributeBytes)
	}
	var e stripeEvent
	if err := json.Unmarshal(raw, &e); err != nil {
		return found{}, fmt.Errorf("event %s: %w", ident.ID, err)
	}
	if e.Object != "event" || e.Created <= 0 {
		return found{}, fmt.Errorf("event %s: object %q, created %d; want \"event\" and a Unix time", ident.ID, truncate(e.Object, 32), e.Created)
	}
	return found{
		ProviderID: ident.ID, ID: ingest.EventID(source, ident.ID), Type: ident.Type,
		At: time.Unix(e.Created, 0), Body: raw,
	}, nil
}

func validStripeID(s string) bool {
	rest, ok := strings.CutPrefix(s, "evt_")
	if !ok || rest == "" || len(s) > stripeMaxIDBytes {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// bringIn publishes the event through ingest's publish path.
func (l *stripeLister) bringIn(ctx context.Context, rn *run, f found) error {
	_, err := rn.r.c.Publisher.PublishReconciled(ctx, ingest.Reconciled{
		Source: rn.src.name, Body: f.Body, ContentType: "application/json; charset=utf-8",
	})
	switch {
	case errors.Is(err, ingest.ErrReconciledEvent) || errors.Is(err, ingest.ErrReconciledSource):
		return &skip{code: ReasonBadEvent, detail: fmt.Sprintf("event %s: %v", f.ProviderID, err)}
	case err != nil:
		return stopf(ReasonPublish, "event %s: %v", f.ProviderID, err)
	}
	rn.report.BroughtIn++
	return nil
}
