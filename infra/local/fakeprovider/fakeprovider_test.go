package fakeprovider

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func get(t *testing.T, srv *httptest.Server, path, auth string) (int, http.Header, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
	req.Header.Set("Authorization", "Bearer "+auth)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, b
}

type stripeList struct {
	Data []struct {
		ID      string `json:"id"`
		Type    string `json:"type"`
		Created int64  `json:"created"`
	} `json:"data"`
	HasMore bool `json:"has_more"`
}

func ids(l stripeList) []string {
	var out []string
	for _, e := range l.Data {
		out = append(out, e.ID)
	}
	return out
}

// The Stripe fake lists as Stripe documents: newest first, paged by
// starting_after and ending_before with has_more, filtered by created and
// type, nothing past 30 days, and only for its key.
func TestStripeFakeListsAsStripe(t *testing.T) {
	s := &Stripe{Key: "rk", Now: func() time.Time { return now }}
	srv := httptest.NewServer(s)
	defer srv.Close()
	old := s.NewEvent("charge.succeeded", now.Add(-31*24*time.Hour), nil)
	a := s.NewEvent("charge.succeeded", now.Add(-3*time.Hour), nil)
	b := s.NewEvent("charge.refunded", now.Add(-2*time.Hour), nil)
	c := s.NewEvent("invoice.paid", now.Add(-time.Hour), nil)
	list := func(q string) stripeList {
		t.Helper()
		status, _, body := get(t, srv, "/v1/events?"+q, "rk")
		if status != http.StatusOK {
			t.Fatalf("%s: %d %s", q, status, body)
		}
		var l stripeList
		if err := json.Unmarshal(body, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	eq := func(got, want []string) bool { return strings.Join(got, ",") == strings.Join(want, ",") }
	if l := list(""); !eq(ids(l), []string{c.ID, b.ID, a.ID}) || l.HasMore {
		t.Errorf("all: %v more %v; want newest first, nothing past 30 days (%s)", ids(l), l.HasMore, old.ID)
	}
	l := list("limit=2")
	if !eq(ids(l), []string{c.ID, b.ID}) || !l.HasMore {
		t.Errorf("limit 2: %v more %v", ids(l), l.HasMore)
	}
	if l := list("limit=2&starting_after=" + b.ID); !eq(ids(l), []string{a.ID}) || l.HasMore {
		t.Errorf("after %s: %v more %v", b.ID, ids(l), l.HasMore)
	}
	if l := list("limit=1&ending_before=" + a.ID); !eq(ids(l), []string{b.ID}) || !l.HasMore {
		t.Errorf("before %s: %v more %v", a.ID, ids(l), l.HasMore)
	}
	q := url.Values{"created[gte]": {itoa(now.Add(-150 * time.Minute).Unix())}, "created[lte]": {itoa(now.Add(-time.Hour).Unix())}}
	if l := list(q.Encode()); !eq(ids(l), []string{c.ID, b.ID}) {
		t.Errorf("created window: %v", ids(l))
	}
	if l := list("type=charge.*"); !eq(ids(l), []string{b.ID, a.ID}) {
		t.Errorf("type=charge.*: %v", ids(l))
	}
	if l := list("types[]=invoice.paid&types[]=charge.refunded"); !eq(ids(l), []string{c.ID, b.ID}) {
		t.Errorf("types[]: %v", ids(l))
	}
	for _, bad := range []string{"limit=0", "limit=101", "starting_after=evt_nope", "type=a&types[]=b", "types[]=charge.*", "created[gte]=yesterday", "starting_after=" + a.ID + "&ending_before=" + b.ID} {
		if status, _, _ := get(t, srv, "/v1/events?"+bad, "rk"); status != http.StatusBadRequest {
			t.Errorf("%s: %d; want 400", bad, status)
		}
	}
	if status, _, _ := get(t, srv, "/v1/events", "rk_other"); status != http.StatusUnauthorized {
		t.Errorf("another key: %d; want 401", status)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// target records what the GitHub fake sends, and answers 202.
type target struct {
	mu   sync.Mutex
	got  []http.Header
	body [][]byte
}

func (tg *target) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	tg.mu.Lock()
	tg.got = append(tg.got, r.Header.Clone())
	tg.body = append(tg.body, b)
	tg.mu.Unlock()
	w.WriteHeader(http.StatusAccepted)
}

// The GitHub fake lists a hook's deliveries newest first with a Link
// cursor, keeps three days, and redelivers a delivery signed with the
// hook's secret of the moment, under the same guid.
func TestGitHubFakeListsAndRedelivers(t *testing.T) {
	tg := &target{}
	tsrv := httptest.NewServer(tg)
	defer tsrv.Close()
	clock := now
	g := &GitHub{Token: "ghp", Path: "/orgs/acme/hooks/3/deliveries", Target: tsrv.URL, Now: func() time.Time { return clock }}
	g.SetSecret("first")
	srv := httptest.NewServer(g)
	defer srv.Close()
	var guids []string
	for range 5 {
		a, err := g.Deliver(context.Background(), "push", "", []byte(`{"ref":"main"}`))
		if err != nil {
			t.Fatal(err)
		}
		guids = append(guids, a.GUID)
		clock = clock.Add(time.Minute)
	}
	g.Backdate(guids[0], 4*24*time.Hour)
	var seen []string
	path := "/orgs/acme/hooks/3/deliveries?per_page=2"
	for page := 0; path != ""; page++ {
		status, h, body := get(t, srv, path, "ghp")
		if status != http.StatusOK || page > 5 {
			t.Fatalf("page %d: %d %s", page, status, body)
		}
		var ds []struct {
			ID   int64  `json:"id"`
			GUID string `json:"guid"`
		}
		if err := json.Unmarshal(body, &ds); err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			seen = append(seen, d.GUID)
		}
		path = ""
		if link := h.Get("Link"); link != "" {
			u, _ := url.Parse(strings.TrimSuffix(strings.TrimPrefix(strings.Split(link, ";")[0], "<"), ">"))
			path = u.RequestURI()
		}
	}
	want := []string{guids[4], guids[3], guids[2], guids[1]}
	if strings.Join(seen, ",") != strings.Join(want, ",") {
		t.Errorf("listed %v; want newest first, the 4-day-old one gone: %v", seen, want)
	}

	g.SetSecret("second")
	post := func(id int64) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/orgs/acme/hooks/3/deliveries/"+itoa(id)+"/attempts", nil)
		req.Header.Set("Authorization", "Bearer ghp")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if status := post(2); status != http.StatusAccepted {
		t.Fatalf("redeliver: %d", status)
	}
	last := tg.got[len(tg.got)-1]
	if last.Get("X-GitHub-Delivery") != guids[1] || last.Get("X-Hub-Signature-256") == tg.got[1].Get("X-Hub-Signature-256") {
		t.Errorf("redelivery: guid %s (want %s), signed with the new secret: %v", last.Get("X-GitHub-Delivery"), guids[1], last.Get("X-Hub-Signature-256") != tg.got[1].Get("X-Hub-Signature-256"))
	}
	if status := post(1); status != http.StatusUnprocessableEntity {
		t.Errorf("redeliver a 4-day-old delivery: %d; want 422", status)
	}
	if status := post(999); status != http.StatusNotFound {
		t.Errorf("redeliver an unknown delivery: %d; want 404", status)
	}
	if status, _, _ := get(t, srv, "/orgs/acme/hooks/3/deliveries", "other"); status != http.StatusUnauthorized {
		t.Errorf("another token: %d; want 401", status)
	}
}
