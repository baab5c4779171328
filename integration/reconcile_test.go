//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/secrets"
)

const (
	reconcileStripeKey   = "rk_test_integration_events_read"
	reconcileGitHubToken = "ghp_integration_fake"
)

// reconcileSources is a sources block (a format of the prefix) whose
// stripe source reconciles against the fake at stripeAPI, with a lookback
// of an hour, and whose github source reconciles the fake's hook at
// githubAPI.
func reconcileSources(stripeAPI, githubAPI string) string {
	return `[
  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"},
   "reconcile": {"every": "15m", "lookback": "1h", "secretName": "%[1]s/reconcile/stripe", "apiUrl": "` + stripeAPI + `"}},
  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"},
   "reconcile": {"secretName": "%[1]s/reconcile/github", "hook": {"owner": "acme", "repo": "shop", "id": 7}, "apiUrl": "` + githubAPI + `"}}
]`
}

// reconcileSecrets adds the APIs' credentials to the stack's secrets, and
// leaves the reconciliation to the test's own runs.
func reconcileSecrets(o *devstack.Options) {
	o.Secrets[o.Prefix+"/reconcile/stripe"] = []string{reconcileStripeKey}
	o.Secrets[o.Prefix+"/reconcile/github"] = []string{reconcileGitHubToken}
	o.NoReconcileSchedule = true
}

// failingSave is the watermark store of a run killed after it published
// and before it saved its watermark.
type failingSave struct{ reconcile.Watermarks }

func (failingSave) Save(context.Context, string, time.Time) error {
	return errors.New("killed before saving the watermark")
}

// TestReconcileStripe is the Done-when on the local stack: N
// events are sent, k of them refused by the API (signed with a mistyped
// secret, as during a botched rotation); one reconciliation run brings in
// exactly those k, each delivered once to every destination that wants
// it, marked reconciled; a second run brings in none; a run killed after
// publishing and before saving its watermark, run again, delivers nothing
// twice; an event past the lookback is reported, not brought in.
func TestReconcileStripe(t *testing.T) {
	t.Parallel()
	fake := &fakeprovider.Stripe{Key: reconcileStripeKey}
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	rcs := map[string]*receiver{"orders": newReceiver(t, nil), "refunds": newReceiver(t, nil), "all": newReceiver(t, nil)}
	e := startEnvSources(t, reconcileSources(api.URL, "http://127.0.0.1:1"), []string{
		destJSON("orders", rcs["orders"], `"filter": {"sources": ["stripe"], "types": ["payment_intent.*"]}`),
		destJSON("refunds", rcs["refunds"], `"filter": {"sources": ["stripe"], "types": ["charge.refunded"]}`),
		destJSON("all", rcs["all"], ""),
	}, rcs, reconcileSecrets)
	r := e.stack.Reconciler
	ctx := context.Background()
	url := e.gateway.URL + "/webhooks/stripe"

	// N events, created ten minutes ago (past the settling time), sent as
	// Stripe would; k refused.
	const n, k = 9, 3
	types := []string{"payment_intent.succeeded", "charge.refunded", "payment_intent.created"}
	wants := map[string][]string{"payment_intent.succeeded": {"orders", "all"}, "charge.refunded": {"refunds", "all"}, "payment_intent.created": {"orders", "all"}}
	type ev struct {
		fakeprovider.StripeEvent
		hookfanID string
	}
	var delivered, dropped []ev
	for i := range n {
		se := fake.NewEvent(types[i%len(types)], time.Now().Add(-10*time.Minute), json.RawMessage(fmt.Sprintf(`{"n": %d}`, i)))
		secret, want := stripeSecret, http.StatusAccepted
		if i < k {
			secret, want = "whsec_mistyped_during_rotation", http.StatusUnauthorized
		}
		status, err := fake.Send(ctx, http.DefaultClient, url, secret, se)
		if err != nil || status != want {
			t.Fatalf("send %s: %d, %v; want %d", se.ID, status, err, want)
		}
		x := ev{se, eventID("stripe", se.ID)}
		if i < k {
			dropped = append(dropped, x)
		} else {
			delivered = append(delivered, x)
		}
	}
	// One more, refused too, but created past the lookback (an hour).
	old := fake.NewEvent("payment_intent.succeeded", time.Now().Add(-90*time.Minute), nil)
	e.settled()
	for _, x := range delivered {
		for _, d := range wants[x.Type] {
			waitFor(t, 30*time.Second, x.ID+" at "+d, func() bool { return rcs[d].accepted(x.hookfanID) == 1 })
		}
	}

	// An operator's run from two hours back sees the old event too.
	rep, err := r.Run(ctx, "stripe", reconcile.Options{Since: time.Now().Add(-2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("first run: %+v", rep)
	if rep.Listed != n+1 || rep.Present != n-k || rep.Missing != k+1 || rep.BroughtIn != k || rep.OutOfRetention != 1 || rep.Skipped != 0 {
		t.Fatalf("first run %+v; want %d listed, %d present, %d missing, %d brought in, 1 past the lookback", rep, n+1, n-k, k+1, k)
	}
	e.settled()
	for _, x := range dropped {
		for _, d := range wants[x.Type] {
			waitFor(t, 30*time.Second, x.ID+" brought in to "+d, func() bool { return rcs[d].accepted(x.hookfanID) == 1 })
		}
	}
	for _, d := range []string{"orders", "refunds", "all"} {
		if got := rcs[d].accepted(eventID("stripe", old.ID)); got != 0 {
			t.Errorf("the event past the lookback reached %s %d times", d, got)
		}
	}
	// Marked for the subscriber, and only the brought-in ones.
	for _, g := range rcs["all"].deliveries() {
		id := g.header.Get("webhook-id")
		isDropped := slices.ContainsFunc(dropped, func(x ev) bool { return x.hookfanID == id })
		if got := g.header.Get("hookfan-reconciled"); (got == "true") != isDropped || !g.verified {
			t.Errorf("%s: hookfan-reconciled %q, verified %v; want true exactly on the brought-in events", id, got, g.verified)
		}
	}

	// A second, scheduled, run brings in none.
	rep, err = r.Run(ctx, "stripe", reconcile.Options{})
	if err != nil || rep.BroughtIn != 0 || rep.Missing != 0 {
		t.Fatalf("second run %+v, %v; want nothing missing", rep, err)
	}

	// k2 more refused; a run killed after publishing and before saving its
	// watermark, then the next run at once (before the lanes delivered).
	var again []ev
	for i := range 2 {
		se := fake.NewEvent(types[i], time.Now().Add(-5*time.Minute), json.RawMessage(fmt.Sprintf(`{"again": %d}`, i)))
		if status, err := fake.Send(ctx, http.DefaultClient, url, "whsec_mistyped_during_rotation", se); err != nil || status != http.StatusUnauthorized {
			t.Fatalf("send: %d, %v", status, err)
		}
		again = append(again, ev{se, eventID("stripe", se.ID)})
	}
	before := e.stack.Topology.TableName
	killed, err := reconcile.Assemble(e.cfg, reconcile.Clients{
		HTTP: reconcile.NewHTTPClient(10 * time.Second), Secrets: secretsOf(e), Records: &reconcile.DynamoDBRecords{API: clients.DynamoDB, Table: before},
		Publisher: e.stack.Ingest, Watermarks: failingSave{&reconcile.DynamoDBWatermarks{API: clients.DynamoDB, Table: before}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = killed.Run(ctx, "stripe", reconcile.Options{})
	if !errors.Is(err, reconcile.ErrStopped) || rep.Stopped != reconcile.ReasonWatermark || rep.BroughtIn != 2 {
		t.Fatalf("killed run %+v, %v; want 2 brought in, stopped saving the watermark", rep, err)
	}
	// Run again at once: the worst case, where the lanes have not yet
	// written the records of what the killed run published (the records
	// read as absent), so everything in the window is published again.
	rerun, err := reconcile.Assemble(e.cfg, reconcile.Clients{
		HTTP: reconcile.NewHTTPClient(10 * time.Second), Secrets: secretsOf(e), Records: noRecords{},
		Publisher: e.stack.Ingest, Watermarks: &reconcile.DynamoDBWatermarks{API: clients.DynamoDB, Table: before},
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, err = rerun.Run(ctx, "stripe", reconcile.Options{})
	if err != nil || rep.BroughtIn != n+2 {
		t.Fatalf("run after the killed one %+v, %v; want all %d events of its window published again", rep, err, n+2)
	}
	t.Logf("run after the killed one: %+v", rep)
	e.settled()
	for _, x := range append(again, dropped...) {
		for _, d := range wants[x.Type] {
			waitFor(t, 30*time.Second, x.ID+" at "+d, func() bool { return rcs[d].accepted(x.hookfanID) >= 1 })
			if got := rcs[d].accepted(x.hookfanID); got != 1 {
				t.Errorf("%s reached %s %d times; want once", x.ID, d, got)
			}
		}
	}
	for _, x := range delivered {
		for _, d := range wants[x.Type] {
			if got := rcs[d].accepted(x.hookfanID); got != 1 {
				t.Errorf("%s reached %s %d times; want once", x.ID, d, got)
			}
		}
	}
	rep, err = r.Run(ctx, "stripe", reconcile.Options{})
	if err != nil || rep.BroughtIn != 0 || rep.Present != n+2 {
		t.Errorf("last run %+v, %v; want all %d present, none brought in", rep, err, n+2)
	}
	// ops reconcile on the local stack assembles the same run from the
	// configuration and the emulator: nothing is missing.
	lr, err := operator.LocalReconciler(ctx, awsCfg, e.cfg, e.prefix)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := lr.Run(ctx, "stripe", reconcile.Options{Since: time.Now().Add(-30 * time.Minute), DryRun: true}); err != nil || rep.Listed != n+2 || rep.Missing != 0 {
		t.Errorf("ops reconcile --dry-run: %+v, %v; want %d listed, none missing", rep, err, n+2)
	}
	for d, rc := range rcs {
		want := 0
		for _, x := range slices.Concat(delivered, dropped, again) {
			if slices.Contains(wants[x.Type], d) {
				want++
			}
		}
		if got := len(rc.deliveries()); got != want {
			t.Errorf("%s got %d requests; want %d (each event once)", d, got, want)
		}
	}
}

// TestReconcileGitHub: deliveries Hookfan refused (the hook's secret
// mistyped at GitHub) are redelivered by GitHub's API once it is right,
// arrive signed through ingest and are delivered once; a second run
// redelivers none.
func TestReconcileGitHub(t *testing.T) {
	t.Parallel()
	fake := &fakeprovider.GitHub{Token: reconcileGitHubToken, Path: "/repos/acme/shop/hooks/7/deliveries",
		// Deliveries recorded ten minutes back, past the settling time.
		Now: func() time.Time { return time.Now().Add(-10 * time.Minute) }}
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	rcs := map[string]*receiver{"all": newReceiver(t, nil)}
	e := startEnvSources(t, reconcileSources("http://127.0.0.1:1", api.URL), []string{destJSON("all", rcs["all"], "")}, rcs, reconcileSecrets)
	fake.Target = e.gateway.URL + "/webhooks/github"
	ctx := context.Background()

	var ok, lost []string
	for i := range 6 {
		fake.SetSecret(githubSecret)
		if i%3 == 0 {
			fake.SetSecret("mistyped at GitHub")
		}
		a, err := fake.Deliver(ctx, "issues", "opened", []byte(fmt.Sprintf(`{"action":"opened","issue":{"number":%d}}`, i)))
		if err != nil {
			t.Fatal(err)
		}
		if a.StatusCode == http.StatusAccepted {
			ok = append(ok, a.GUID)
		} else {
			lost = append(lost, a.GUID)
		}
	}
	if len(lost) != 2 || len(ok) != 4 {
		t.Fatalf("%d accepted, %d refused; want 4 and 2", len(ok), len(lost))
	}
	fake.SetSecret(githubSecret)
	e.settled()
	for _, g := range ok {
		waitFor(t, 30*time.Second, g+" delivered", func() bool { return rcs["all"].accepted(eventID("github", g)) == 1 })
	}
	rep, err := e.stack.Reconciler.Run(ctx, "github", reconcile.Options{})
	if err != nil || rep.Listed != 6 || rep.Present != 4 || rep.Redelivered != 2 {
		t.Fatalf("run %+v, %v; want 6 listed, 4 present, 2 redelivered", rep, err)
	}
	e.settled()
	for _, g := range slices.Concat(ok, lost) {
		waitFor(t, 30*time.Second, g+" delivered", func() bool { return rcs["all"].accepted(eventID("github", g)) == 1 })
	}
	rep, err = e.stack.Reconciler.Run(ctx, "github", reconcile.Options{})
	if err != nil || rep.Redelivered != 0 {
		t.Fatalf("second run %+v, %v; want none redelivered", rep, err)
	}
	e.settled()
	if got := len(rcs["all"].deliveries()); got != 6 {
		t.Errorf("%d deliveries; want 6, each event once", got)
	}
}

// noRecords reads every delivery record as absent.
type noRecords struct{}

func (noRecords) Present(context.Context, []string) (map[string]bool, error) { return nil, nil }

// eventID is the Hookfan event id ingest gives a provider's event.
func eventID(source, providerID string) string { return ingest.EventID(source, providerID) }

// secretsOf reads the stack's secrets as its functions do.
func secretsOf(*env) reconcile.Secrets { return secrets.NewCache(clients.Secrets) }
