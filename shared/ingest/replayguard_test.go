package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
)

// spyGuard records the replay store calls it passes on, and fails them on
// demand.
type spyGuard struct {
	next *replayguard.Memory

	mu                                   sync.Mutex
	claims                               []replayguard.ClaimInput
	confirms, releases, gets             int
	claimErr, confirmErr, relErr, getErr error
}

func (g *spyGuard) Claim(ctx context.Context, in replayguard.ClaimInput) (replayguard.Lease, error) {
	g.mu.Lock()
	g.claims = append(g.claims, in)
	err := g.claimErr
	g.mu.Unlock()
	if err != nil {
		return replayguard.Lease{}, err
	}
	return g.next.Claim(ctx, in)
}

func (g *spyGuard) Confirm(ctx context.Context, l replayguard.Lease, at time.Time) error {
	g.mu.Lock()
	g.confirms++
	err := g.confirmErr
	g.mu.Unlock()
	if err != nil {
		return err
	}
	return g.next.Confirm(ctx, l, at)
}

func (g *spyGuard) Get(ctx context.Context, key string) (replayguard.Record, bool, error) {
	g.mu.Lock()
	g.gets++
	err := g.getErr
	g.mu.Unlock()
	if err != nil {
		return replayguard.Record{}, false, err
	}
	return g.next.Get(ctx, key)
}

func (g *spyGuard) Release(ctx context.Context, l replayguard.Lease) error {
	g.mu.Lock()
	g.releases++
	err := g.relErr
	g.mu.Unlock()
	if err != nil {
		return err
	}
	return g.next.Release(ctx, l)
}

// newReplayRig is a rig whose replay store is spied on.
func newReplayRig(t *testing.T, sources []config.Source) (*rig, *spyGuard) {
	t.Helper()
	r := newRig(t, nil)
	g := &spyGuard{next: replayguard.NewMemory()}
	for _, s := range sources {
		r.sec.values[s.Verify.SecretName] = []string{secretOf(s.Name)}
	}
	h, err := ingest.New(ingest.Options{
		Sources: sources, TopicARN: topicARN, Publisher: r.pub, Secrets: r.sec, Metrics: metrics.NewRecorder(r.met),
		Replay: g, Logger: slog.New(slog.NewJSONHandler(r.log, nil)), Now: func() time.Time { return r.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r, g
}

// withHeader returns a copy of req with the header set, as a replayer
// edits a captured request: the signature stays the captured one.
func withHeader(req eventsRequest, name, value string) eventsRequest {
	req.Headers, req.MultiValueHeaders = maps.Clone(req.Headers), maps.Clone(req.MultiValueHeaders)
	for k := range req.Headers {
		if strings.EqualFold(k, name) {
			delete(req.Headers, k)
		}
	}
	for k := range req.MultiValueHeaders {
		if strings.EqualFold(k, name) {
			delete(req.MultiValueHeaders, k)
		}
	}
	req.Headers[name], req.MultiValueHeaders[name] = value, []string{value}
	return req
}

// publishedIDs are the id attributes of what was published, in order.
func (r *rig) publishedIDs() []string {
	var ids []string
	for _, in := range r.pub.published() {
		ids = append(ids, attr(in, "id")+" "+attr(in, "type"))
	}
	return ids
}

// TestReplayAnsweredAsOriginal: a captured signed request sent again —
// under a new event id, re-typed, with its signature re-spelled — is
// answered 202 with the original's id and not published; what a replayer
// cannot forge (another body) is a new event.
func TestReplayAnsweredAsOriginal(t *testing.T) {
	type send struct {
		name   string
		edit   func(eventsRequest) eventsRequest
		sample func() events.Sample // another body, signed anew; nil: the captured request
		want   string               // "original", or "new" for a new event, published
	}
	header := func(name, value string) func(eventsRequest) eventsRequest {
		return func(req eventsRequest) eventsRequest { return withHeader(req, name, value) }
	}
	otherBody := func(kind, name string) func() events.Sample {
		return func() events.Sample {
			s := events.MustLoad(kind, name)
			s.Body = append([]byte(`{"note":"another event",`), s.Body[1:]...)
			return s
		}
	}
	tests := []struct {
		source, kind, sample string
		sends                []send
	}{
		{"github", "github", "push", []send{
			{"new delivery id", header("X-GitHub-Delivery", "0d5bf6a2-0000-4000-8000-000000000001"), nil, "original"},
			{"another new delivery id", header("X-GitHub-Delivery", "0d5bf6a2-0000-4000-8000-000000000002"), nil, "original"},
			{"re-typed", header("X-GitHub-Event", "release"), nil, "original"},
			{"signature in upper-case hex", func(req eventsRequest) eventsRequest {
				sig := req.Headers["X-Hub-Signature-256"]
				return withHeader(req, "X-Hub-Signature-256", "sha256="+strings.ToUpper(strings.TrimPrefix(sig, "sha256=")))
			}, nil, "original"},
			{"the provider's own resend", nil, nil, "original"},
			{"another push", header("X-GitHub-Delivery", "0d5bf6a2-0000-4000-8000-000000000003"), otherBody("github", "push"), "new"},
		}},
		{"shopify", "shopify", "orders.create", []send{
			{"new webhook id", header("X-Shopify-Webhook-Id", "c0ffee00-0000-4000-8000-000000000001"), nil, "original"},
			{"the same order under another topic", func(req eventsRequest) eventsRequest {
				return withHeader(withHeader(req, "X-Shopify-Topic", "orders/paid"), "X-Shopify-Webhook-Id", "c0ffee00-0000-4000-8000-000000000002")
			}, nil, "original"},
			{"another order", header("X-Shopify-Webhook-Id", "c0ffee00-0000-4000-8000-000000000003"), otherBody("shopify", "orders.create"), "new"},
		}},
		{"hmac", "hmac", "order.created", []send{
			{"resent", nil, nil, "original"},
		}},
		{"token", "token", "build.finished", []send{
			{"new request id", header("X-Request-Id", "f00d0000-0000-4000-8000-000000000001"), nil, "original"},
			{"another body", header("X-Request-Id", "f00d0000-0000-4000-8000-000000000002"), otherBody("token", "build.finished"), "new"},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			r, g := newReplayRig(t, []config.Source{sourceConfig(t, tt.source)})
			captured := signed(t, tt.source, tt.kind, tt.sample, r.now)
			original := acceptedID(t, r.do(t, captured))
			published := 1
			for _, s := range tt.sends {
				req := captured
				if s.sample != nil {
					req = signSample(t, tt.source, s.sample(), r.now)
				}
				if s.edit != nil {
					req = s.edit(req)
				}
				r.now = r.now.Add(time.Minute)
				id := acceptedID(t, r.do(t, req))
				switch s.want {
				case "original":
					if id != original {
						t.Errorf("%s: answered %s, want the original's %s", s.name, id, original)
					}
				default:
					published++
					if id == original {
						t.Errorf("%s: answered the original's id, want a new event", s.name)
					}
				}
				if got := len(r.pub.published()); got != published {
					t.Errorf("%s: %d messages published, want %d", s.name, got, published)
				}
			}
			if len(g.claims) != 1+len(tt.sends) {
				t.Errorf("%d claims, want one per request", len(g.claims))
			}
		})
	}
}

// TestReplayUnsignedHeaderVariants: for every kind with replay protection,
// a captured request whose unsigned headers a replayer rewrote — each
// header alone, then all at once — gets exactly the original's answer
// (status, headers and body: 202 with the original's id) and publishes
// nothing — also when the rewrite leaves it naming no usable event (an id
// or type removed, or one SQS refuses). The signature covers the body
// alone, so nothing else may tell a copy from the original (issue 19,
// point 3: Shopify's topic).
func TestReplayUnsignedHeaderVariants(t *testing.T) {
	type variant struct {
		name string
		edit func(h http.Header)
	}
	set := func(name, value string) func(http.Header) {
		return func(h http.Header) { h.Set(name, value) }
	}
	del := func(name string) func(http.Header) {
		return func(h http.Header) { h.Del(name) }
	}
	// respell keeps a header's value under a lower-case name, as another
	// client or proxy spells it.
	respell := func(name string) func(http.Header) {
		return func(h http.Header) {
			v := h.Values(name)
			h.Del(name)
			h[strings.ToLower(name)] = v
		}
	}
	repeat := func(name string) func(http.Header) {
		return func(h http.Header) { h.Add(name, h.Get(name)) }
	}
	// common are the edits every kind's copy may carry: headers no kind signs.
	common := []variant{
		{"another user agent", set("User-Agent", "curl/8.11.1")},
		{"another content type", set("Content-Type", "text/plain")},
		{"no content type", del("Content-Type")},
		{"a forwarded-for", set("X-Forwarded-For", "203.0.113.7")},
	}
	hmacHeaders := config.Source{Name: "hmac-headers", Verify: config.Verify{Kind: provider.HMAC, SecretName: "hookfan/sources/hmac-headers",
		Header: "X-Acme-Signature", Algorithm: "sha512", Encoding: "base64", Prefix: "sha512="},
		Event: config.EventFields{IDHeader: "X-Acme-Id", TypeHeader: "X-Acme-Event"}}
	tests := []struct {
		source   config.Source
		sample   string
		header   map[string]string // set on the sample before it is signed
		variants []variant
	}{
		{sourceConfig(t, "github"), "github/push", nil, []variant{
			{"new delivery id", set("X-GitHub-Delivery", "0d5bf6a2-0000-4000-8000-0000000000aa")},
			{"another event", set("X-GitHub-Event", "release")},
			{"re-cased event", set("X-GitHub-Event", "Push")},
			{"event with a dot", set("X-GitHub-Event", "push.")},
			{"another hook id", set("X-GitHub-Hook-ID", "1")},
			{"the delivery header respelled", respell("X-GitHub-Delivery")},
			{"the event header repeated", repeat("X-GitHub-Event")},
			{"the signature repeated", repeat("X-Hub-Signature-256")},
			{"the signature in upper-case hex", func(h http.Header) {
				h.Set("X-Hub-Signature-256", "sha256="+strings.ToUpper(strings.TrimPrefix(h.Get("X-Hub-Signature-256"), "sha256=")))
			}},
			{"no legacy sha1 signature", del("X-Hub-Signature")},
			{"a wrong legacy sha1 signature", set("X-Hub-Signature", "sha1="+strings.Repeat("0", 40))},
			{"no delivery id", del("X-GitHub-Delivery")},
			{"no event", del("X-GitHub-Event")},
			{"an event SQS refuses", set("X-GitHub-Event", "push\x01")},
			{"a delivery id over 256 bytes", set("X-GitHub-Delivery", strings.Repeat("d", 257))},
		}},
		{sourceConfig(t, "shopify"), "shopify/orders.create", nil, []variant{
			{"new webhook id", set("X-Shopify-Webhook-Id", "c0ffee00-0000-4000-8000-0000000000aa")},
			{"re-cased topic", set("X-Shopify-Topic", "orders/Create")},
			{"topic with a dot", set("X-Shopify-Topic", "orders/create.")},
			{"invented topic", set("X-Shopify-Topic", "orders/x")},
			{"another real topic", set("X-Shopify-Topic", "orders/paid")},
			{"the topic header respelled", respell("X-Shopify-Topic")},
			{"another shop", set("X-Shopify-Shop-Domain", "other-shop.myshopify.com")},
			{"another api version", set("X-Shopify-API-Version", "2020-01")},
			{"new triggered-at", set("X-Shopify-Triggered-At", "2030-01-01T00:00:00Z")},
			{"new event id", set("X-Shopify-Event-Id", "00000000-0000-4000-8000-000000000000")},
			{"the signature in url-safe base64", func(h http.Header) {
				h.Set("X-Shopify-Hmac-Sha256", strings.NewReplacer("+", "-", "/", "_").Replace(h.Get("X-Shopify-Hmac-Sha256")))
			}},
			{"the signature unpadded", func(h http.Header) {
				h.Set("X-Shopify-Hmac-Sha256", strings.TrimRight(h.Get("X-Shopify-Hmac-Sha256"), "="))
			}},
			{"no topic", del("X-Shopify-Topic")},
			{"no webhook id", del("X-Shopify-Webhook-Id")},
			{"a topic SQS refuses", set("X-Shopify-Topic", "orders/\x7f")},
		}},
		{hmacHeaders, "hmac/order.created", map[string]string{"X-Acme-Id": "acme-1", "X-Acme-Event": "order.created"}, []variant{
			{"new id", set("X-Acme-Id", "acme-2")},
			{"another type", set("X-Acme-Event", "order.refunded")},
			{"re-cased type", set("X-Acme-Event", "Order.Created")},
			{"the type header respelled", respell("X-Acme-Event")},
			{"no id", del("X-Acme-Id")},
			{"no type", del("X-Acme-Event")},
			{"the signature in url-safe base64", func(h http.Header) {
				h.Set("X-Acme-Signature", strings.NewReplacer("+", "-", "/", "_").Replace(h.Get("X-Acme-Signature")))
			}},
		}},
		{sourceConfig(t, "hmac"), "hmac/order.created", nil, nil},
		{sourceConfig(t, "token"), "token/build.finished", nil, []variant{
			{"new request id", set("X-Request-Id", "f00d0000-0000-4000-8000-0000000000aa")},
			{"the id header respelled", respell("X-Request-Id")},
			{"the token repeated", repeat("X-Hook-Token")},
			{"no request id", del("X-Request-Id")},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.source.Name, func(t *testing.T) {
			r, _ := newReplayRig(t, []config.Source{tt.source})
			kind, name, _ := strings.Cut(tt.sample, "/")
			s := events.MustLoad(kind, name)
			for k, v := range tt.header {
				s.Header.Set(k, v)
			}
			h, err := events.Sign(tt.source.Verify, s, r.now, secretOf(tt.source.Name))
			if err != nil {
				t.Fatal(err)
			}
			want := r.do(t, events.ProxyRequest(tt.source.Name, h, s.Body))
			acceptedID(t, want)
			edits := append(append([]variant(nil), tt.variants...), common...)
			variants := append(edits, variant{"every edit at once", func(h http.Header) {
				for _, v := range edits {
					v.edit(h)
				}
			}})
			for _, v := range variants {
				c := h.Clone()
				v.edit(c)
				r.now = r.now.Add(time.Minute)
				if diff := cmp.Diff(want, r.do(t, events.ProxyRequest(tt.source.Name, c, s.Body))); diff != "" {
					t.Errorf("%s: answer differs from the original's (-original +copy):\n%s", v.name, diff)
				}
			}
			if got := len(r.pub.published()); got != 1 {
				t.Errorf("%d messages published for one request and %d copies, want the original alone", got, len(variants))
			}
		})
	}
}

// TestReplayUnidentifiedRefused: a verified request that names no usable
// event is refused as before unless it is a copy of a published request:
// when nothing was published, when the original is still being published,
// after the window, and when the store cannot be read (nothing is
// published either way; the log says why).
func TestReplayUnidentifiedRefused(t *testing.T) {
	noType := func(req eventsRequest) eventsRequest { return withHeader(req, "X-GitHub-Event", "") }
	t.Run("never published", func(t *testing.T) {
		r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		resp := r.do(t, noType(signed(t, "github", "github", "push", r.now)))
		if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp.Body) != ingest.CodeEventTypeMissing || g.gets != 1 || len(g.claims) != 0 {
			t.Errorf("answer %d %s after %d reads and %d claims, want 400 event_type_missing after one read", resp.StatusCode, resp.Body, g.gets, len(g.claims))
		}
	})
	t.Run("being published", func(t *testing.T) {
		r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		r.pub.err, g.relErr = errBoom, errors.New("throttled") // the record stays PENDING under its lease
		r.do(t, captured)
		if resp := r.do(t, noType(captured)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("answer %d %s, want 400", resp.StatusCode, resp.Body)
		}
	})
	t.Run("after the window", func(t *testing.T) {
		r, _ := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		acceptedID(t, r.do(t, captured))
		r.now = r.now.Add(config.DefaultReplayWindowDays*24*time.Hour + time.Second)
		if resp := r.do(t, noType(captured)); resp.StatusCode != http.StatusBadRequest {
			t.Errorf("answer %d %s, want 400", resp.StatusCode, resp.Body)
		}
	})
	t.Run("store unreadable", func(t *testing.T) {
		r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		acceptedID(t, r.do(t, captured))
		g.getErr = errors.New("operation error DynamoDB: GetItem, ProvisionedThroughputExceededException")
		resp := r.do(t, noType(captured))
		if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp.Body) != ingest.CodeEventTypeMissing {
			t.Errorf("answer %d %s, want 400 event_type_missing", resp.StatusCode, resp.Body)
		}
		if l := r.log.lines(t); !strings.Contains(fmt.Sprint(l[1]["error"]), "replay lookup: operation error DynamoDB") {
			t.Errorf("log = %v", l[1])
		}
		if len(r.pub.published()) != 1 {
			t.Errorf("published %d", len(r.pub.published()))
		}
	})
}

// TestReplayMetricsAndLog: a replay counts IngestReplayBlocked and logs the
// original's id and type with what the copy claimed.
func TestReplayMetricsAndLog(t *testing.T) {
	r, _ := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
	captured := signed(t, "github", "github", "push", r.now)
	original := acceptedID(t, r.do(t, captured))
	copyReq := withHeader(withHeader(captured, "X-GitHub-Delivery", "copy-1"), "X-GitHub-Event", "release")
	resp := r.do(t, copyReq)
	if id := acceptedID(t, resp); id != original || resp.Body != `{"id":"`+original+`"}` {
		t.Errorf("replay answered %s, want exactly the original's answer", resp.Body)
	}
	want := []metric{{Name: metrics.IngestAccepted, Source: "github"}, {Name: metrics.IngestReplayBlocked, Source: "github"}}
	if diff := cmp.Diff(want, r.met.got()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	lines := r.log.lines(t)
	if len(lines) != 2 {
		t.Fatalf("%d log lines", len(lines))
	}
	wantLog := map[string]any{"outcome": "replay_blocked", "level": "WARN", "status": float64(202), "id": original, "type": "push",
		"copy_id": ingest.EventID("github", "copy-1"), "copy_type": "release", "provider_event_id": "copy-1"}
	for k, v := range wantLog {
		if lines[1][k] != v {
			t.Errorf("log %s = %v, want %v", k, lines[1][k], v)
		}
	}
	if strings.Contains(r.log.String(), strings.TrimPrefix(captured.Headers["X-Hub-Signature-256"], "sha256=")) {
		t.Error("the log holds the signature")
	}
}

// TestReplayOnlyForVerifiedRequests: nothing is remembered for a request
// that is refused before it could be published.
func TestReplayOnlyForVerifiedRequests(t *testing.T) {
	r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github"), sourceConfig(t, "small")})
	good := signed(t, "github", "github", "push", r.now)
	for name, req := range map[string]eventsRequest{
		"bad signature":   withHeader(good, "X-Hub-Signature-256", "sha256="+strings.Repeat("0", 64)),
		"no signature":    withHeader(good, "X-Hub-Signature-256", ""),
		"no delivery id":  withHeader(good, "X-GitHub-Delivery", ""),
		"no event header": withHeader(good, "X-GitHub-Event", ""),
	} {
		if resp := r.do(t, req); resp.StatusCode == http.StatusAccepted {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(g.claims) != 0 {
		t.Errorf("%d claims for refused requests", len(g.claims))
	}
	// Once refused, the genuine request is accepted and published.
	acceptedID(t, r.do(t, good))
	if len(r.pub.published()) != 1 {
		t.Errorf("published %d", len(r.pub.published()))
	}
}

// TestReplayOptOutAndTimestampedKinds: a source that turned replay
// protection off, and the timestamped kinds, publish every verified
// request, as before, and never touch the store.
func TestReplayOptOutAndTimestampedKinds(t *testing.T) {
	off := sourceConfig(t, "github")
	no := false
	off.ReplayProtection.Enabled = &no
	r, g := newReplayRig(t, []config.Source{off, sourceConfig(t, "stripe"), sourceConfig(t, "slack"), sourceConfig(t, "standard-webhooks")})
	captured := signed(t, "github", "github", "push", r.now)
	first := acceptedID(t, r.do(t, captured))
	second := acceptedID(t, r.do(t, withHeader(captured, "X-GitHub-Delivery", "another")))
	if first == second {
		t.Error("the opted-out source answered the copy with the original's id")
	}
	for _, s := range [][3]string{{"stripe", "stripe", "payment_intent.succeeded"}, {"slack", "slack", "event_callback.message"}, {"standard-webhooks", "standard-webhooks", "invoice.paid"}} {
		req := signed(t, s[0], s[1], s[2], r.now)
		a, b := acceptedID(t, r.do(t, req)), acceptedID(t, r.do(t, req))
		if a != b {
			t.Errorf("%s: the same request got ids %s and %s", s[0], a, b)
		}
	}
	if got := len(r.pub.published()); got != 2+3*2 {
		t.Errorf("%d published, want every verified request (8)", got)
	}
	if len(g.claims) != 0 {
		t.Errorf("%d claims; opted-out and timestamped sources must not use the store", len(g.claims))
	}
	// Without any protected source, no store is needed.
	if _, err := ingest.New(ingest.Options{Sources: []config.Source{off, sourceConfig(t, "stripe")}, TopicARN: topicARN,
		Publisher: r.pub, Secrets: r.sec, Metrics: metrics.NewRecorder(r.met)}); err != nil {
		t.Errorf("New without a store for unprotected sources: %v", err)
	}
}

// TestReplayPublishFailureThenRetry: a failed publish releases its claim,
// so the provider's retry publishes (under the same id) and is not taken
// for a replay; a copy arriving first publishes the original's event, and
// the provider's retry is then the replay.
func TestReplayPublishFailureThenRetry(t *testing.T) {
	t.Run("the provider's retry publishes", func(t *testing.T) {
		r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		r.pub.err = errBoom
		resp := r.do(t, captured)
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodePublishFailed {
			t.Fatalf("answer %d %s, want 503 publish_failed", resp.StatusCode, resp.Body)
		}
		if g.releases != 1 || g.confirms != 0 {
			t.Errorf("%d releases and %d confirms, want the claim released", g.releases, g.confirms)
		}
		r.pub.err, r.pub.calls = nil, nil
		r.now = r.now.Add(time.Second) // GitHub's redelivery, or Shopify's retry: as soon as it likes
		id := acceptedID(t, r.do(t, captured))
		if id != ingest.EventID("github", "9a1d4f60-cdaf-11f0-8e2b-1f3c5d7e9a0b") {
			t.Errorf("retry answered %s", id)
		}
		if diff := cmp.Diff([]string{id + " push"}, r.publishedIDs()); diff != "" {
			t.Errorf("published (-want +got):\n%s", diff)
		}
		// And now it is remembered.
		if again := acceptedID(t, r.do(t, withHeader(captured, "X-GitHub-Delivery", "copy"))); again != id || len(r.pub.published()) != 1 {
			t.Errorf("copy after the retry: %s, %d published", again, len(r.pub.published()))
		}
	})
	t.Run("a copy first publishes the original", func(t *testing.T) {
		r, _ := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		original := ingest.EventID("github", "9a1d4f60-cdaf-11f0-8e2b-1f3c5d7e9a0b")
		r.pub.err = errBoom
		r.do(t, captured)
		r.pub.err, r.pub.calls = nil, nil
		copyReq := withHeader(withHeader(captured, "X-GitHub-Delivery", "copy"), "X-GitHub-Event", "release")
		if id := acceptedID(t, r.do(t, copyReq)); id != original {
			t.Errorf("the copy answered %s, want the original's %s", id, original)
		}
		if id := acceptedID(t, r.do(t, captured)); id != original {
			t.Errorf("the provider's retry answered %s", id)
		}
		if diff := cmp.Diff([]string{original + " push"}, r.publishedIDs()); diff != "" {
			t.Errorf("published (-want +got):\n%s", diff)
		}
	})
	t.Run("release fails too: the lease ends with the deadline", func(t *testing.T) {
		r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
		captured := signed(t, "github", "github", "push", r.now)
		r.pub.err, g.relErr = errBoom, errors.New("throttled")
		ctx, cancel := context.WithDeadline(context.Background(), r.now.Add(10*time.Second))
		defer cancel()
		resp, _ := r.h.Handle(ctx, captured)
		if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodePublishFailed {
			t.Fatalf("answer %d %s", resp.StatusCode, resp.Body)
		}
		if l := r.log.lines(t); !strings.Contains(l[0]["error"].(string), "release the replay record: throttled") {
			t.Errorf("log error = %v", l[0]["error"])
		}
		if got := g.claims[0].LeaseUntil; !got.Equal(r.now.Add(10 * time.Second)) {
			t.Errorf("lease until %s, want the context's deadline", got)
		}
		r.pub.err, r.pub.calls, g.relErr = nil, nil, nil
		r.now = r.now.Add(5 * time.Second) // the function may still be publishing
		if resp := r.do(t, captured); resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodeRequestInFlight {
			t.Errorf("retry within the lease: %d %s, want 503 request_in_flight", resp.StatusCode, resp.Body)
		}
		r.now = r.now.Add(6 * time.Second)
		id := acceptedID(t, r.do(t, captured))
		if diff := cmp.Diff([]string{id + " push"}, r.publishedIDs()); diff != "" {
			t.Errorf("published (-want +got):\n%s", diff)
		}
	})
}

// TestReplayUnconfirmedPublish: SNS accepted the message but the record
// could not be confirmed (the function died, or DynamoDB refused the
// write). The request is answered 202; until its lease ends a copy gets
// 503, after it a copy publishes the original event again under the
// original's id (deduplicated downstream) and confirms.
func TestReplayUnconfirmedPublish(t *testing.T) {
	r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
	captured := signed(t, "github", "github", "push", r.now)
	g.confirmErr = errors.New("throttled")
	original := acceptedID(t, r.do(t, captured))
	if l := r.log.lines(t)[0]; l["outcome"] != "accepted" || l["level"] != "WARN" || !strings.Contains(l["error"].(string), "replay record stays pending") {
		t.Errorf("log = %v", l)
	}
	g.confirmErr = nil
	copyReq := withHeader(withHeader(captured, "X-GitHub-Delivery", "copy"), "X-GitHub-Event", "release")
	r.now = r.now.Add(ingest.DefaultReplayLease)
	if resp := r.do(t, copyReq); resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodeRequestInFlight {
		t.Errorf("copy within the lease: %d %s, want 503 request_in_flight", resp.StatusCode, resp.Body)
	}
	r.now = r.now.Add(time.Millisecond)
	if id := acceptedID(t, r.do(t, copyReq)); id != original {
		t.Errorf("copy after the lease answered %s, want %s", id, original)
	}
	if id := acceptedID(t, r.do(t, copyReq)); id != original {
		t.Errorf("second copy answered %s", id)
	}
	if diff := cmp.Diff([]string{original + " push", original + " push"}, r.publishedIDs()); diff != "" {
		t.Errorf("published (-want +got):\n%s", diff)
	}
	for _, in := range r.pub.published() {
		if attr(in, "content_type") != "application/json" {
			t.Errorf("republished with content type %q", attr(in, "content_type"))
		}
	}
}

// TestReplayStoreUnavailable: when the store cannot be asked, the request
// is refused with 503 (fail closed: accepting it unchecked would let a
// replay through during any DynamoDB outage; the provider retries).
func TestReplayStoreUnavailable(t *testing.T) {
	r, g := newReplayRig(t, []config.Source{sourceConfig(t, "github")})
	g.claimErr = errors.New("claim replay:github:…: operation error DynamoDB: UpdateItem, ResourceNotFoundException")
	resp := r.do(t, signed(t, "github", "github", "push", r.now))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodeReplayCheckUnavailable {
		t.Fatalf("answer %d %s, want 503 replay_check_unavailable", resp.StatusCode, resp.Body)
	}
	if strings.Contains(resp.Body, "DynamoDB") {
		t.Errorf("the answer leaks the internal error: %s", resp.Body)
	}
	if len(r.pub.calls) != 0 {
		t.Errorf("published %d", len(r.pub.calls))
	}
	if diff := cmp.Diff([]metric{{Name: metrics.IngestRejected, Source: "github", Reason: ingest.CodeReplayCheckUnavailable}}, r.met.got()); diff != "" {
		t.Errorf("metrics (-want +got):\n%s", diff)
	}
	if l := r.log.lines(t)[0]; l["level"] != "ERROR" || !strings.Contains(l["error"].(string), "ResourceNotFoundException") {
		t.Errorf("log = %v", l)
	}
}

// TestReplayClaimInput: the record's key is the source's, its window the
// source's, and its event what the request was accepted as.
func TestReplayClaimInput(t *testing.T) {
	src := sourceConfig(t, "shopify")
	src.ReplayProtection.WindowDays = 3
	r, g := newReplayRig(t, []config.Source{src})
	id := acceptedID(t, r.do(t, signed(t, "shopify", "shopify", "orders.create", r.now)))
	in := g.claims[0]
	want := replayguard.Event{ID: id, Type: "orders/create", ContentType: "application/json"}
	if in.Event != want || in.Source != "shopify" || !strings.HasPrefix(in.Key, replayguard.KeyPrefix+"shopify:") ||
		!in.Now.Equal(r.now) || !in.ExpiresAt.Equal(r.now.Add(3*24*time.Hour)) || !in.LeaseUntil.Equal(r.now.Add(ingest.DefaultReplayLease)) {
		t.Errorf("claim = %+v", in)
	}
}
