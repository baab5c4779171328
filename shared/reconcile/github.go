package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
)

// GitHub's hook deliveries API: GET .../deliveries lists a hook's delivery
// attempts newest first, per_page up to 100, paged by the Link header's
// rel="next" (a cursor); POST .../deliveries/{id}/attempts redelivers one,
// signed as the original, with the same X-GitHub-Delivery (the guid).
const (
	githubPageSize   = 100
	githubAPIVersion = "2022-11-28"
)

type githubLister struct {
	hook config.GitHubHook
}

// deliveriesPath is the hook's deliveries, under the API's base URL.
func (l *githubLister) deliveriesPath() []string {
	switch {
	case l.hook.App:
		return []string{"app", "hook", "deliveries"}
	case l.hook.Org != "":
		return []string{"orgs", l.hook.Org, "hooks", strconv.FormatInt(l.hook.ID, 10), "deliveries"}
	}
	return []string{"repos", l.hook.Owner, l.hook.Repo, "hooks", strconv.FormatInt(l.hook.ID, 10), "deliveries"}
}

// configPath is the hook's configuration, under the API's base URL:
// the hook itself for a repository's or an organization's (its "config"
// holds content_type), /app/hook/config for an App's.
func (l *githubLister) configPath() []string {
	switch {
	case l.hook.App:
		return []string{"app", "hook", "config"}
	case l.hook.Org != "":
		return []string{"orgs", l.hook.Org, "hooks", strconv.FormatInt(l.hook.ID, 10)}
	}
	return []string{"repos", l.hook.Owner, l.hook.Repo, "hooks", strconv.FormatInt(l.hook.ID, 10)}
}

// formEncoded reads whether the hook sends its payloads form-encoded
// (content_type "form"). Ingest types such a payload by its event alone
// (it reads no action from a body that is not JSON), so the run must type
// its deliveries the same way: typed "event.action" they would match
// destinations that never get them, be found missing on every run and be
// redelivered to no effect until GitHub drops them.
func (l *githubLister) formEncoded(ctx context.Context, rn *run, api *url.URL) (bool, error) {
	u := api.JoinPath(l.configPath()...)
	req, err := newRequest(http.MethodGet, u.String(), nil)
	if err != nil {
		return false, stopf(ReasonBadPage, "%v", err)
	}
	githubHeaders(req, rn.auth)
	a, err := rn.call(ctx, req)
	if err != nil {
		return false, err
	}
	var hook struct {
		ContentType string `json:"content_type"`
		Config      *struct {
			ContentType string `json:"content_type"`
		} `json:"config"`
	}
	if err := json.Unmarshal(a.body, &hook); err != nil {
		return false, stopf(ReasonBadPage, "GET %s: the hook's configuration does not parse: %v", redact(u), err)
	}
	ct := hook.ContentType
	if hook.Config != nil {
		ct = hook.Config.ContentType
	}
	switch ct {
	case "form":
		return true, nil
	case "json", "":
		return false, nil
	}
	return false, stopf(ReasonBadPage, "GET %s: the hook's content_type %q is neither json nor form", redact(u), truncate(ct, 16))
}

// githubDelivery is one attempt as the API lists it.
type githubDelivery struct {
	ID          int64   `json:"id"`
	GUID        string  `json:"guid"`
	DeliveredAt string  `json:"delivered_at"`
	Redelivery  bool    `json:"redelivery"`
	StatusCode  int     `json:"status_code"`
	Event       string  `json:"event"`
	Action      *string `json:"action"`
}

var (
	githubGUID  = regexp.MustCompile(`^[0-9A-Fa-f-]{1,64}$`)
	githubEvent = regexp.MustCompile(`^[a-z_]{1,64}$`)
)

// attempt is a checked delivery attempt.
type attempt struct {
	id   int64
	guid string
	at   time.Time
	ok   bool // 2xx
	typ  string
}

// parseGitHubPage reads one page of attempts: each checked (a positive id,
// a guid of GitHub's shape, an event and action of lowercase letters and
// '_', a time); bad ones are returned as errors beside the good.
func parseGitHubPage(body []byte) (attempts []attempt, bad []error, err error) {
	var page []json.RawMessage
	if err := json.Unmarshal(body, &page); err != nil {
		return nil, nil, fmt.Errorf("not a list of deliveries: %w", err)
	}
	for i, raw := range page {
		a, err := parseGitHubDelivery(raw)
		if err != nil {
			bad = append(bad, fmt.Errorf("delivery %d of the page: %w", i, err))
			continue
		}
		attempts = append(attempts, a)
	}
	return attempts, bad, nil
}

func parseGitHubDelivery(raw []byte) (attempt, error) {
	var d githubDelivery
	if err := json.Unmarshal(raw, &d); err != nil {
		return attempt{}, err
	}
	at, err := time.Parse(time.RFC3339, d.DeliveredAt)
	switch {
	case d.ID <= 0:
		return attempt{}, fmt.Errorf("id %d is not a delivery id", d.ID)
	case !githubGUID.MatchString(d.GUID):
		return attempt{}, fmt.Errorf("guid %q is not GitHub's (hex digits and '-')", truncate(d.GUID, 64))
	case !githubEvent.MatchString(d.Event):
		return attempt{}, fmt.Errorf("delivery %d: event %q is not an event name", d.ID, truncate(d.Event, 64))
	case d.Action != nil && *d.Action != "" && !githubEvent.MatchString(*d.Action):
		return attempt{}, fmt.Errorf("delivery %d: action %q is not an action name", d.ID, truncate(*d.Action, 64))
	case err != nil:
		return attempt{}, fmt.Errorf("delivery %d: delivered_at %q is not an RFC 3339 time", d.ID, truncate(d.DeliveredAt, 64))
	}
	typ := d.Event
	if d.Action != nil && *d.Action != "" {
		typ += "." + *d.Action
	}
	return attempt{id: d.ID, guid: d.GUID, at: at, ok: d.StatusCode/100 == 2, typ: typ}, nil
}

func (l *githubLister) list(ctx context.Context, rn *run, since, until time.Time, visit func([]found) error) error {
	api, err := url.Parse(rn.src.api)
	if err != nil {
		return stopf(ReasonBadPage, "apiUrl: %v", err)
	}
	auth, err := githubAuth(rn.key, rn.now)
	if err != nil {
		return stopf(ReasonSecret, "%v", err)
	}
	rn.auth = auth
	form, err := l.formEncoded(ctx, rn, api)
	if err != nil {
		return err
	}
	next := api.JoinPath(l.deliveriesPath()...)
	next.RawQuery = url.Values{"per_page": {strconv.Itoa(githubPageSize)}}.Encode()
	var all []attempt
	for page := 0; ; page++ {
		if page == MaxPages {
			return stopf(ReasonPageCap, "more than %d pages of deliveries; the API pages forever, or the window holds more than %d attempts", MaxPages, MaxPages*githubPageSize)
		}
		req, err := newRequest(http.MethodGet, next.String(), nil)
		if err != nil {
			return stopf(ReasonBadPage, "%v", err)
		}
		githubHeaders(req, auth)
		a, err := rn.call(ctx, req)
		if err != nil {
			return err
		}
		attempts, bad, err := parseGitHubPage(a.body)
		if err != nil {
			return stopf(ReasonBadPage, "GET %s: %v", redact(next), err)
		}
		for _, b := range bad {
			rn.skipEvent(ReasonBadEvent, b.Error())
		}
		if form { // typed as ingest types a form-encoded payload: its event alone
			for i := range attempts {
				attempts[i].typ, _, _ = strings.Cut(attempts[i].typ, ".")
			}
		}
		all = append(all, attempts...)
		older := false
		for _, at := range attempts {
			older = older || at.at.Before(since)
		}
		link, err := nextLink(a.header, api)
		if err != nil {
			return stopf(ReasonBadPage, "GET %s: %v", redact(next), err)
		}
		if older || link == nil {
			break
		}
		if link.String() == next.String() {
			return stopf(ReasonBadPage, "GET %s: the next page is the same page", redact(next))
		}
		next = link
	}
	events := groupDeliveries(all, since, until, rn.src.name)
	if len(events) == 0 {
		return nil
	}
	return visit(events)
}

// groupDeliveries makes one event per guid with an attempt in [since,
// until]: Delivered when any attempt listed got a 2xx (a later one
// included), At its first attempt listed, Attempt its latest attempt's id.
func groupDeliveries(all []attempt, since, until time.Time, source string) []found {
	byGUID := map[string]*found{}
	var order []string
	inWindow := map[string]bool{}
	for _, a := range all {
		f, ok := byGUID[a.guid]
		if !ok {
			f = &found{ProviderID: a.guid, ID: ingest.EventID(source, a.guid), Type: a.typ, At: a.at, Attempt: a.id}
			byGUID[a.guid] = f
			order = append(order, a.guid)
		}
		if a.at.Before(f.At) {
			f.At = a.at
		}
		if a.id > f.Attempt {
			f.Attempt = a.id
		}
		f.Delivered = f.Delivered || a.ok
		if !a.at.Before(since) && !a.at.After(until) {
			inWindow[a.guid] = true
		}
	}
	slices.Sort(order)
	var out []found
	for _, g := range order {
		if inWindow[g] {
			out = append(out, *byGUID[g])
		}
	}
	return out
}

// nextLink is the Link header's rel="next" URL, nil when there is none.
// It must be on the API's own origin: a link elsewhere would carry the
// credential to another server.
func nextLink(h http.Header, api *url.URL) (*url.URL, error) {
	for _, v := range h.Values("Link") {
		for _, part := range strings.Split(v, ",") {
			target, params, found := strings.Cut(strings.TrimSpace(part), ";")
			if !found || !strings.Contains(strings.ReplaceAll(params, " ", ""), `rel="next"`) {
				continue
			}
			target = strings.TrimSpace(target)
			if !strings.HasPrefix(target, "<") || !strings.HasSuffix(target, ">") {
				return nil, fmt.Errorf("the Link header %q is not <url>; rel=\"next\"", truncate(part, 100))
			}
			u, err := url.Parse(target[1 : len(target)-1])
			if err != nil || !u.IsAbs() {
				return nil, fmt.Errorf("the Link header's next %q is not an absolute URL", truncate(target, 100))
			}
			if !sameOrigin(api, u) {
				return nil, fmt.Errorf("the Link header's next %s leaves the API (%s://%s)", redact(u), api.Scheme, api.Host)
			}
			return u, nil
		}
	}
	return nil, nil
}

func githubHeaders(req *http.Request, auth string) {
	req.Header.Set("Authorization", "Bearer "+auth)
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("X-GitHub-Api-Version", githubAPIVersion)
}

// bringIn asks GitHub to redeliver the event's latest attempt: it comes
// back to ingest signed, with the same guid.
func (l *githubLister) bringIn(ctx context.Context, rn *run, f found) error {
	api, err := url.Parse(rn.src.api)
	if err != nil {
		return stopf(ReasonBadPage, "apiUrl: %v", err)
	}
	u := api.JoinPath(append(l.deliveriesPath(), strconv.FormatInt(f.Attempt, 10), "attempts")...)
	req, err := newRequest(http.MethodPost, u.String(), nil)
	if err != nil {
		return stopf(ReasonRedeliver, "%v", err)
	}
	githubHeaders(req, rn.auth)
	a, err := rn.call(ctx, req, http.StatusAccepted, http.StatusOK, http.StatusCreated)
	if st, ok := err.(*stop); ok && st.code == ReasonHTTPStatus && a.status >= 400 && a.status < 500 {
		// 404 (gone), 422 (too old to redeliver): this one only.
		return &skip{code: ReasonRedeliver, detail: fmt.Sprintf("delivery %d (guid %s): %s", f.Attempt, f.ProviderID, st.detail)}
	}
	if err != nil {
		return err
	}
	rn.report.Redelivered++
	return nil
}
