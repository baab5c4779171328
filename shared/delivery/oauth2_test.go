package delivery

import (
	"context"
	"encoding/base64"
	"fmt"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

const (
	oauthSecret    = "hookfan/orders/oauth"
	testClientID   = "hookfan-orders"
	testClientPass = "cs_do-not-log-this"
)

// fakeIdP is a token endpoint: it checks the client's credentials, issues
// tok-1, tok-2, … and tells the destination which tokens are valid.
type fakeIdP struct {
	*httptest.Server
	mu        sync.Mutex
	calls     int
	forms     []url.Values
	basic     []string
	expiresIn string // JSON value; "" leaves expires_in out
	status    int    // answer with this status instead of a token
	body      string // and this body
	delay     time.Duration
	valid     map[string]bool
}

func newFakeIdP(t testing.TB) *fakeIdP {
	f := &fakeIdP{expiresIn: "120", valid: map[string]bool{}}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		f.mu.Lock()
		f.calls++
		n, status, body, delay, exp := f.calls, f.status, f.body, f.delay, f.expiresIn
		f.forms = append(f.forms, r.PostForm)
		f.basic = append(f.basic, r.Header.Get("Authorization"))
		f.mu.Unlock()
		if delay > 0 {
			time.Sleep(delay)
		}
		if status != 0 {
			w.WriteHeader(status)
			_, _ = io.WriteString(w, body)
			return
		}
		tok := fmt.Sprintf("tok-%d", n)
		f.mu.Lock()
		f.valid[tok] = true
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		js := `{"access_token": "` + tok + `", "token_type": "Bearer"`
		if exp != "" {
			js += `, "expires_in": ` + exp
		}
		_, _ = io.WriteString(w, js+"}")
	}))
	t.Cleanup(f.Close)
	return f
}

func (f *fakeIdP) set(fn func(*fakeIdP)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeIdP) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.calls
}

func (f *fakeIdP) revoke(tok string) { f.set(func(f *fakeIdP) { delete(f.valid, tok) }) }

// bearerDestination answers 204 to a valid token and 401 otherwise, and
// records the token of each request.
type bearerDestination struct {
	*httptest.Server
	mu     sync.Mutex
	tokens []string
}

func newBearerDestination(t testing.TB, idp *fakeIdP) *bearerDestination {
	d := &bearerDestination{}
	d.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		tok := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		d.mu.Lock()
		d.tokens = append(d.tokens, tok)
		d.mu.Unlock()
		idp.mu.Lock()
		ok := idp.valid[tok]
		idp.mu.Unlock()
		if !ok {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(d.Close)
	return d
}

func (d *bearerDestination) seen() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.tokens...)
}

func oauthHarness(t *testing.T, idp *fakeIdP, dest string, clk *clock, style string, opts ...func(*laneOptions)) (*harness, *fakeSM) {
	sm := newFakeSM(map[string]string{oauthSecret: `{"clientId": "` + testClientID + `", "clientSecret": "` + testClientPass + `"}`})
	oc := &config.OAuth2{TokenURL: idp.URL + "/oauth2/token", ClientSecret: oauthSecret, Scopes: []string{"webhooks:write", "events"}, Audience: "https://api.example", ClientAuth: style}
	opts = append(opts, withClientAuth(t, sm, clk, nil, oc))
	return newHarness(t, dest, newSecret(t), opts...), sm
}

// checkNoSecrets: neither a token nor the client's secret is in a log line
// or a record.
func checkNoSecrets(t *testing.T, h *harness, ids ...string) {
	t.Helper()
	logs := h.logs.b.String()
	for _, id := range ids {
		r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", id))
		logs += fmt.Sprintf("%+v", r)
	}
	for _, s := range []string{"tok-", testClientPass, base64.StdEncoding.EncodeToString([]byte(testClientID + ":" + testClientPass))} {
		if strings.Contains(logs, s) {
			t.Errorf("a log line or record holds %q:\n%s", s, logs)
		}
	}
}

// TestOAuth2TokenSharedAndCached: one token call serves a whole batch of
// concurrent deliveries, with the client's credentials in HTTP Basic and
// the scopes and audience in the form; the token is used until shortly
// before it expires, then replaced.
func TestOAuth2TokenSharedAndCached(t *testing.T) {
	idp := newFakeIdP(t)
	idp.set(func(f *fakeIdP) { f.delay = 50 * time.Millisecond }) // the batch waits on one call
	dest := newBearerDestination(t, idp)
	clk := &clock{t: time.Now()}
	h, _ := oauthHarness(t, idp, dest.URL, clk, "")
	var recs []string
	ev := batch()
	for i := range 10 {
		id := fmt.Sprintf("evt_%d", i)
		recs = append(recs, id)
		ev.Records = append(ev.Records, sqsRecord(id, 1))
	}
	if resp, _ := h.h.Handle(context.Background(), ev); len(failures(resp)) != 0 {
		t.Fatalf("failures %v: %s", failures(resp), lastRecord(t, h, "evt_0").LastError)
	}
	if n := idp.count(); n != 1 {
		t.Errorf("%d token calls for a batch of 10, want 1", n)
	}
	form := idp.forms[0]
	if form.Get("grant_type") != "client_credentials" || form.Get("scope") != "webhooks:write events" || form.Get("audience") != "https://api.example" || form.Has("client_secret") {
		t.Errorf("token request form %v", form)
	}
	if want := "Basic " + base64.StdEncoding.EncodeToString([]byte(testClientID+":"+url.QueryEscape(testClientPass))); idp.basic[0] != want {
		t.Errorf("token request Authorization %q, want %q", idp.basic[0], want)
	}
	// expires_in 120: replaced a minute early, at 60 s.
	clk.Advance(59 * time.Second)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_a", 1))); len(failures(resp)) != 0 || idp.count() != 1 {
		t.Errorf("within its lifetime: failures %v, %d token calls", failures(resp), idp.count())
	}
	clk.Advance(2 * time.Second)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_b", 1))); len(failures(resp)) != 0 || idp.count() != 2 {
		t.Errorf("near its expiry: failures %v, %d token calls, want a new token", failures(resp), idp.count())
	}
	if got := dest.seen(); got[len(got)-1] != "tok-2" {
		t.Errorf("last token %q, want tok-2", got[len(got)-1])
	}
	checkNoSecrets(t, h, append(recs, "evt_a", "evt_b")...)
}

// TestOAuth2BodyClientAuth: clientAuth "body" sends the credentials as
// form fields and no Authorization header.
func TestOAuth2BodyClientAuth(t *testing.T) {
	idp := newFakeIdP(t)
	dest := newBearerDestination(t, idp)
	h, _ := oauthHarness(t, idp, dest.URL, &clock{t: time.Now()}, config.OAuth2ClientAuthBody)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1))); len(failures(resp)) != 0 {
		t.Fatal(lastRecord(t, h, "evt_1").LastError)
	}
	if f := idp.forms[0]; f.Get("client_id") != testClientID || f.Get("client_secret") != testClientPass || idp.basic[0] != "" {
		t.Errorf("form %v, Authorization %q", f, idp.basic[0])
	}
}

// TestOAuth2RefreshOn401: a token the destination refuses is replaced once
// and the delivery sent again within the same attempt; a destination that
// refuses every token gets one new token per delivery at most, and none
// for a token younger than https.TokenMinAge.
func TestOAuth2RefreshOn401(t *testing.T) {
	idp := newFakeIdP(t)
	idp.set(func(f *fakeIdP) { f.expiresIn = "3600" })
	dest := newBearerDestination(t, idp)
	clk := &clock{t: time.Now()}
	h, _ := oauthHarness(t, idp, dest.URL, clk, "")
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1))); len(failures(resp)) != 0 {
		t.Fatal(lastRecord(t, h, "evt_1").LastError)
	}
	idp.revoke("tok-1")
	clk.Advance(https.TokenMinAge)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_2", 1))); len(failures(resp)) != 0 {
		t.Fatalf("after a revoked token: %s", lastRecord(t, h, "evt_2").LastError)
	}
	if r := lastRecord(t, h, "evt_2"); r.Attempts != 1 || idp.count() != 2 {
		t.Errorf("%d attempts, %d token calls; want 1 and 2", r.Attempts, idp.count())
	}
	if got := strings.Join(dest.seen(), ","); got != "tok-1,tok-1,tok-2" {
		t.Errorf("tokens sent %s", got)
	}

	// Every token refused: the 401 stands, one new token per delivery.
	idp.set(func(f *fakeIdP) { f.valid = map[string]bool{}; f.status = 0 })
	dest401 := newBearerDestination(t, &fakeIdP{valid: map[string]bool{}})
	h2, _ := oauthHarness(t, idp, dest401.URL, clk, "")
	before := idp.count()
	if resp, _ := h2.h.Handle(context.Background(), batch(sqsRecord("evt_3", 1))); len(failures(resp)) != 1 {
		t.Fatal("a refused token was delivered")
	}
	if r := lastRecord(t, h2, "evt_3"); r.LastStatus != http.StatusUnauthorized || r.LastError != "HTTP 401" {
		t.Errorf("record %d %q, want HTTP 401", r.LastStatus, r.LastError)
	}
	if n := idp.count() - before; n != 1 {
		t.Errorf("%d token calls for a token just issued, want 1 (no refresh before https.TokenMinAge)", n)
	}
	clk.Advance(https.TokenMinAge)
	before = idp.count()
	_, _ = h2.h.Handle(context.Background(), batch(sqsRecord("evt_4", 1)))
	if n := idp.count() - before; n != 1 {
		t.Errorf("%d token calls after a 401 to an older token, want 1", n)
	}
	checkNoSecrets(t, h, "evt_1", "evt_2")
	checkNoSecrets(t, h2, "evt_3", "evt_4")
}

// TestOAuth2TokenEndpointFails: an endpoint that is down, slow, refuses the
// client or answers nonsense fails the attempt with its own reason; the
// attempt counts toward pausing; a failed call is not repeated within
// https.TokenBackoff; a token still valid is used through an outage.
func TestOAuth2TokenEndpointFails(t *testing.T) {
	tests := []struct {
		name   string
		set    func(*fakeIdP)
		closed bool
		want   string
	}{
		{"503", func(f *fakeIdP) { f.status = 503 }, false, "token_endpoint_unavailable: the token endpoint answered HTTP 503"},
		{"429", func(f *fakeIdP) { f.status = 429 }, false, "token_endpoint_unavailable: the token endpoint answered HTTP 429"},
		{"down", nil, true, "token_endpoint_unavailable: no answer from the token endpoint: "},
		{"slow", func(f *fakeIdP) { f.delay = 3 * time.Second }, false, "token_endpoint_unavailable: "},
		{"invalid_client", func(f *fakeIdP) {
			f.status, f.body = 401, `{"error": "invalid_client", "error_description": "client cs_do-not-log-this unknown"}`
		}, false, "token_refused: the token endpoint answered HTTP 401 (invalid_client); check the client id and secret"},
		{"not json", func(f *fakeIdP) { f.status, f.body = 200, "<html>tok-9</html>" }, false, "token_response_invalid: the token endpoint's answer is not a JSON token response"},
		{"mac token", func(f *fakeIdP) { f.status, f.body = 200, `{"access_token": "tok-9", "token_type": "mac"}` }, false, "token_response_invalid: the token endpoint issued a mac token; only Bearer tokens are sent"},
		{"newline", func(f *fakeIdP) { f.status, f.body = 200, `{"access_token": "tok-9\nX: y", "token_type": "bearer"}` }, false, "token_response_invalid: the access token cannot be sent in a header"},
		{"expires_in", func(f *fakeIdP) { f.status, f.body = 200, `{"access_token": "tok-9", "expires_in": -5}` }, false, "token_response_invalid: the token endpoint's expires_in is not a positive number"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idp := newFakeIdP(t)
			if tt.set != nil {
				idp.set(tt.set)
			}
			dest := newBearerDestination(t, idp)
			if tt.closed {
				idp.Close()
			}
			clk := &clock{t: time.Now()}
			h, _ := oauthHarness(t, idp, dest.URL, clk, "")
			p := parsedRecord{}
			p.msg, p.err = ParseMessage(sqsRecord("evt_1", 1))
			d := h.h.deliver(context.Background(), clk.Now(), p)
			if !d.release || d.counted != pausing.Failed {
				t.Errorf("decision %+v, want a failed attempt counted toward pausing", d)
			}
			r := lastRecord(t, h, "evt_1")
			if r.Status != dedupe.StatusFailed || !strings.HasPrefix(r.LastError, tt.want) {
				t.Errorf("record %s %q, want it to start %q", r.Status, r.LastError, tt.want)
			}
			if len(dest.seen()) != 0 {
				t.Errorf("the destination got %d requests without a token", len(dest.seen()))
			}
			// Within the back-off: no call, the same reason.
			calls := idp.count()
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_2", 1)))
			if len(failures(resp)) != 1 || idp.count() != calls || !strings.HasPrefix(lastRecord(t, h, "evt_2").LastError, tt.want) {
				t.Errorf("within the back-off: failures %v, %d more calls, %q", failures(resp), idp.count()-calls, lastRecord(t, h, "evt_2").LastError)
			}
			if h.sink.sum(metrics.DeliveryAttempts) != 2 {
				t.Errorf("%v attempts counted, want 2", h.sink.sum(metrics.DeliveryAttempts))
			}
			checkNoSecrets(t, h, "evt_1", "evt_2")
		})
	}

	// A token still valid serves through an outage after its refresh time.
	idp := newFakeIdP(t)
	dest := newBearerDestination(t, idp)
	clk := &clock{t: time.Now()}
	h, _ := oauthHarness(t, idp, dest.URL, clk, "")
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1))); len(failures(resp)) != 0 {
		t.Fatal(lastRecord(t, h, "evt_1").LastError)
	}
	idp.set(func(f *fakeIdP) { f.status = 503 })
	clk.Advance(90 * time.Second) // past the refresh (60 s), before the expiry (120 s)
	if resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_2", 1))); len(failures(resp)) != 0 || idp.count() != 2 {
		t.Errorf("through an outage: failures %v, %d token calls", failures(resp), idp.count())
	}
}

// TestOAuth2TokenEndpointGuarded: the token endpoint is reached through the
// address guard: a loopback token URL is refused at dial time unless the
// destination allows private networks.
func TestOAuth2TokenEndpointGuarded(t *testing.T) {
	idp := newFakeIdP(t)
	clk := &clock{t: time.Now()}
	h, _ := oauthHarness(t, idp, "https://hooks.example.com/", clk, "", func(o *laneOptions) { o.Destination.AllowPrivateNetworks = false })
	_, _ = h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
	r := lastRecord(t, h, "evt_1")
	if !strings.HasPrefix(r.LastError, "token_endpoint_unavailable: no answer from the token endpoint: ") || !strings.Contains(r.LastError, "loopback") || idp.count() != 0 {
		t.Errorf("record %q, %d token calls; want refused at dial time", r.LastError, idp.count())
	}
}

// TestOAuth2SecretUnusable: a client secret that is missing or not the
// JSON object is the operator's to fix: the attempt is claimed and
// recorded FAILED oauth2_client_secret_unusable, naming the secret and the
// problem only; the token endpoint is not called.
func TestOAuth2SecretUnusable(t *testing.T) {
	const q = `oauth2_client_secret_unusable: secret "` + oauthSecret + `" (auth.oauth2.clientSecret)`
	for _, tt := range []struct{ name, value, want string }{
		{"missing", "", q + " does not exist, is scheduled for deletion or has no current value; create or restore it"},
		{"plain", testClientPass, q + `: the value is not the JSON object {"clientId": "…", "clientSecret": "…"}`},
		{"no id", `{"clientSecret": "` + testClientPass + `"}`, q + `: the JSON object lacks "clientId" or "clientSecret"; store both`},
	} {
		idp := newFakeIdP(t)
		values := map[string]string{}
		if tt.value != "" {
			values[oauthSecret] = tt.value
		}
		sm := newFakeSM(values)
		clk := &clock{t: time.Now()}
		oc := &config.OAuth2{TokenURL: idp.URL, ClientSecret: oauthSecret}
		h := newHarness(t, "https://127.0.0.1:1/", newSecret(t), withClientAuth(t, sm, clk, nil, oc))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
		r := lastRecord(t, h, "evt_1")
		logs := h.logs.b.String()
		if len(failures(resp)) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 1 || r.Status != dedupe.StatusFailed || r.LastError != tt.want || idp.count() != 0 {
			t.Errorf("%s: failures %v, attempts %v, token calls %d, record %s %q; want FAILED %q", tt.name, failures(resp), h.sink.sum(metrics.DeliveryAttempts), idp.count(), r.Status, r.LastError, tt.want)
		}
		if strings.Contains(logs+r.LastError, testClientPass) {
			t.Errorf("%s: the log or the record shows the client secret", tt.name)
		}
	}
}
