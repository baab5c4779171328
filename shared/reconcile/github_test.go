package reconcile_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/reconcile"
)

const hookSecret = "gh-hook-secret"

// gateway stands for Hookfan's ingest: it verifies GitHub's signature
// with hookSecret and, when it passes, leaves the records the lanes
// would (destination "gh").
type gateway struct {
	rec      *records
	mu       sync.Mutex
	accepted map[string]int // by guid
}

func (g *gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	mac := hmac.New(sha256.New, []byte(hookSecret))
	mac.Write(body)
	if r.Header.Get("X-Hub-Signature-256") != "sha256="+hex.EncodeToString(mac.Sum(nil)) {
		http.Error(w, `{"error":{"code":"signature_invalid"}}`, http.StatusUnauthorized)
		return
	}
	guid := r.Header.Get("X-GitHub-Delivery")
	g.mu.Lock()
	g.accepted[guid]++
	g.mu.Unlock()
	g.rec.add(dedupe.Key("gh", ingest.EventID("github", guid)))
	w.WriteHeader(http.StatusAccepted)
}

func (g *gateway) count(guid string) int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.accepted[guid]
}

type githubRig struct {
	*rig
	fake *fakeprovider.GitHub
	gw   *gateway
}

func newGitHubRig(t *testing.T, reconcileExtra, destinations string) *githubRig {
	t.Helper()
	rec := &records{}
	gw := &gateway{rec: rec, accepted: map[string]int{}}
	gwSrv := httptest.NewServer(gw)
	t.Cleanup(gwSrv.Close)
	fake := &fakeprovider.GitHub{Token: "ghp_fake", Path: "/repos/acme/shop/hooks/7/deliveries", Target: gwSrv.URL + "/webhooks/github",
		Now: func() time.Time { return now }}
	fake.SetSecret(hookSecret)
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	if destinations == "" {
		destinations = `[{"name": "gh", "url": "https://gh.example.com/h", "filter": {"sources": ["github"]}}]`
	}
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "github", "verify": {"kind": "github", "secretName": "hookfan/sources/github"},
		"reconcile": {"secretName": "hookfan/reconcile/github", "hook": {"owner": "acme", "repo": "shop", "id": 7}, "apiUrl": "` + api.URL + `"` + reconcileExtra + `}}],
		"destinations": ` + destinations + `}`))
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t, cfg, nil)
	rg.rec = rec
	// newRig's reconciler holds its own records: build it again on the gateway's.
	r, err := reconcile.Assemble(cfg, reconcile.Clients{
		HTTP: reconcile.NewHTTPClient(10 * time.Second), Secrets: secrets{"hookfan/reconcile/github": "ghp_fake"},
		Records: rec, Watermarks: rg.wm, Metrics: rg.sink, Now: func() time.Time { return rg.clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	rg.r = r
	rg.clock = now.Add(10 * time.Minute)
	return &githubRig{rig: rg, fake: fake, gw: gw}
}

func (g *githubRig) deliver(t *testing.T, n int) []string {
	t.Helper()
	var guids []string
	for range n {
		a, err := g.fake.Deliver(context.Background(), "pull_request", "opened", []byte(`{"action":"opened","number":1}`))
		if err != nil {
			t.Fatal(err)
		}
		guids = append(guids, a.GUID)
	}
	return guids
}

// TestGitHubRedeliversWhatNeverArrived: deliveries Hookfan refused (a
// mistyped hook secret) are redelivered once the secret is right, and
// arrive signed; a second run redelivers nothing.
func TestGitHubRedeliversWhatNeverArrived(t *testing.T) {
	g := newGitHubRig(t, "", "")
	ok := g.deliver(t, 3)
	g.fake.SetSecret("mistyped")
	lost := g.deliver(t, 2)
	g.fake.SetSecret(hookSecret)

	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 5 || rep.Present != 3 || rep.Missing != 2 || rep.Redelivered != 2 {
		t.Errorf("report %+v; want 5 listed, 3 present, 2 missing and redelivered", rep)
	}
	for _, guid := range ok {
		if n := g.gw.count(guid); n != 1 {
			t.Errorf("%s accepted %d times; want 1", guid, n)
		}
	}
	for _, guid := range lost {
		if n := g.gw.count(guid); n != 1 {
			t.Errorf("lost %s accepted %d times after the run; want 1", guid, n)
		}
	}
	g.clock = g.clock.Add(15 * time.Minute)
	rep, err = g.r.Run(context.Background(), "github", reconcile.Options{})
	if err != nil || rep.Redelivered != 0 || rep.Missing != 0 {
		t.Errorf("second run %+v, %v; want nothing missing", rep, err)
	}
}

// TestGitHubNoTraceDespite2xx: a delivery GitHub got a 2xx for but that
// left no record (lost after the answer) is redelivered too.
func TestGitHubNoTraceDespite2xx(t *testing.T) {
	g := newGitHubRig(t, "", "")
	guids := g.deliver(t, 2)
	g.rec.mu.Lock()
	delete(g.rec.keys, dedupe.Key("gh", ingest.EventID("github", guids[0])))
	g.rec.mu.Unlock()
	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{})
	if err != nil || rep.Missing != 1 || rep.Redelivered != 1 || g.gw.count(guids[0]) != 2 {
		t.Errorf("report %+v, %v, accepted %d; want the untraced one redelivered", rep, err, g.gw.count(guids[0]))
	}
}

// TestGitHubBodyFilterOnly: when only a body-filtered destination would
// take the event, its record proves nothing (the filter may drop it
// without one): GitHub's 2xx decides.
func TestGitHubBodyFilterOnly(t *testing.T) {
	g := newGitHubRig(t, "", `[{"name": "big", "url": "https://big.example.com/h", "filter": {"body": {"number": [{"numeric": [">", 100]}]}}}]`)
	g.deliver(t, 1)
	g.fake.SetSecret("mistyped")
	g.deliver(t, 1)
	g.fake.SetSecret(hookSecret)
	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{})
	if err != nil || rep.Present != 1 || rep.Missing != 1 || rep.Redelivered != 1 {
		t.Errorf("report %+v, %v; want the 2xx one present, the refused one redelivered", rep, err)
	}
}

// TestGitHubPastLookback: a refused delivery older than the lookback is
// reported and not redelivered.
func TestGitHubPastLookback(t *testing.T) {
	g := newGitHubRig(t, `, "lookback": "24h"`, "")
	g.fake.SetSecret("mistyped")
	old := g.deliver(t, 1)
	g.fake.SetSecret(hookSecret)
	g.fake.Backdate(old[0], 30*time.Hour)
	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{Since: now.Add(-48 * time.Hour)})
	if err != nil || rep.Missing != 1 || rep.OutOfRetention != 1 || rep.Redelivered != 0 || g.gw.count(old[0]) != 0 {
		t.Errorf("report %+v, %v; want one past the lookback, none redelivered", rep, err)
	}
}

// TestGitHubPagesByLink: more deliveries than a page are followed by the
// Link header's cursor.
func TestGitHubPagesByLink(t *testing.T) {
	g := newGitHubRig(t, "", "")
	g.fake.SetSecret("mistyped")
	g.deliver(t, 230)
	g.fake.SetSecret(hookSecret)
	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{DryRun: true})
	if err != nil || rep.Listed != 230 || rep.Missing != 230 {
		t.Errorf("report %+v, %v; want 230 listed and missing", rep, err)
	}
}

// githubHostile runs a GitHub source against an API that answers with
// handle.
func githubHostile(t *testing.T, handle http.HandlerFunc) reconcile.Report {
	t.Helper()
	return githubHostileHook(t, func(w http.ResponseWriter, _ *http.Request) {
		io.WriteString(w, `{"id": 7, "config": {"content_type": "json"}}`)
	}, handle)
}

// githubHostileHook is githubHostile with the hook's configuration
// answered by hook.
func githubHostileHook(t *testing.T, hook, handle http.HandlerFunc) reconcile.Report {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/orgs/acme/hooks/7" {
			hook(w, r)
			return
		}
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "github", "verify": {"kind": "github", "secretName": "s"},
		"reconcile": {"secretName": "hookfan/reconcile/github", "hook": {"org": "acme", "id": 7}, "apiUrl": "` + srv.URL + `"}}],
		"destinations": [{"name": "gh", "url": "https://gh.example.com/h"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	rg := newRig(t, cfg, nil)
	rep, err := rg.r.Run(context.Background(), "github", reconcile.Options{})
	if (rep.Stopped != "") != errors.Is(err, reconcile.ErrStopped) {
		t.Errorf("stopped %q with error %v", rep.Stopped, err)
	}
	return rep
}

func TestGitHubHostileAnswers(t *testing.T) {
	at := now.Add(-time.Hour).Format(time.RFC3339)
	good := `{"id": 1, "guid": "0b989ba4-242f-11e5-81e1-c7b6966d2516", "delivered_at": "` + at + `", "status_code": 500, "event": "push", "action": null}`
	tests := []struct {
		name    string
		handle  http.HandlerFunc
		stopped string
		skipped int
	}{
		{"next page elsewhere", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", `<http://127.0.0.2:1/orgs/acme/hooks/7/deliveries?cursor=2>; rel="next"`)
			io.WriteString(w, "["+good+"]")
		}, reconcile.ReasonBadPage, 0},
		{"next page the same", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", `<http://`+r.Host+r.URL.RequestURI()+`>; rel="next"`)
			io.WriteString(w, "["+good+"]")
		}, reconcile.ReasonBadPage, 0},
		{"new pages forever", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Link", `<http://`+r.Host+r.URL.Path+`?cursor=`+r.URL.Query().Get("cursor")+`x>; rel="next"`)
			io.WriteString(w, "["+good+"]")
		}, reconcile.ReasonPageCap, 0},
		{"an object, not a list", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, `{"message":"hi"}`) }, reconcile.ReasonBadPage, 0},
		{"rate limited by 403", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("X-RateLimit-Remaining", "0")
			http.Error(w, `{"message":"API rate limit exceeded"}`, http.StatusForbidden)
		}, reconcile.ReasonRateLimited, 0},
		{"forbidden", func(w http.ResponseWriter, r *http.Request) { http.Error(w, `{}`, http.StatusForbidden) }, reconcile.ReasonUnauthorized, 0},
		{"bad deliveries skipped", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			io.WriteString(w, `[
				{"id": 0, "guid": "ab", "delivered_at": "`+at+`", "event": "push"},
				{"id": 2, "guid": "../../x", "delivered_at": "`+at+`", "event": "push"},
				{"id": 3, "guid": "ab", "delivered_at": "yesterday", "event": "push"},
				{"id": 4, "guid": "ab", "delivered_at": "`+at+`", "event": "Push\r\nX: y"},
				{"id": 5, "guid": "ab", "delivered_at": "`+at+`", "event": "push", "action": "a b"},
				"nope",
				`+good+`]`)
		}, "", 6},
		{"redelivery refused as too old", func(w http.ResponseWriter, r *http.Request) {
			if r.Method == http.MethodPost {
				http.Error(w, `{"message":"Validation Failed"}`, http.StatusUnprocessableEntity)
				return
			}
			io.WriteString(w, "["+good+"]")
		}, "", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := githubHostile(t, tt.handle)
			if rep.Stopped != tt.stopped || rep.Skipped != tt.skipped {
				t.Errorf("stopped %q, skipped %d (%v); want %q, %d", rep.Stopped, rep.Skipped, rep.Reasons, tt.stopped, tt.skipped)
			}
			if tt.name == "next page elsewhere" && !strings.Contains(strings.Join(rep.Reasons, " "), "leaves the API") {
				t.Errorf("reasons %v; want the link refused", rep.Reasons)
			}
		})
	}
}

// TestGitHubHookConfigHostile: a hook configuration that cannot be read or
// names an unknown content type stops the run with its reason, before any
// delivery is listed.
func TestGitHubHookConfigHostile(t *testing.T) {
	listed := false
	deliveries := func(w http.ResponseWriter, _ *http.Request) { listed = true; io.WriteString(w, "[]") }
	for _, tt := range []struct {
		name    string
		hook    http.HandlerFunc
		stopped string
	}{
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "<html>") }, reconcile.ReasonBadPage},
		{"an unknown content type", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"config": {"content_type": "xml"}}`)
		}, reconcile.ReasonBadPage},
		{"unauthorized", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{}`, http.StatusUnauthorized) }, reconcile.ReasonUnauthorized},
	} {
		t.Run(tt.name, func(t *testing.T) {
			listed = false
			rep := githubHostileHook(t, tt.hook, deliveries)
			if rep.Stopped != tt.stopped || listed {
				t.Errorf("stopped %q (%v), deliveries listed %v; want %q before listing", rep.Stopped, rep.Reasons, listed, tt.stopped)
			}
		})
	}
}

// TestGitHubFormHookTypedAsIngestTypesIt: a hook that sends its payloads
// form-encoded reaches ingest typed by its event alone ("pull_request"),
// so a destination wanting "pull_request.opened" never gets it and keeps
// no record. The run types the deliveries the same way (it reads the
// hook's content_type): nothing is wanted, nothing missing, nothing
// redelivered. Typed "pull_request.opened", as the code before did, every
// run found them missing and redelivered them to no effect.
func TestGitHubFormHookTypedAsIngestTypesIt(t *testing.T) {
	g := newGitHubRig(t, "", `[{"name": "gh", "url": "https://gh.example.com/h", "filter": {"types": ["pull_request.opened"]}}]`)
	g.fake.Form = true
	guids := g.deliver(t, 2)
	g.rec.mu.Lock()
	for _, guid := range guids { // the lane's filter refused them: no record
		delete(g.rec.keys, dedupe.Key("gh", ingest.EventID("github", guid)))
	}
	g.rec.mu.Unlock()
	rep, err := g.r.Run(context.Background(), "github", reconcile.Options{})
	if err != nil || rep.Listed != 2 || rep.Unwanted != 2 || rep.Missing != 0 || rep.Redelivered != 0 {
		t.Errorf("report %+v, %v; want 2 listed, both unwanted, none redelivered", rep, err)
	}
	for _, guid := range guids {
		if n := g.gw.count(guid); n != 1 {
			t.Errorf("%s reached the gateway %d times; want once", guid, n)
		}
	}
}
