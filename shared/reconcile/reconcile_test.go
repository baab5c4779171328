package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/reconcile"
)

// now is the tests' clock: fixed, so windows are exact.
var now = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

const stripeKey = "rk_test_reconcile"

// records is a memory of which delivery records exist.
type records struct {
	mu   sync.Mutex
	keys map[string]bool
	err  error
	read int
}

func (r *records) Present(_ context.Context, keys []string) (map[string]bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.read += len(keys)
	if r.err != nil {
		return nil, r.err
	}
	out := map[string]bool{}
	for _, k := range keys {
		out[k] = r.keys[k]
	}
	return out, nil
}

func (r *records) add(keys ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.keys == nil {
		r.keys = map[string]bool{}
	}
	for _, k := range keys {
		r.keys[k] = true
	}
}

// publisher records what was published; deliver adds each destination's
// record as the lanes would.
type publisher struct {
	mu        sync.Mutex
	published []ingest.Reconciled
	err       error
	deliver   func(ingest.Reconciled)
}

func (p *publisher) PublishReconciled(_ context.Context, r ingest.Reconciled) (ingest.Published, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err != nil {
		return ingest.Published{}, p.err
	}
	var ev struct{ ID, Type string }
	if err := json.Unmarshal(r.Body, &ev); err != nil {
		return ingest.Published{}, errors.Join(ingest.ErrReconciledEvent, err)
	}
	p.published = append(p.published, r)
	if p.deliver != nil {
		p.deliver(r)
	}
	return ingest.Published{ID: ingest.EventID(r.Source, ev.ID), Type: ev.Type, ProviderID: ev.ID}, nil
}

func (p *publisher) ids(t *testing.T) []string {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []string
	for _, r := range p.published {
		var ev struct{ ID string }
		if err := json.Unmarshal(r.Body, &ev); err != nil {
			t.Fatal(err)
		}
		out = append(out, ev.ID)
	}
	slices.Sort(out)
	return out
}

type secrets map[string]string

func (s secrets) Value(_ context.Context, name string) (string, error) {
	v, ok := s[name]
	if !ok {
		return "", errors.New("secret " + name + " not found")
	}
	return v, nil
}

type sink struct {
	mu     sync.Mutex
	points []metrics.Point
}

func (s *sink) Publish(_ context.Context, p []metrics.Point) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.points = append(s.points, p...)
	return nil
}

func (s *sink) value(name string) float64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	v := 0.0
	for _, p := range s.points {
		if p.Name == name {
			v += p.Value
		}
	}
	return v
}

// rig is a Reconciler over fakes, with a Stripe source "stripe" (its API
// served by api) and destinations "orders" (payment_intent.*) and
// "refunds" (charge.refunded).
type rig struct {
	r     *reconcile.Reconciler
	rec   *records
	pub   *publisher
	wm    *reconcile.MemoryWatermarks
	sink  *sink
	clock time.Time
}

func stripeConfig(api string, destinations string) *config.Config {
	if destinations == "" {
		destinations = `[{"name": "orders", "url": "https://orders.example.com/h", "filter": {"types": ["payment_intent.*"]}},
		 {"name": "refunds", "url": "https://refunds.example.com/h", "filter": {"sources": ["stripe"], "types": ["charge.refunded"]}}]`
	}
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"},
		"reconcile": {"secretName": "hookfan/reconcile/stripe", "apiUrl": "` + api + `"}}],
		"destinations": ` + destinations + `}`))
	if err != nil {
		panic(err)
	}
	return cfg
}

func newRig(t *testing.T, cfg *config.Config, client *http.Client) *rig {
	t.Helper()
	rg := &rig{rec: &records{}, pub: &publisher{}, wm: &reconcile.MemoryWatermarks{}, sink: &sink{}, clock: now}
	if client == nil {
		client = reconcile.NewHTTPClient(10 * time.Second)
	}
	r, err := reconcile.Assemble(cfg, reconcile.Clients{
		HTTP: client, Secrets: secrets{"hookfan/reconcile/stripe": stripeKey, "hookfan/reconcile/github": "ghp_fake"},
		Records: rg.rec, Publisher: rg.pub, Watermarks: rg.wm, Metrics: rg.sink,
		Now: func() time.Time { return rg.clock },
	})
	if err != nil {
		t.Fatal(err)
	}
	rg.r = r
	return rg
}

func newStripe(t *testing.T) (*fakeprovider.Stripe, *httptest.Server) {
	t.Helper()
	fake := &fakeprovider.Stripe{Key: stripeKey, Now: func() time.Time { return now }}
	srv := httptest.NewServer(fake)
	t.Cleanup(srv.Close)
	return fake, srv
}

func key(dest, providerID string) string {
	return dedupe.Key(dest, ingest.EventID("stripe", providerID))
}

// TestStripeBringsInWhatIsMissing: of the events the destinations want,
// those without a record are published, once; the rest are present;
// types no destination wants are not listed at all.
func TestStripeBringsInWhatIsMissing(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	var want []string
	for i := range 6 {
		ev := fake.NewEvent("payment_intent.succeeded", now.Add(-time.Duration(i+3)*time.Hour), nil)
		if i%2 == 0 {
			rg.rec.add(key("orders", ev.ID))
		} else {
			want = append(want, ev.ID)
		}
	}
	refund := fake.NewEvent("charge.refunded", now.Add(-time.Hour), nil)
	want = append(want, refund.ID)
	fake.NewEvent("customer.created", now.Add(-time.Hour), nil) // nobody's
	slices.Sort(want)

	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	// A prefix and an exact type cannot be one query: every type is
	// listed, and the customer event is nobody's.
	if rep.Listed != 8 || rep.Present != 3 || rep.Missing != 4 || rep.BroughtIn != 4 || rep.Skipped != 0 || rep.Unwanted != 1 {
		t.Errorf("report %+v; want 8 listed, 3 present, 4 missing and brought in, 1 unwanted", rep)
	}
	if got := rg.pub.ids(t); !slices.Equal(got, want) {
		t.Errorf("published %v; want %v", got, want)
	}
	if wantSince := now.Add(-config.DefaultReconcileLookback); !rep.Since.Equal(wantSince) || !rep.Until.Equal(now.Add(-reconcile.Settle)) {
		t.Errorf("window %s to %s; want the lookback (%s) to now less the settling time", rep.Since, rep.Until, wantSince)
	}
	if !rep.Watermark.Equal(rep.Until) || !rg.wm.Snapshot()["stripe"].Equal(rep.Until) {
		t.Errorf("watermark %s (saved %s); want %s", rep.Watermark, rg.wm.Snapshot()["stripe"], rep.Until)
	}
	if rg.sink.value(metrics.ReconcileMissing) != 4 || rg.sink.value(metrics.ReconcileBroughtIn) != 4 || rg.sink.value(metrics.ReconcileStopped) != 0 {
		t.Errorf("metrics %+v", rg.sink.points)
	}
}

// TestStripeSecondRunBringsInNone: once brought in (and delivered), an
// event is present; the second run starts from the watermark less the
// overlap and brings in nothing.
func TestStripeSecondRunBringsInNone(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	rg.pub.deliver = func(r ingest.Reconciled) {
		var ev struct{ ID string }
		_ = json.Unmarshal(r.Body, &ev)
		rg.rec.add(key("orders", ev.ID))
	}
	fake.NewEvent("payment_intent.created", now.Add(-10*time.Minute), nil)
	if rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{}); err != nil || rep.BroughtIn != 1 {
		t.Fatalf("first run %+v, %v; want one brought in", rep, err)
	}
	rg.clock = now.Add(15 * time.Minute)
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 1 || rep.Present != 1 || rep.BroughtIn != 0 {
		t.Errorf("second run %+v; want the event listed again (overlap) and present", rep)
	}
	if want := now.Add(-reconcile.Settle - reconcile.Overlap); !rep.Since.Equal(want) {
		t.Errorf("second run since %s; want the watermark less the overlap, %s", rep.Since, want)
	}
}

// TestStripePastLookback: a missing event older than the lookback is
// reported, never brought in, even when an operator lists further back.
func TestStripePastLookback(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	old := fake.NewEvent("payment_intent.created", now.Add(-100*time.Hour), nil)
	recent := fake.NewEvent("payment_intent.created", now.Add(-time.Hour), nil)
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{Since: now.Add(-120 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 2 || rep.Missing != 2 || rep.OutOfRetention != 1 || rep.BroughtIn != 1 {
		t.Errorf("report %+v; want 2 missing, 1 past the lookback, 1 brought in", rep)
	}
	if got := rg.pub.ids(t); !slices.Equal(got, []string{recent.ID}) {
		t.Errorf("published %v; want only %s (not %s)", got, recent.ID, old.ID)
	}
	// A first scheduled run never lists it: its window starts at the
	// lookback.
	rep, _ = newRig(t, stripeConfig(srv.URL, ""), nil).r.Run(context.Background(), "stripe", reconcile.Options{DryRun: true})
	if rep.Listed != 1 || rep.OutOfRetention != 0 {
		t.Errorf("scheduled run %+v; want the recent event alone listed", rep)
	}
}

// TestDryRunChangesNothing: a dry run counts what is missing, publishes
// nothing and saves no watermark.
func TestDryRunChangesNothing(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	fake.NewEvent("payment_intent.created", now.Add(-time.Hour), nil)
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Missing != 1 || rep.BroughtIn != 0 || len(rg.pub.ids(t)) != 0 || !rep.Watermark.IsZero() || len(rg.wm.Snapshot()) != 0 {
		t.Errorf("dry run %+v, published %v, watermarks %v; want one missing and nothing done", rep, rg.pub.ids(t), rg.wm.Snapshot())
	}
}

// TestUnwanted: an event no destination takes is neither present nor
// missing, and no record is read for it.
func TestUnwanted(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, `[{"name": "big", "url": "https://big.example.com/h", "filter": {"body": {"data": {"object": {"amount": [{"numeric": [">", 100]}]}}}}}]`), nil)
	fake.NewEvent("charge.succeeded", now.Add(-time.Hour), json.RawMessage(`{"amount": 5}`))
	big := fake.NewEvent("charge.succeeded", now.Add(-time.Hour), json.RawMessage(`{"amount": 500}`))
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 2 || rep.Unwanted != 1 || rep.Missing != 1 || rg.rec.read != 1 {
		t.Errorf("report %+v, %d records read; want one unwanted (its body filter), one missing, one read", rep, rg.rec.read)
	}
	if got := rg.pub.ids(t); !slices.Equal(got, []string{big.ID}) {
		t.Errorf("published %v; want %s", got, big.ID)
	}
}

// TestPagesThroughTheWindow: more events than a page are all listed, each
// once.
func TestPagesThroughTheWindow(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	for i := range 250 {
		fake.NewEvent("payment_intent.created", now.Add(-time.Hour-time.Duration(i%7)*time.Second), nil)
	}
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 250 || rep.BroughtIn != 250 || len(slices.Compact(rg.pub.ids(t))) != 250 {
		t.Errorf("report %+v; want 250 listed and brought in, each once", rep)
	}
}

// TestStopsOnFailedPublish: a publish that fails stops the run and saves
// no watermark; what was published stays, and the next run's records
// deduplicate it.
func TestStopsOnFailedPublish(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	fake.NewEvent("payment_intent.created", now.Add(-time.Hour), nil)
	rg.pub.err = errors.New("sns: throttled")
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if !errors.Is(err, reconcile.ErrStopped) || rep.Stopped != reconcile.ReasonPublish || len(rg.wm.Snapshot()) != 0 {
		t.Errorf("run %+v, %v; want stopped on publish, no watermark", rep, err)
	}
	if rg.sink.value(metrics.ReconcileStopped) != 1 {
		t.Errorf("ReconcileStopped %v; want 1", rg.sink.value(metrics.ReconcileStopped))
	}
}

func TestUnknownSource(t *testing.T) {
	_, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	if _, err := rg.r.Run(context.Background(), "nope", reconcile.Options{}); !errors.Is(err, reconcile.ErrUnknownSource) {
		t.Errorf("error %v; want ErrUnknownSource", err)
	}
}

// hostile serves a Stripe-shaped API that misbehaves as handle says.
func hostile(t *testing.T, handle http.HandlerFunc) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(handle)
	t.Cleanup(srv.Close)
	return srv
}

func page(events []string, more bool) string {
	b, _ := json.Marshal(map[string]any{"object": "list", "data": json.RawMessage("[" + strings.Join(events, ",") + "]"), "has_more": more})
	return string(b)
}

func event(id, typ string, created time.Time) string {
	b, _ := json.Marshal(map[string]any{"id": id, "object": "event", "type": typ, "created": created.Unix(), "data": map[string]any{"object": map[string]any{}}})
	return string(b)
}

// TestHostileAnswers: whatever the API answers, the run stops or skips
// with its reason, and publishes nothing malformed.
func TestHostileAnswers(t *testing.T) {
	at := now.Add(-time.Hour)
	good := event("evt_good1", "payment_intent.created", at)
	tests := []struct {
		name      string
		handle    http.HandlerFunc
		stopped   string
		skipped   int
		published int
	}{
		{"401", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{"error":{}}`, http.StatusUnauthorized) }, reconcile.ReasonUnauthorized, 0, 0},
		{"429", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Retry-After", "30")
			http.Error(w, `{}`, http.StatusTooManyRequests)
		}, reconcile.ReasonRateLimited, 0, 0},
		{"500", func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{}`, http.StatusInternalServerError) }, reconcile.ReasonHTTPStatus, 0, 0},
		{"redirect", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "http://127.0.0.1:1/v1/events", http.StatusFound)
		}, reconcile.ReasonHTTPStatus, 0, 0},
		{"not JSON", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "<html>maintenance</html>") }, reconcile.ReasonBadPage, 0, 0},
		{"not a list", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, `{"object":"event","data":[]}`) }, reconcile.ReasonBadPage, 0, 0},
		{"has_more without data", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page(nil, true)) }, reconcile.ReasonBadPage, 0, 0},
		{"the same page forever", func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, page([]string{good}, true)) }, reconcile.ReasonBadPage, 0, 1},
		{"new pages forever", func() http.HandlerFunc {
			var mu sync.Mutex
			n := 0
			return func(w http.ResponseWriter, _ *http.Request) {
				mu.Lock()
				n++
				id := "evt_loop" + strings.Repeat("x", n%5) + string(rune('a'+n%26)) + strings.Repeat("0", n/26%10)
				mu.Unlock()
				io.WriteString(w, page([]string{event(id+time.Now().Format("150405.000000000")[7:], "payment_intent.created", at)}, true))
			}
		}(), reconcile.ReasonPageCap, 0, -1},
		{"huge body", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, `{"object":"list","data":[],"pad":"`)
			chunk := strings.Repeat("a", 1<<20)
			for range reconcile.MaxBodyBytes>>20 + 1 {
				if _, err := io.WriteString(w, chunk); err != nil {
					return
				}
			}
			io.WriteString(w, `"}`)
		}, reconcile.ReasonTooLarge, 0, 0},
		{"bad events skipped", func(w http.ResponseWriter, _ *http.Request) {
			io.WriteString(w, page([]string{
				`"just a string"`,
				`{"id":"evt_nope","object":"event","created":1}`,                           // no type
				`{"id":"../../etc","object":"event","type":"x","created":1}`,               // wrong-shaped id
				`{"id":"evt_dup","id":"evt_dup2","object":"event","type":"x","created":1}`, // duplicate key
				`{"id":"evt_ctl","object":"event","type":"a\u0000b","created":1}`,          // control in type
				`{"id":"evt_notevent","object":"charge","type":"x","created":1}`,
				good,
			}, false))
		}, "", 6, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := hostile(t, tt.handle)
			rg := newRig(t, stripeConfig(srv.URL, `[{"name": "all", "url": "https://all.example.com/h"}]`), nil)
			rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
			if rep.Stopped != tt.stopped || (tt.stopped != "") != errors.Is(err, reconcile.ErrStopped) {
				t.Errorf("stopped %q (%v); want %q", rep.Stopped, err, tt.stopped)
			}
			if rep.Skipped != tt.skipped {
				t.Errorf("skipped %d (%v); want %d", rep.Skipped, rep.Reasons, tt.skipped)
			}
			if got := len(rg.pub.ids(t)); tt.published >= 0 && got != tt.published {
				t.Errorf("published %d; want %d", got, tt.published)
			}
			for _, r := range rg.pub.ids(t) {
				if !strings.HasPrefix(r, "evt_") {
					t.Errorf("published %q", r)
				}
			}
			if tt.stopped != "" && len(rg.wm.Snapshot()) != 0 {
				t.Errorf("a stopped run saved its watermark")
			}
			if len(rep.Reasons) == 0 && (tt.stopped != "" || tt.skipped > 0) {
				t.Errorf("no reason recorded")
			}
		})
	}
}

// TestTimeout: an API that never answers stops the run as a timeout.
func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	defer close(release)
	rg := newRig(t, stripeConfig(srv.URL, ""), reconcile.NewHTTPClient(50*time.Millisecond))
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if rep.Stopped != reconcile.ReasonTimeout || !errors.Is(err, reconcile.ErrStopped) {
		t.Errorf("stopped %q, %v; want timeout", rep.Stopped, err)
	}
}

// TestRecordsUnavailable: without the records, nothing can be judged:
// the run stops.
func TestRecordsUnavailable(t *testing.T) {
	fake, srv := newStripe(t)
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	fake.NewEvent("payment_intent.created", now.Add(-time.Hour), nil)
	rg.rec.err = errors.New("dynamodb: throttled")
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if rep.Stopped != reconcile.ReasonRecords || !errors.Is(err, reconcile.ErrStopped) || len(rg.pub.ids(t)) != 0 {
		t.Errorf("run %+v, %v; want stopped on records, nothing published", rep, err)
	}
}

// TestWrongKey: the fake refuses another key, as Stripe does.
func TestWrongKey(t *testing.T) {
	fake, srv := newStripe(t)
	fake.Key = "rk_test_other"
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	rep, _ := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if rep.Stopped != reconcile.ReasonUnauthorized {
		t.Errorf("stopped %q; want unauthorized", rep.Stopped)
	}
}

// TestStripeListsOnlyWantedTypes: when the destinations want exact types
// only, the query asks for those (types[]), and the API lists no other.
func TestStripeListsOnlyWantedTypes(t *testing.T) {
	fake, srv := newStripe(t)
	var queries []string
	var mu sync.Mutex
	spy := hostile(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		queries = append(queries, r.URL.RawQuery)
		mu.Unlock()
		fake.ServeHTTP(w, r)
	})
	_ = srv
	rg := newRig(t, stripeConfig(spy.URL, `[{"name": "refunds", "url": "https://refunds.example.com/h", "filter": {"types": ["charge.refunded", "charge.failed"]}}]`), nil)
	fake.NewEvent("charge.refunded", now.Add(-time.Hour), nil)
	fake.NewEvent("charge.succeeded", now.Add(-time.Hour), nil)
	rep, err := rg.r.Run(context.Background(), "stripe", reconcile.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Listed != 1 || rep.BroughtIn != 1 || rep.Unwanted != 0 {
		t.Errorf("report %+v; want the refund alone listed and brought in", rep)
	}
	if len(queries) != 1 || !strings.Contains(queries[0], "types%5B%5D=charge.refunded") || !strings.Contains(queries[0], "types%5B%5D=charge.failed") {
		t.Errorf("queries %v; want types[] of both", queries)
	}
}

// TestHandle: the function answers a stopped run with its report, and an
// unknown source with an error.
func TestHandle(t *testing.T) {
	srv := hostile(t, func(w http.ResponseWriter, _ *http.Request) { http.Error(w, `{}`, http.StatusUnauthorized) })
	rg := newRig(t, stripeConfig(srv.URL, ""), nil)
	rep, err := rg.r.Handle(context.Background(), reconcile.Invocation{Source: "stripe", DryRun: true})
	if err != nil || rep.Stopped != reconcile.ReasonUnauthorized || !rep.DryRun {
		t.Errorf("report %+v, %v; want the stopped report, no error", rep, err)
	}
	b, _ := json.Marshal(rep)
	if !strings.Contains(string(b), `"stopped":"unauthorized"`) || !strings.Contains(string(b), `"dryRun":true`) {
		t.Errorf("report JSON %s", b)
	}
	if _, err := rg.r.Handle(context.Background(), reconcile.Invocation{Source: "nope"}); !errors.Is(err, reconcile.ErrUnknownSource) {
		t.Errorf("unknown source: %v", err)
	}
	var inv reconcile.Invocation
	if err := json.Unmarshal([]byte(`{"source": "stripe", "since": "2026-12-01T10:00:00Z", "dryRun": true}`), &inv); err != nil || !inv.Since.Equal(now.Add(-2*time.Hour)) || !inv.DryRun {
		t.Errorf("invocation %+v, %v", inv, err)
	}
}
