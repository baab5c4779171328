package fakeprovider

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

// GitHubRetention is how far back the fake lists and redelivers
// deliveries, as GitHub.com.
const GitHubRetention = 3 * 24 * time.Hour

// GitHub is a GitHub-shaped hook deliveries API and sender for one hook.
type GitHub struct {
	// Token is what the API accepts as its Bearer credential.
	Token string
	// Path is the hook's deliveries path: "/repos/o/r/hooks/1/deliveries",
	// "/orgs/o/hooks/1/deliveries" or "/app/hook/deliveries".
	Path string
	// Target is the hook's URL (Hookfan's /webhooks/{source}).
	Target string
	// Client sends the webhooks (default http.DefaultClient).
	Client *http.Client
	// Now is the fake's clock (default time.Now).
	Now func() time.Time
	// Form makes the hook send its payloads form-encoded
	// (application/x-www-form-urlencoded, payload=<JSON>), as a hook whose
	// content type is "form" does; its configuration says so.
	Form bool

	mu         sync.Mutex
	secret     string
	deliveries []*delivery // in attempt order
	nextID     int64
}

// delivery is one attempt, with what the fake sent.
type delivery struct {
	ID          int64   `json:"id"`
	GUID        string  `json:"guid"`
	DeliveredAt string  `json:"delivered_at"`
	Redelivery  bool    `json:"redelivery"`
	Duration    float64 `json:"duration"`
	Status      string  `json:"status"`
	StatusCode  int     `json:"status_code"`
	Event       string  `json:"event"`
	Action      *string `json:"action"`
	InstallID   *int64  `json:"installation_id"`
	RepoID      *int64  `json:"repository_id"`
	ThrottledAt *string `json:"throttled_at"`

	at      time.Time
	payload []byte
}

// SetSecret sets the hook's secret: what its deliveries are signed with
// from now on (a mistyped one makes Hookfan refuse them).
func (g *GitHub) SetSecret(s string) {
	g.mu.Lock()
	g.secret = s
	g.mu.Unlock()
}

func (g *GitHub) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Attempt is what one delivery attempt came to.
type Attempt struct {
	ID         int64
	GUID       string
	StatusCode int
}

// Deliver sends a new event (a new guid) of event and action with
// payload, signed with the hook's secret, and records the attempt.
func (g *GitHub) Deliver(ctx context.Context, event, action string, payload []byte) (Attempt, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	guid := h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
	d := &delivery{GUID: guid, Event: event, payload: payload}
	if action != "" {
		d.Action = &action
	}
	return g.send(ctx, d)
}

// send POSTs d's payload to the target and records the attempt.
func (g *GitHub) send(ctx context.Context, d *delivery) (Attempt, error) {
	g.mu.Lock()
	secret := g.secret
	g.nextID++
	d.ID = g.nextID
	g.mu.Unlock()
	body := d.payload
	if g.Form {
		body = []byte(url.Values{"payload": {string(d.payload)}}.Encode())
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, g.Target, bytes.NewReader(body))
	if err != nil {
		return Attempt{}, err
	}
	req.Header.Set("Content-Type", g.contentType())
	req.Header.Set("User-Agent", "GitHub-Hookshot/fake")
	req.Header.Set("X-GitHub-Event", d.Event)
	req.Header.Set("X-GitHub-Delivery", d.GUID)
	req.Header.Set("X-GitHub-Hook-ID", "1")
	req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(mac.Sum(nil)))
	client := g.Client
	if client == nil {
		client = http.DefaultClient
	}
	start := g.now()
	resp, err := client.Do(req)
	d.at = start
	d.DeliveredAt = start.UTC().Format(time.RFC3339)
	d.Duration = g.now().Sub(start).Seconds()
	if err != nil {
		d.Status, d.StatusCode = "Couldn't connect to server", 0
	} else {
		resp.Body.Close()
		d.StatusCode = resp.StatusCode
		d.Status = http.StatusText(resp.StatusCode)
		if resp.StatusCode/100 == 2 {
			d.Status = "OK"
		}
	}
	g.mu.Lock()
	g.deliveries = append(g.deliveries, d)
	g.mu.Unlock()
	return Attempt{ID: d.ID, GUID: d.GUID, StatusCode: d.StatusCode}, nil
}

// Attempts lists the attempts recorded so far, oldest first.
func (g *GitHub) Attempts() []Attempt {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := make([]Attempt, len(g.deliveries))
	for i, d := range g.deliveries {
		out[i] = Attempt{ID: d.ID, GUID: d.GUID, StatusCode: d.StatusCode}
	}
	return out
}

// Backdate moves every attempt of guid back by d, as if it had happened
// then (to test retention and lookback).
func (g *GitHub) Backdate(guid string, d time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, x := range g.deliveries {
		if x.GUID == guid {
			x.at = x.at.Add(-d)
			x.DeliveredAt = x.at.UTC().Format(time.RFC3339)
		}
	}
}

// ControlGitHubDeliveries is the fake's own endpoint that delivers a new
// event.
const ControlGitHubDeliveries = "/_fake/deliveries"

// ServeHTTP serves the hook's deliveries and redeliveries, and POST
// /_fake/deliveries (form: event, action, send=false for a delivery that
// never reached the target: status 0, ago=10m to record it that long
// ago), which delivers a new event.
func (g *GitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == ControlGitHubDeliveries && r.Method == http.MethodPost {
		g.control(w, r)
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+g.Token || g.Token == "" {
		githubError(w, http.StatusUnauthorized, "Bad credentials")
		return
	}
	if r.URL.Path == g.configPath() && r.Method == http.MethodGet {
		g.config(w)
		return
	}
	rest, ok := strings.CutPrefix(r.URL.Path, g.Path)
	switch {
	case !ok:
		githubError(w, http.StatusNotFound, "Not Found")
	case rest == "" && r.Method == http.MethodGet:
		g.list(w, r)
	case r.Method == http.MethodPost && strings.HasSuffix(rest, "/attempts"):
		id, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimPrefix(rest, "/"), "/attempts"), 10, 64)
		if err != nil {
			githubError(w, http.StatusNotFound, "Not Found")
			return
		}
		g.redeliver(w, r, id)
	default:
		githubError(w, http.StatusNotFound, "Not Found")
	}
}

func (g *GitHub) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	per := 30
	if v := q.Get("per_page"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			githubError(w, http.StatusUnprocessableEntity, "Invalid per_page")
			return
		}
		per = min(n, 100)
	}
	g.mu.Lock()
	oldest := g.now().Add(-GitHubRetention)
	var all []delivery
	for i := len(g.deliveries) - 1; i >= 0; i-- {
		if d := g.deliveries[i]; !d.at.Before(oldest) {
			all = append(all, *d)
		}
	}
	g.mu.Unlock()
	slices.SortStableFunc(all, func(a, b delivery) int { return b.at.Compare(a.at) })
	start := 0
	if c := q.Get("cursor"); c != "" {
		id, err := strconv.ParseInt(c, 10, 64)
		i := slices.IndexFunc(all, func(d delivery) bool { return d.ID == id })
		if err != nil || i < 0 {
			githubError(w, http.StatusUnprocessableEntity, "Invalid cursor")
			return
		}
		start = i + 1
	}
	page := all[start:]
	if len(page) > per {
		page = page[:per]
		next := *r.URL
		next.Scheme, next.Host = "http", r.Host
		nq := next.Query()
		nq.Set("cursor", strconv.FormatInt(page[len(page)-1].ID, 10))
		nq.Set("per_page", strconv.Itoa(per))
		next.RawQuery = nq.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s>; rel="next"`, next.String()))
	}
	if page == nil {
		page = []delivery{}
	}
	writeJSON(w, http.StatusOK, page)
}

func (g *GitHub) redeliver(w http.ResponseWriter, r *http.Request, id int64) {
	g.mu.Lock()
	i := slices.IndexFunc(g.deliveries, func(d *delivery) bool { return d.ID == id })
	var orig delivery
	if i >= 0 {
		orig = *g.deliveries[i]
	}
	g.mu.Unlock()
	switch {
	case i < 0:
		githubError(w, http.StatusNotFound, "Not Found")
		return
	case orig.at.Before(g.now().Add(-GitHubRetention)):
		githubError(w, http.StatusUnprocessableEntity, "Validation Failed: delivery is too old to redeliver")
		return
	}
	d := &delivery{GUID: orig.GUID, Event: orig.Event, Action: orig.Action, payload: orig.payload, Redelivery: true}
	// GitHub answers 202 and sends on its own time; the fake sends before
	// answering, so a test sees the outcome once the call returns.
	if _, err := g.send(context.WithoutCancel(r.Context()), d); err != nil {
		githubError(w, http.StatusInternalServerError, err.Error())
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{})
}

func githubError(w http.ResponseWriter, status int, message string) {
	writeJSON(w, status, map[string]string{"message": message, "documentation_url": "https://docs.github.com/rest"})
}

func (g *GitHub) control(w http.ResponseWriter, r *http.Request) {
	event, action := r.FormValue("event"), r.FormValue("action")
	if event == "" {
		event, action = "issues", "opened"
	}
	payload := []byte(`{"action":` + strconv.Quote(action) + `,"sender":{"login":"octocat"}}`)
	if action == "" {
		payload = []byte(`{"sender":{"login":"octocat"}}`)
	}
	ago, err := agoParam(r)
	if err != nil {
		githubError(w, http.StatusUnprocessableEntity, err.Error())
		return
	}
	var a Attempt
	if r.FormValue("send") == "false" {
		a = g.lost(event, action, payload)
	} else if a, err = g.Deliver(r.Context(), event, action, payload); err != nil {
		githubError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if ago > 0 {
		g.Backdate(a.GUID, ago)
	}
	writeJSON(w, http.StatusCreated, map[string]any{"id": a.ID, "guid": a.GUID, "status_code": a.StatusCode})
}

// lost records a delivery that never reached the target (GitHub's
// "Couldn't connect to server", status 0) without sending it.
func (g *GitHub) lost(event, action string, payload []byte) Attempt {
	var b [16]byte
	_, _ = rand.Read(b[:])
	h := hex.EncodeToString(b[:])
	d := &delivery{GUID: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:], Event: event, payload: payload,
		Status: "Couldn't connect to server"}
	if action != "" {
		d.Action = &action
	}
	d.at = g.now()
	d.DeliveredAt = d.at.UTC().Format(time.RFC3339)
	g.mu.Lock()
	g.nextID++
	d.ID = g.nextID
	g.deliveries = append(g.deliveries, d)
	g.mu.Unlock()
	return Attempt{ID: d.ID, GUID: d.GUID}
}

// contentType is what the hook's payloads are sent as.
func (g *GitHub) contentType() string {
	if g.Form {
		return "application/x-www-form-urlencoded"
	}
	return "application/json"
}

// configPath is where the API serves the hook's configuration: the hook
// itself (repository and organization hooks), or an App's /app/hook/config.
func (g *GitHub) configPath() string {
	if g.Path == "/app/hook/deliveries" {
		return "/app/hook/config"
	}
	return strings.TrimSuffix(g.Path, "/deliveries")
}

// config answers the hook's configuration, as GitHub shapes it: an App's
// flat, a repository's or organization's hook with it under "config".
func (g *GitHub) config(w http.ResponseWriter) {
	ct := "json"
	if g.Form {
		ct = "form"
	}
	c := map[string]any{"content_type": ct, "url": g.Target, "insecure_ssl": "0"}
	var out any = c
	if g.configPath() != "/app/hook/config" {
		out = map[string]any{"id": 1, "type": "Repository", "name": "web", "active": true, "config": c}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(out)
}
