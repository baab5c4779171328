package console

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/reconcile"
)

// emptyQueues is an SQS whose queues are all empty.
type emptyQueues struct{}

func (emptyQueues) GetQueueAttributes(context.Context, *sqs.GetQueueAttributesInput, ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error) {
	return &sqs.GetQueueAttributesOutput{Attributes: map[string]string{}}, nil
}
func (emptyQueues) ReceiveMessage(context.Context, *sqs.ReceiveMessageInput, ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error) {
	return &sqs.ReceiveMessageOutput{}, nil
}
func (emptyQueues) SendMessage(context.Context, *sqs.SendMessageInput, ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	return &sqs.SendMessageOutput{}, nil
}
func (emptyQueues) DeleteMessage(context.Context, *sqs.DeleteMessageInput, ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	return &sqs.DeleteMessageOutput{}, nil
}
func (emptyQueues) ChangeMessageVisibilityBatch(context.Context, *sqs.ChangeMessageVisibilityBatchInput, ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error) {
	return &sqs.ChangeMessageVisibilityBatchOutput{}, nil
}
func (emptyQueues) StartMessageMoveTask(context.Context, *sqs.StartMessageMoveTaskInput, ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error) {
	return &sqs.StartMessageMoveTaskOutput{}, nil
}
func (emptyQueues) ListMessageMoveTasks(context.Context, *sqs.ListMessageMoveTasksInput, ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error) {
	return &sqs.ListMessageMoveTasksOutput{}, nil
}

var testNow = time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)

// hostile is what an event may carry: markup that must show as text.
const (
	hostileBody   = `{"note":"</pre><script>alert(1)</script>","attr":"\" onmouseover=\"alert(2)"}`
	hostileType   = `charge"><script>alert(4)</script>`
	hostileError  = `HTTP 500 (<img src=x onerror=alert(3)>)`
	hostileAnswer = `<html><script>alert(5)</script></html>`
	eventID       = "evt_hostile"
	host          = "127.0.0.1:8123"
)

type fixture struct {
	s       *Server
	lanes   *pausing.Memory
	actions *operator.MemoryActions
}

// newFixture is a console on one lane "d" (which pauses) with one dead
// event whose body, type and error are hostile.
func newFixture(t *testing.T, readOnly bool) fixture {
	t.Helper()
	ctx := context.Background()
	records := dedupe.NewMemory()
	lease, err := records.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("d", eventID), Source: "stripe", Type: hostileType,
		Now: testNow.Add(-30 * time.Minute), LeaseUntil: testNow.Add(-29 * time.Minute), ExpiresAt: testNow.Add(24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if err := records.Finish(ctx, lease, dedupe.Outcome{Status: dedupe.StatusDead, HTTPStatus: 500, Error: hostileError, At: testNow.Add(-30 * time.Minute),
		Answer: []byte(hostileAnswer)}); err != nil {
		t.Fatal(err)
	}
	bucket := archive.NewMemoryBucket()
	body, attrs := message.Event{ID: eventID, Source: "stripe", Type: hostileType, ContentType: "application/json",
		ReceivedAt: testNow.Add(-31 * time.Minute), Body: hostileBody}.Encode()
	env := archive.Event{ID: eventID, Source: "stripe", Type: hostileType, ReceivedAt: testNow.Add(-31 * time.Minute), Message: body,
		Attributes: attrs, SNSMessageID: "m1", PublishedAt: testNow.Add(-31 * time.Minute)}.Envelope()
	rec, err := json.Marshal(env)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := archive.NewWriter(bucket, "b", "test").Write(ctx, [][]byte{rec}, testNow.Add(-31*time.Minute)); err != nil {
		t.Fatal(err)
	}
	rule := pausing.Rule{PauseRule: config.PauseRule{AfterFailures: 3, ProbeEvery: time.Minute, MaxPause: time.Hour}, Retention: 10 * time.Hour}
	lanes := pausing.NewMemory()
	f := fixture{lanes: lanes, actions: &operator.MemoryActions{}}
	op := &operator.Operator{
		Resources: operator.Resources{Where: "test stack", ArchiveBucket: "b", ArchiveDays: 7,
			Lanes: []operator.Lane{{Destination: "d", QueueURL: "q", DLQURL: "dlq", Pause: &rule, Retention: rule.Retention, Target: "https://example.com"}}},
		SQS: emptyQueues{}, Records: records, Recent: records, Archive: archive.NewReader(bucket, "b"),
		LaneStore: lanes, Switch: func(operator.Lane) pausing.Switch { return &pausing.MemorySwitch{} },
		Actions: f.actions, Now: func() time.Time { return testNow },
	}
	s, err := New(ctx, Options{Operator: op, ReadOnly: readOnly, Identity: "arn:aws:iam::123456789012:user/alice", Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatal(err)
	}
	f.s = s
	return f
}

// do sends one request to the console as a browser on host would.
func (f fixture) do(method, target string, header http.Header, form url.Values) *httptest.ResponseRecorder {
	var r *http.Request
	if form != nil {
		r = httptest.NewRequest(method, target, strings.NewReader(form.Encode()))
		r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	} else {
		r = httptest.NewRequest(method, target, nil)
	}
	r.Host = host
	for k, vs := range header {
		r.Header[k] = vs
	}
	w := httptest.NewRecorder()
	f.s.ServeHTTP(w, r)
	return w
}

// login exchanges the token for the session cookie.
func (f fixture) login(t *testing.T) http.Header {
	t.Helper()
	w := f.do("GET", "/login?token="+url.QueryEscape(f.s.Token()), nil, nil)
	if w.Code != http.StatusSeeOther {
		t.Fatalf("login: %d %s", w.Code, w.Body)
	}
	var cookie *http.Cookie
	for _, c := range w.Result().Cookies() {
		if c.Name == CookieName+"_8123" {
			cookie = c
		}
	}
	if cookie == nil {
		t.Fatal("login set no session cookie")
	}
	return http.Header{"Cookie": {cookie.Name + "=" + cookie.Value}}
}

// csrf reads the session's CSRF token off a page, as a form carries it.
func csrf(t *testing.T, page string) string {
	t.Helper()
	m := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("no CSRF field on the page:\n%s", page)
	}
	return m[1]
}

func TestCheckListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"127.0.0.1:0", "localhost:8080", "[::1]:0", "127.1.2.3:80"} {
		if err := CheckListen(addr); err != nil {
			t.Errorf("CheckListen(%q) = %v, want nil", addr, err)
		}
	}
	for _, addr := range []string{"0.0.0.0:0", ":8080", "192.168.1.10:80", "[::]:0", "example.com:80", "127.0.0.1"} {
		err := CheckListen(addr)
		if err == nil || !strings.Contains(err.Error(), "--listen") {
			t.Errorf("CheckListen(%q) = %v, want a refusal naming --listen", addr, err)
		}
	}
}

func TestRefusesAForeignHost(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	for _, h := range []string{"evil.example:8123", "evil.example", "127.0.0.1.nip.io:8123", "10.0.0.1:8123"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = h
		for k, vs := range auth {
			r.Header[k] = vs
		}
		w := httptest.NewRecorder()
		f.s.ServeHTTP(w, r)
		if w.Code != http.StatusMisdirectedRequest || strings.Contains(w.Body.String(), "Lanes") {
			t.Errorf("Host %s: %d %q, want 421 and no page", h, w.Code, w.Body)
		}
	}
	for _, h := range []string{host, "localhost:8123", "[::1]:8123"} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = h
		for k, vs := range auth {
			r.Header[k] = vs
		}
		w := httptest.NewRecorder()
		f.s.ServeHTTP(w, r)
		if w.Code != http.StatusOK {
			t.Errorf("Host %s: %d %s, want 200", h, w.Code, w.Body)
		}
	}
}

func TestTokenIsExchangedOnceForAStrictCookie(t *testing.T) {
	f := newFixture(t, false)
	if w := f.do("GET", "/", nil, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("no cookie: %d, want 401", w.Code)
	}
	if w := f.do("GET", "/", http.Header{"Cookie": {CookieName + "_8123=guess"}}, nil); w.Code != http.StatusUnauthorized {
		t.Errorf("a made-up cookie: %d, want 401", w.Code)
	}
	if w := f.do("GET", "/login?token=wrong", nil, nil); w.Code != http.StatusForbidden || len(w.Result().Cookies()) != 0 {
		t.Errorf("a wrong token: %d with cookies %v, want 403 and none", w.Code, w.Result().Cookies())
	}
	token := f.s.Token()
	w := f.do("GET", "/login?token="+url.QueryEscape(token), nil, nil)
	cookies := w.Result().Cookies()
	if w.Code != http.StatusSeeOther || len(cookies) != 1 {
		t.Fatalf("the token: %d with cookies %v, want 303 and one", w.Code, cookies)
	}
	if c := cookies[0]; !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value == token {
		t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, and not the token itself", c)
	}
	if w := f.do("GET", "/login?token="+url.QueryEscape(token), nil, nil); w.Code != http.StatusForbidden {
		t.Errorf("the token a second time: %d, want 403", w.Code)
	}
	auth := http.Header{"Cookie": {cookies[0].Name + "=" + cookies[0].Value}}
	if w := f.do("GET", "/", auth, nil); w.Code != http.StatusOK {
		t.Errorf("with the cookie: %d, want 200", w.Code)
	}
}

// pauseForm is a pause as the lane page posts it.
func (f fixture) pauseForm(t *testing.T, auth http.Header) url.Values {
	page := f.do("GET", "/lanes/d", auth, nil)
	if page.Code != http.StatusOK {
		t.Fatalf("lane page: %d %s", page.Code, page.Body)
	}
	return url.Values{"csrf": {csrf(t, page.Body.String())}, "reason": {"maintenance"}}
}

func (f fixture) paused(t *testing.T) bool {
	st, err := f.lanes.Get(context.Background(), "d")
	if err != nil {
		t.Fatal(err)
	}
	return st.IsPaused()
}

func TestActionChecksOriginAndCSRF(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	form := f.pauseForm(t, auth)
	with := func(h http.Header) http.Header {
		out := http.Header{}
		for k, v := range auth {
			out[k] = v
		}
		for k, v := range h {
			out[k] = v
		}
		return out
	}
	refused := []struct {
		name   string
		header http.Header
		form   url.Values
	}{
		{"no Origin", nil, form},
		{"another site's Origin", http.Header{"Origin": {"http://evil.example"}}, form},
		{"another port's Origin", http.Header{"Origin": {"http://127.0.0.1:9999"}}, form},
		{"null Origin", http.Header{"Origin": {"null"}}, form},
		{"no CSRF token", http.Header{"Origin": {"http://" + host}}, url.Values{"reason": {"x"}}},
		{"a wrong CSRF token", http.Header{"Origin": {"http://" + host}}, url.Values{"reason": {"x"}, "csrf": {"wrong"}}},
	}
	for _, c := range refused {
		w := f.do("POST", "/lanes/d/pause", with(c.header), c.form)
		if w.Code != http.StatusForbidden {
			t.Errorf("%s: %d %s, want 403", c.name, w.Code, w.Body)
		}
		if f.paused(t) {
			t.Fatalf("%s: the lane was paused", c.name)
		}
	}
	if w := f.do("GET", "/lanes/d/pause", auth, nil); w.Code != http.StatusNotFound || f.paused(t) {
		t.Errorf("GET of an action: %d, paused %v; want 404 and no pause", w.Code, f.paused(t))
	}
	w := f.do("POST", "/lanes/d/pause", with(http.Header{"Origin": {"http://" + host}}), form)
	if w.Code != http.StatusSeeOther || !f.paused(t) {
		t.Fatalf("a proper pause: %d %s, paused %v; want 303 and paused", w.Code, w.Body, f.paused(t))
	}
	acts, _ := f.actions.Since(context.Background(), time.Time{})
	if len(acts) != 1 || acts[0].Identity != "arn:aws:iam::123456789012:user/alice" || acts[0].Kind != "pause" || !acts[0].At.Equal(testNow) || acts[0].Failed {
		t.Errorf("recorded actions %+v, want the pause under alice's identity at %s", acts, testNow)
	}
	page := f.do("GET", "/lanes/d", auth, nil).Body.String()
	for _, want := range []string{"paused by the operator", "maintenance", "user/alice"} {
		if !strings.Contains(page, want) {
			t.Errorf("the lane page after the pause lacks %q", want)
		}
	}
}

func TestReadOnlyRefusesEveryAction(t *testing.T) {
	f := newFixture(t, true)
	auth := f.login(t)
	auth.Set("Origin", "http://"+host)
	page := f.do("GET", "/lanes/d", auth, nil).Body.String()
	if strings.Contains(page, `action="/lanes/d/pause"`) {
		t.Error("a read-only console's lane page offers a pause")
	}
	for _, target := range []string{"/lanes/d/pause", "/lanes/d/resume", "/lanes/d/redrive", "/events/" + eventID + "/replay", "/replay"} {
		w := f.do("POST", target, auth, url.Values{"csrf": {f.sessionCSRF(t)}, "destination": {"d"}, "since": {"1h"}, "max": {"1"}})
		if w.Code != http.StatusForbidden || !strings.Contains(w.Body.String(), "read-only") {
			t.Errorf("POST %s: %d %s, want 403 read-only", target, w.Code, w.Body)
		}
	}
	if f.paused(t) {
		t.Error("a read-only console paused the lane")
	}
	if acts, _ := f.actions.Since(context.Background(), time.Time{}); len(acts) != 0 {
		t.Errorf("a read-only console recorded actions: %+v", acts)
	}
}

// sessionCSRF is the only session's CSRF token.
func (f fixture) sessionCSRF(t *testing.T) string {
	t.Helper()
	f.s.mu.Lock()
	defer f.s.mu.Unlock()
	for _, s := range f.s.sessions {
		return s.csrf
	}
	t.Fatal("no session")
	return ""
}

// TestEveryPageIsLocked: every page carries the strict policy and no
// inline script (nor an inline event handler), and loads nothing from
// elsewhere.
func TestEveryPageIsLocked(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	inline := regexp.MustCompile(`(?i)<script(?:\s[^>]*)?>\s*[^<\s]|<[^>]*\son[a-z]+\s*=|javascript:|(?:src|href)="(?:https?:)?//`)
	for _, path := range []string{"/", "/lanes/d", "/events", "/events?since=2h&state=DEAD", "/events/" + eventID, "/actions", "/reconcile", "/replay", "/replay?count=1&destination=d&since=2h", "/nowhere"} {
		w := f.do("GET", path, auth, nil)
		if got := w.Header().Get("Content-Security-Policy"); got != CSP {
			t.Errorf("%s: Content-Security-Policy %q, want %q", path, got, CSP)
		}
		if got := w.Header().Get("X-Frame-Options"); got != "DENY" {
			t.Errorf("%s: X-Frame-Options %q", path, got)
		}
		if m := inline.FindString(w.Body.String()); m != "" {
			t.Errorf("%s: inline script, handler or foreign load %q", path, m)
		}
	}
	for _, directive := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'", "form-action 'self'"} {
		if !strings.Contains(CSP, directive) {
			t.Errorf("CSP lacks %s", directive)
		}
	}
	if strings.Contains(CSP, "unsafe-inline") || strings.Contains(CSP, "unsafe-eval") {
		t.Errorf("CSP allows inline or eval: %s", CSP)
	}
}

// TestHostileEventShowsAsText: a body, type and error carrying markup show
// as text on every page that shows them.
func TestHostileEventShowsAsText(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	for _, path := range []string{"/events/" + eventID, "/events?since=2h"} {
		w := f.do("GET", path, auth, nil)
		page := w.Body.String()
		if w.Code != http.StatusOK {
			t.Fatalf("%s: %d %s", path, w.Code, page)
		}
		for _, raw := range []string{"<script>alert", "<img src=x", `" onmouseover="`, `"><script`} {
			if strings.Contains(page, raw) {
				t.Errorf("%s: the page carries %q unescaped", path, raw)
			}
		}
		if !strings.Contains(page, "&lt;script&gt;alert(4)&lt;/script&gt;") {
			t.Errorf("%s: the hostile type is not shown as text", path)
		}
	}
	page := f.do("GET", "/events/"+eventID, auth, nil).Body.String()
	for _, want := range []string{"&lt;/pre&gt;&lt;script&gt;alert(1)&lt;/script&gt;", "&lt;img src=x onerror=alert(3)&gt;", "onmouseover=\\&#34;alert(2)", "&lt;html&gt;&lt;script&gt;alert(5)&lt;/script&gt;&lt;/html&gt;", "DEAD"} {
		if !strings.Contains(page, want) {
			t.Errorf("the event page lacks %q (the hostile values as text)", want)
		}
	}
}

// TestReplayManyCountsThenSendsAtMostTheCount: a dry run counts what a
// filter selects; the replay sends at most the count confirmed, and
// refuses a count above the hard cap or none at all.
func TestReplayManyCountsThenSendsAtMostTheCount(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	w := f.do("GET", "/replay?count=1&destination=d&since=2h", auth, nil)
	page := w.Body.String()
	if w.Code != http.StatusOK || !strings.Contains(page, "1 event(s) would be replayed to d") {
		t.Fatalf("dry run: %d\n%s", w.Code, page)
	}
	if acts, _ := f.actions.Since(context.Background(), time.Time{}); len(acts) != 0 {
		t.Errorf("a dry run was recorded as an action: %+v", acts)
	}
	fixed := regexp.MustCompile(`name="since" value="([^"]+)"><input type="hidden" name="until" value="([^"]+)"`).FindStringSubmatch(page)
	if fixed == nil || fixed[1] != "2026-05-01T10:00:00Z" || fixed[2] != "2026-05-01T12:00:00Z" {
		t.Fatalf("the confirm form does not fix the counted window: %q", fixed)
	}
	post := func(max string) (int, []operator.Action) {
		h := http.Header{"Origin": {"http://" + host}}
		for k, v := range auth {
			h[k] = v
		}
		form := url.Values{"csrf": {csrf(t, page)}, "destination": {"d"}, "since": {fixed[1]}, "until": {fixed[2]}, "max": {max}}
		code := f.do("POST", "/replay", h, form).Code
		acts, _ := f.actions.Since(context.Background(), time.Time{})
		return code, acts
	}
	for _, max := range []string{"", "0", "-1", strconv.Itoa(HardCap + 1), "many"} {
		code, acts := post(max)
		if code != http.StatusSeeOther || len(acts) == 0 || !acts[0].Failed || !strings.Contains(acts[0].Result, "confirm a count") {
			t.Errorf("max %q: %d, last action %+v; want a refusal recorded as failed", max, code, acts)
		}
	}
	code, acts := post("1")
	if code != http.StatusSeeOther || acts[0].Failed || !strings.Contains(acts[0].Result, "1 sent, 0 not sent") || acts[0].Kind != "replay-many" {
		t.Errorf("the confirmed replay: %d, action %+v; want 1 sent", code, acts[0])
	}
	if w := f.do("GET", "/replay?count=1&destination=d&since=yesterday", auth, nil); w.Code != http.StatusBadRequest || !strings.Contains(w.Body.String(), "is not a time") {
		t.Errorf("a bad since: %d", w.Code)
	}
}

// TestLanesPageShowsEachLane: the lanes page shows a lane's state, queues,
// target, configured and effective rate, and static egress addresses;
// a paused lane shows who paused it and why.
func TestLanesPageShowsEachLane(t *testing.T) {
	f := newFixture(t, false)
	op := f.s.op
	op.Resources.Lanes[0].Pace = &config.Pace{N: 5, Per: time.Second, Burst: 5}
	op.Resources.Lanes[0].Egress = config.EgressStatic
	op.Resources.EgressAddresses = []string{"203.0.113.7", "203.0.113.8"}
	op.PaceStore = pacing.NewMemory()
	if _, err := op.PaceStore.SetOverride(context.Background(), "d", pacing.Override{N: 2, Per: time.Second, At: testNow, Until: testNow.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	op.Out = &strings.Builder{}
	if _, err := op.PauseLane(context.Background(), "d", `<b>receiver</b> down`); err != nil {
		t.Fatal(err)
	}
	auth := f.login(t)
	page := f.do("GET", "/", auth, nil).Body.String()
	for _, want := range []string{`id="lane-d"`, "paused by the operator", "&lt;b&gt;receiver&lt;/b&gt; down", "https://example.com", "5/s, burst 5",
		"capped at 2/s by an operator", "static: from 203.0.113.7, 203.0.113.8", "0 waiting", "empty"} {
		if !strings.Contains(page, want) {
			t.Errorf("the lanes page lacks %q", want)
		}
	}
}

func TestShowBody(t *testing.T) {
	for _, c := range []struct {
		name, body, kind, shown string
	}{
		{"JSON indented", `{"a":[1,2]}`, "JSON", "{\n  \"a\": [\n    1,\n    2\n  ]\n}"},
		{"text as is", "a=1&b=<x>", "text", "a=1&b=<x>"},
		{"binary as a hex dump", "\x00\xff\x10PK", "binary, 5 bytes", "00000000  00 ff 10 50 4b                                    |...PK|\n"},
		{"empty", "", "empty", ""},
	} {
		shown, kind := showBody([]byte(c.body))
		if shown != c.shown || kind != c.kind {
			t.Errorf("%s: %q as %q, want %q as %q", c.name, shown, kind, c.shown, c.kind)
		}
	}
}

// reconcileMetrics answers the reconcile metrics of two runs.
type reconcileMetrics struct{ runs []time.Time }

func (m reconcileMetrics) GetMetricData(_ context.Context, in *cloudwatch.GetMetricDataInput, _ ...func(*cloudwatch.Options)) (*cloudwatch.GetMetricDataOutput, error) {
	values := map[string][]float64{"listed": {40, 38}, "missing": {0, 2}, "brought": {0, 2}, "old": {0, 0}, "skipped": {0, 0}, "stopped": {1, 0}}
	var out cloudwatch.GetMetricDataOutput
	for _, q := range in.MetricDataQueries {
		out.MetricDataResults = append(out.MetricDataResults, cwtypes.MetricDataResult{Id: q.Id, Timestamps: m.runs, Values: values[aws.ToString(q.Id)]})
	}
	return &out, nil
}

// TestReconcilePageShowsRuns: each reconciling source's watermark and its
// runs, newest first, with what each found.
func TestReconcilePageShowsRuns(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	if page := f.do("GET", "/reconcile", auth, nil).Body.String(); !strings.Contains(page, "No source of this stack reconciles") {
		t.Errorf("without reconciling sources the page says:\n%s", page)
	}
	f.s.op.Resources.Reconciling = []string{"stripe"}
	wm := &reconcile.MemoryWatermarks{}
	if err := wm.Save(context.Background(), "stripe", testNow.Add(-20*time.Minute)); err != nil {
		t.Fatal(err)
	}
	f.s.op.Watermarks = wm
	f.s.op.Metrics = reconcileMetrics{runs: []time.Time{testNow.Add(-15 * time.Minute), testNow.Add(-30 * time.Minute)}}
	w := f.do("GET", "/reconcile", auth, nil)
	page := w.Body.String()
	if w.Code != http.StatusOK {
		t.Fatalf("%d %s", w.Code, page)
	}
	first, second := strings.Index(page, "2026-05-01 11:45:00 UTC"), strings.Index(page, "2026-05-01 11:30:00 UTC")
	if first < 0 || second < 0 || first > second {
		t.Errorf("the runs are not listed newest first:\n%s", page)
	}
	for _, want := range []string{`id="reconcile-stripe"`, "Watermark: <time datetime=\"2026-05-01T11:40:00Z\"", "stopped", "found missing events", "<td>38</td><td>2</td><td>2</td>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the reconcile page lacks %q", want)
		}
	}
}

// TestEventsPageSaysWhenThereIsNoTimeIndex: on a stack without the time
// index the events page lists the window from a scan of the table and
// says so once; with the index it says nothing of the kind.
func TestEventsPageSaysWhenThereIsNoTimeIndex(t *testing.T) {
	f := newFixture(t, false)
	auth := f.login(t)
	page := f.do("GET", "/events?since=2h", auth, nil).Body.String()
	if strings.Contains(page, "no time index") || !strings.Contains(page, "time-index item(s)") {
		t.Errorf("with the index, the page speaks of none:\n%s", page)
	}
	records := f.s.op.Recent.(*dedupe.Memory)
	f.s.op.Resources.Unindexed, f.s.op.Recent = true, records.Scan()
	w := f.do("GET", "/events?since=2h", auth, nil)
	page = w.Body.String()
	if w.Code != http.StatusOK || strings.Count(page, "this deployment has no time index") != 1 || !strings.Contains(page, `id="no-time-index"`) ||
		!strings.Contains(page, "/events/"+eventID) || !strings.Contains(page, "of the whole table") {
		t.Errorf("without the index: %d, want the event listed and the note once:\n%s", w.Code, page)
	}
}
