//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/replayguard/replayguardtest"
	"github.com/hookfan/hookfan/shared/verify"
)

// captured is a signed provider request as it went over the wire once: a
// replayer holds its headers and body, never the secret.
type captured struct {
	header http.Header
	body   []byte
}

// captureGitHub signs the GitHub push sample the way GitHub does.
func captureGitHub(t *testing.T) captured {
	t.Helper()
	s := events.MustLoad("github", "push")
	h, err := events.Sign(config.Verify{Kind: provider.GitHub}, s, time.Now(), githubSecret)
	if err != nil {
		t.Fatal(err)
	}
	return captured{header: h, body: s.Body}
}

// with returns a copy of the request with headers set, as a replayer
// edits a captured request.
func (c captured) with(kv ...string) captured {
	h := c.header.Clone()
	for i := 0; i+1 < len(kv); i += 2 {
		h.Set(kv[i], kv[i+1])
	}
	return captured{header: h, body: c.body}
}

// postRaw sends a request through the gateway as it is and returns the
// status, the error code (when refused) and the id (when accepted).
func (e *env) postRaw(source string, c captured) (status int, code, id string) {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, e.gateway.URL+"/webhooks/"+source, bytes.NewReader(c.body))
	req.Header = c.header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var out struct {
		ID    string
		Error struct{ Code string }
	}
	_ = json.Unmarshal(body, &out)
	return resp.StatusCode, out.Error.Code, out.ID
}

// TestReplayedGitHubRequestNotPublished is issue #13's "done when": a
// captured GitHub request replayed under a new delivery id — and re-typed
// through X-GitHub-Event to reach another destination — is answered as the
// original, and nothing more is published: the topic's raw subscription
// sees one message, each destination gets what the original alone gives
// it.
func TestReplayedGitHubRequestNotPublished(t *testing.T) {
	t.Parallel()
	all, releases := newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{
		destJSON("all", all, ""),
		destJSON("releases", releases, `"filter": {"sources": ["github"], "types": ["release", "release.*"]}`),
	}, map[string]*receiver{"all": all, "releases": releases})
	tap := tapTopic(t, e.stack.Topology.TopicARN, e.prefix)

	push := captureGitHub(t)
	status, code, original := e.postRaw("github", push)
	if status != http.StatusAccepted || original != ingest.EventID("github", push.header.Get("X-GitHub-Delivery")) {
		t.Fatalf("original: %d %s %s", status, code, original)
	}
	for name, c := range map[string]captured{
		"new delivery id": push.with("X-GitHub-Delivery", "3b2f7e10-0000-4000-8000-00000000000a"),
		"another new id":  push.with("X-GitHub-Delivery", "3b2f7e10-0000-4000-8000-00000000000b"),
		"re-typed":        push.with("X-GitHub-Delivery", "3b2f7e10-0000-4000-8000-00000000000c", "X-GitHub-Event", "release"),
	} {
		if status, code, id := e.postRaw("github", c); status != http.StatusAccepted || id != original {
			t.Errorf("%s: %d %s %s, want 202 with the original's id %s", name, status, code, id, original)
		}
	}

	msgs := drain(t, tap, 2, 5*time.Second) // wait for a second message, which must not come
	if len(msgs) != 1 || aws.ToString(msgs[0].MessageAttributes["id"].StringValue) != original ||
		aws.ToString(msgs[0].MessageAttributes["type"].StringValue) != "push" {
		t.Errorf("the topic published %d messages, want the original alone", len(msgs))
	}
	waitFor(t, 20*time.Second, "the original's delivery", func() bool { return len(all.ids()) >= 1 })
	e.settled()
	if diff := cmp.Diff([]string{original}, all.ids()); diff != "" {
		t.Errorf("destination all received (-want +got):\n%s", diff)
	}
	if got := releases.ids(); len(got) != 0 {
		t.Errorf("the re-typed copy reached the release destination: %v", got)
	}

	// What the table holds: the original's event, PUBLISHED, keyed by a
	// digest (never the signature), expiring after the default window.
	sig, err := verify.GitHub().Signature(push.header)
	if err != nil {
		t.Fatal(err)
	}
	key := replayguard.Key("github", sig)
	r, ok, err := e.stack.Replay.Get(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("replay record %s: %v, found %v", key, err, ok)
	}
	if r.Status != replayguard.StatusPublished || r.Event.ID != original || r.Event.Type != "push" || r.Source != "github" {
		t.Errorf("record = %+v", r)
	}
	if left := time.Until(r.ExpiresAt); left < 7*24*time.Hour-time.Minute || left > 7*24*time.Hour {
		t.Errorf("record expires in %s, want the 7-day default window", left)
	}
	if hexSig := strings.TrimPrefix(push.header.Get("X-Hub-Signature-256"), "sha256="); strings.Contains(key, hexSig) {
		t.Error("the key holds the signature")
	}
}

// TestReplayConcurrentCopies: copies of one captured request arriving at
// once are published once: the local stack serializes the claims of one
// key as DynamoDB's per-item atomicity does (moto's conditional writes are
// not atomic). Each copy is answered 202 with the original's id, or 503
// while the first is being published.
func TestReplayConcurrentCopies(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("all", rc, "")}, map[string]*receiver{"all": rc})
	tap := tapTopic(t, e.stack.Topology.TopicARN, e.prefix)
	push := captureGitHub(t)
	want := ingest.EventID("github", push.header.Get("X-GitHub-Delivery"))
	var wg sync.WaitGroup
	var mu sync.Mutex
	answers := map[string]int{}
	for i := range 6 {
		wg.Go(func() {
			c := push.with("X-GitHub-Delivery", "copy-"+string(rune('a'+i)))
			status, code, id := e.postRaw("github", c)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case status == http.StatusAccepted && id == want:
				answers["202 original"]++
			case status == http.StatusAccepted:
				answers["202 "+id]++
			default:
				answers[code]++
			}
		})
	}
	wg.Wait()
	// Whichever copy came first was published under its own id; every
	// other one was answered with that id, or asked to retry.
	msgs := drain(t, tap, 2, 5*time.Second)
	if len(msgs) != 1 {
		t.Fatalf("published %d messages for 6 copies, want 1 (answers %v)", len(msgs), answers)
	}
	first := aws.ToString(msgs[0].MessageAttributes["id"].StringValue)
	accepted := answers["202 "+first] + answers["202 original"]
	if first == want {
		accepted = answers["202 original"]
	}
	if accepted+answers[ingest.CodeRequestInFlight] != 6 || accepted == 0 {
		t.Errorf("answers %v, want 202 with the published id %s or 503 request_in_flight", answers, first)
	}
}

// failingPublisher fails the first n publishes, as an SNS outage would.
type failingPublisher struct {
	next ingest.Publisher
	mu   sync.Mutex
	n    int
}

func (p *failingPublisher) Publish(ctx context.Context, in *sns.PublishInput, optFns ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	fail := p.n > 0
	p.n--
	p.mu.Unlock()
	if fail {
		return nil, errors.New("sns: service unavailable")
	}
	return p.next.Publish(ctx, in, optFns...)
}

// TestReplayFailureRules: a publish that fails leaves nothing that makes
// the provider's retry look like a replay — the retry is published and
// delivered — and a replay store that cannot be reached (here: a table
// that does not exist, DynamoDB's own error over the wire) answers 503
// with nothing published.
func TestReplayFailureRules(t *testing.T) {
	t.Parallel()
	t.Run("publish failure, then the provider's retry", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		e := startEnv(t, []string{destJSON("all", rc, "")}, map[string]*receiver{"all": rc},
			func(o *devstack.Options) {
				o.WrapPublisher = func(p ingest.Publisher) ingest.Publisher { return &failingPublisher{next: p, n: 1} }
			})
		push := captureGitHub(t)
		if status, code, _ := e.postRaw("github", push); status != http.StatusServiceUnavailable || code != ingest.CodePublishFailed {
			t.Fatalf("first attempt: %d %s, want 503 publish_failed", status, code)
		}
		status, code, id := e.postRaw("github", push) // GitHub's redelivery: the same request
		if status != http.StatusAccepted || id != ingest.EventID("github", push.header.Get("X-GitHub-Delivery")) {
			t.Fatalf("retry: %d %s %s, want 202", status, code, id)
		}
		waitFor(t, 20*time.Second, "the retry's delivery", func() bool { return len(rc.ids()) >= 1 })
		// And now a copy is a replay.
		if status, _, again := e.postRaw("github", push.with("X-GitHub-Delivery", "copy")); status != http.StatusAccepted || again != id {
			t.Errorf("copy after the retry: %d %s", status, again)
		}
		e.settled()
		if diff := cmp.Diff([]string{id}, rc.ids()); diff != "" {
			t.Errorf("deliveries (-want +got):\n%s", diff)
		}
	})
	t.Run("replay store unreachable", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		e := startEnv(t, []string{destJSON("all", rc, "")}, map[string]*receiver{"all": rc},
			func(o *devstack.Options) {
				o.WrapReplay = func(ingest.ReplayGuard) ingest.ReplayGuard {
					return replayguard.NewDynamoDB(clients.DynamoDB, o.Prefix+"-no-such-table")
				}
			})
		tap := tapTopic(t, e.stack.Topology.TopicARN, e.prefix)
		if status, code, _ := e.postRaw("github", captureGitHub(t)); status != http.StatusServiceUnavailable || code != ingest.CodeReplayCheckUnavailable {
			t.Errorf("answer %d %s, want 503 replay_check_unavailable", status, code)
		}
		// A Stripe event, timestamped, does not need the store.
		e.send("stripe", "stripe", "payment_intent.succeeded", "evt_replay_store_down", nil)
		if msgs := drain(t, tap, 2, 3*time.Second); len(msgs) != 1 || aws.ToString(msgs[0].MessageAttributes["source"].StringValue) != "stripe" {
			t.Errorf("published %d messages, want the Stripe event alone", len(msgs))
		}
		if !strings.Contains(e.logs.String(), "ResourceNotFoundException") {
			t.Error("the log does not carry DynamoDB's error")
		}
	})
}

// TestReplayStoreOnEmulator runs the replay protocol's scenarios against
// the DynamoDB store on the emulator's table: the conditions, ALL_OLD on
// refusal, the takeover, the expiry, as the Memory twin keeps them.
func TestReplayStoreOnEmulator(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("all", rc, "")}, map[string]*receiver{"all": rc})
	replayguardtest.Run(t, e.stack.Replay, replayguardtest.Options{Source: e.prefix})
}

// TestReplayedUnsignedHeadersNotPublished is issue 19's point 3 on the
// emulator: for every kind with replay protection, a captured request
// re-sent with its unsigned headers rewritten — a new event id, another
// or re-spelled type or topic (orders/create as orders/Create,
// orders/create., orders/x, orders/paid), or none at all — is answered as
// the original (202 with its id) and publishes nothing: the topic carries
// one message per source, and a destination listening for the forged type
// gets nothing.
func TestReplayedUnsignedHeadersNotPublished(t *testing.T) {
	t.Parallel()
	all, forged := newReceiver(t, nil), newReceiver(t, nil)
	sources := `[
  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}},
  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"}},
  {"name": "shop", "verify": {"kind": "shopify", "secretName": "%[1]s/sources/shop"}},
  {"name": "acme", "verify": {"kind": "hmac", "secretName": "%[1]s/sources/acme", "header": "X-Acme-Signature"},
   "event": {"idHeader": "X-Acme-Id", "typeHeader": "X-Acme-Event"}},
  {"name": "ci", "verify": {"kind": "token", "secretName": "%[1]s/sources/ci", "header": "X-Hook-Token"},
   "event": {"idHeader": "X-Request-Id", "typeField": "event_type"}}
]`
	secrets := map[string]string{"github": githubSecret, "shop": "integration shopify secret", "acme": "integration acme secret", "ci": "integration ci token"}
	e := startEnvSources(t, sources, []string{
		destJSON("all", all, ""),
		destJSON("forged", forged, `"filter": {"types": ["release", "orders/paid", "orders/Create", "orders/create.", "orders/x", "order.refunded"]}`),
	}, map[string]*receiver{"all": all, "forged": forged}, func(o *devstack.Options) {
		for name, secret := range secrets {
			if name != "github" {
				o.Secrets[o.Prefix+"/sources/"+name] = []string{secret}
			}
		}
	})
	tap := tapTopic(t, e.stack.Topology.TopicARN, e.prefix)

	tests := []struct {
		source, sample string
		header         []string // set before signing
		variants       map[string][]string
	}{
		{"github", "github/push", nil, map[string][]string{
			"new delivery id": {"X-GitHub-Delivery", "5c1e0000-0000-4000-8000-000000000001"},
			"re-typed":        {"X-GitHub-Delivery", "5c1e0000-0000-4000-8000-000000000002", "X-GitHub-Event", "release"},
			"no event":        {"X-GitHub-Event", ""},
		}},
		{"shop", "shopify/orders.create", nil, map[string][]string{
			"new webhook id":   {"X-Shopify-Webhook-Id", "5c1e0000-0000-4000-8000-000000000003"},
			"orders/Create":    {"X-Shopify-Webhook-Id", "5c1e0000-0000-4000-8000-000000000004", "X-Shopify-Topic", "orders/Create"},
			"orders/create.":   {"X-Shopify-Webhook-Id", "5c1e0000-0000-4000-8000-000000000005", "X-Shopify-Topic", "orders/create."},
			"orders/x":         {"X-Shopify-Webhook-Id", "5c1e0000-0000-4000-8000-000000000006", "X-Shopify-Topic", "orders/x"},
			"orders/paid":      {"X-Shopify-Webhook-Id", "5c1e0000-0000-4000-8000-000000000007", "X-Shopify-Topic", "orders/paid"},
			"another shop too": {"X-Shopify-Shop-Domain", "other.myshopify.com", "X-Shopify-Topic", "orders/paid"},
			"no topic":         {"X-Shopify-Topic", ""},
			"no webhook id":    {"X-Shopify-Webhook-Id", ""},
		}},
		{"acme", "hmac/order.created", []string{"X-Acme-Id", "acme-1", "X-Acme-Event", "order.created"}, map[string][]string{
			"new id":       {"X-Acme-Id", "acme-2"},
			"another type": {"X-Acme-Id", "acme-3", "X-Acme-Event", "order.refunded"},
		}},
		{"ci", "token/build.finished", nil, map[string][]string{
			"new request id": {"X-Request-Id", "5c1e0000-0000-4000-8000-000000000008"},
		}},
	}
	var originals []string
	for _, tt := range tests {
		src, _ := e.cfg.Source(tt.source)
		kind, name, _ := strings.Cut(tt.sample, "/")
		s := events.MustLoad(kind, name)
		for i := 0; i+1 < len(tt.header); i += 2 {
			s.Header.Set(tt.header[i], tt.header[i+1])
		}
		h, err := events.Sign(src.Verify, s, time.Now(), secrets[tt.source])
		if err != nil {
			t.Fatal(err)
		}
		c := captured{header: h, body: s.Body}
		status, code, original := e.postRaw(tt.source, c)
		if status != http.StatusAccepted {
			t.Fatalf("%s original: %d %s", tt.source, status, code)
		}
		originals = append(originals, original)
		for vname, kv := range tt.variants {
			if status, code, id := e.postRaw(tt.source, c.with(kv...)); status != http.StatusAccepted || id != original {
				t.Errorf("%s, %s: %d %s %s, want 202 with the original's id %s", tt.source, vname, status, code, id, original)
			}
		}
	}

	msgs := drain(t, tap, len(originals)+1, 5*time.Second) // wait for one more message, which must not come
	var published []string
	for _, m := range msgs {
		published = append(published, aws.ToString(m.MessageAttributes["id"].StringValue))
	}
	if diff := cmp.Diff(sorted(originals), sorted(published)); diff != "" {
		t.Errorf("the topic published (-want the originals alone +got):\n%s", diff)
	}
	waitFor(t, 30*time.Second, "the originals' deliveries", func() bool { return len(all.ids()) >= len(originals) })
	e.settled()
	if diff := cmp.Diff(sorted(originals), sorted(all.ids())); diff != "" {
		t.Errorf("destination all received (-want +got):\n%s", diff)
	}
	if got := forged.ids(); len(got) != 0 {
		t.Errorf("a re-typed copy reached the destination of the forged types: %v", got)
	}
}
