//go:build integration

package integration

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
)

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestFanOutWithFilters: three destinations with different filters each
// receive exactly their events, each verified with the Standard Webhooks
// library using that destination's own secret.
func TestFanOutWithFilters(t *testing.T) {
	t.Parallel()
	payments, prs, notPush := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{
		destJSON("payments", payments, `"filter": {"sources": ["stripe"], "types": ["payment_intent.*"]}`),
		destJSON("prs", prs, `"filter": {"sources": ["github"], "types": ["pull_request.*"]}`),
		destJSON("not-push", notPush, `"filter": {"excludeTypes": ["push"]}`),
	}, map[string]*receiver{"payments": payments, "prs": prs, "not-push": notPush})

	pi := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_fan_1", nil)
	refund := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_fan_2", setType("charge.refunded"))
	push := e.send("github", "github", "push", "d1f0c2a0-0000-4000-8000-000000000001", nil)
	pr := e.send("github", "github", "pull_request.opened", "d1f0c2a0-0000-4000-8000-000000000002", nil)
	_ = push

	want := map[*receiver][]string{
		payments: {pi.id},
		prs:      {pr.id},
		notPush:  sorted([]string{pi.id, refund.id, pr.id}),
	}
	waitFor(t, 20*time.Second, "fan-out", func() bool {
		return len(payments.ids()) >= 1 && len(prs.ids()) >= 1 && len(notPush.ids()) >= 3
	})
	e.settled()
	for rc, ids := range want {
		if diff := cmp.Diff(ids, sorted(rc.ids())); diff != "" {
			t.Errorf("%s received (-want +got):\n%s", rc.srv.URL, diff)
		}
		for _, d := range rc.deliveries() {
			if !d.verified {
				t.Errorf("delivery %s to %s did not verify with the standard-webhooks library", d.header.Get("webhook-id"), rc.srv.URL)
			}
		}
	}
	d := payments.deliveries()[0]
	gotHeaders := []string{d.header.Get("hookfan-source"), d.header.Get("hookfan-type"), d.header.Get("hookfan-attempt"),
		d.header.Get("Content-Type"), strings.SplitN(d.header.Get("User-Agent"), "/", 2)[0]}
	if diff := cmp.Diff([]string{"stripe", "payment_intent.succeeded", "1", "application/json; charset=utf-8", "hookfan"}, gotHeaders); diff != "" {
		t.Errorf("delivery headers (-want +got):\n%s", diff)
	}
}

// TestProviderRetryDeliveredOnce: the provider sends the same event three
// times (each freshly signed); ingest answers the same id each time and each
// destination gets one POST.
func TestProviderRetryDeliveredOnce(t *testing.T) {
	t.Parallel()
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("a", a, ""), destJSON("b", b, "")}, map[string]*receiver{"a": a, "b": b})
	var ids []string
	for range 3 {
		ids = append(ids, e.send("stripe", "stripe", "payment_intent.succeeded", "evt_retry_same", nil).id)
	}
	if ids[0] != ids[1] || ids[1] != ids[2] {
		t.Fatalf("ingest gave one event three ids: %v", ids)
	}
	waitFor(t, 20*time.Second, "deliveries", func() bool { return len(a.ids()) >= 1 && len(b.ids()) >= 1 })
	e.settled()
	for name, rc := range map[string]*receiver{"a": a, "b": b} {
		if diff := cmp.Diff([]string{ids[0]}, rc.ids()); diff != "" {
			t.Errorf("%s received (-want +got):\n%s", name, diff)
		}
		if r, _ := e.record(name, ids[0]); r.Status != dedupe.StatusDelivered || r.Attempts != 1 {
			t.Errorf("%s record = %s after %d attempts, want DELIVERED after 1", name, r.Status, r.Attempts)
		}
	}
}

// TestFailingDestination: a destination answering 500 is retried on its
// (shortened) schedule and ends in its DLQ with its record DEAD, while a
// healthy destination is delivered meanwhile, and a destination that
// recovers in the middle of its schedule is delivered exactly once.
func TestFailingDestination(t *testing.T) {
	t.Parallel()
	broken := newReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	healthy := newReceiver(t, nil)
	flaky := newReceiver(t, func(n int, _ *http.Request) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusOK
	})
	e := startEnv(t, []string{
		destJSON("broken", broken, `"retry": {"schedule": ["1s", "3s"], "jitter": 0}`),
		destJSON("healthy", healthy, ""),
		destJSON("flaky", flaky, `"retry": {"schedule": ["1s", "1s", "1s", "1s"], "jitter": 0}`),
	}, map[string]*receiver{"broken": broken, "healthy": healthy, "flaky": flaky})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_failing_1", nil)

	waitFor(t, 10*time.Second, "healthy delivery", func() bool { return len(healthy.ids()) == 1 })
	if n := len(broken.ids()); n > 1 {
		t.Errorf("healthy destination waited for the broken one: broken had %d attempts first", n)
	}
	waitFor(t, 30*time.Second, "broken's three attempts", func() bool { return len(broken.ids()) >= 3 })
	waitFor(t, 20*time.Second, "broken's record DEAD", func() bool {
		r, _ := e.record("broken", ev.id)
		return r.Status == dedupe.StatusDead
	})
	lane, _ := e.stack.Topology.Lane("broken")
	var dlq []string
	waitFor(t, 20*time.Second, "the message in broken's DLQ", func() bool {
		dlq = append(dlq, queueIDs(t, lane.DLQURL, 2*time.Second)...)
		return len(dlq) > 0
	})
	if diff := cmp.Diff([]string{ev.id}, dlq); diff != "" {
		t.Errorf("DLQ (-want +got):\n%s", diff)
	}
	got := broken.deliveries()
	if len(got) != 3 {
		t.Fatalf("broken got %d attempts, want 3 (schedule of 2 delays)", len(got))
	}
	for i, minGap := range []time.Duration{time.Second, 3 * time.Second} {
		gap := got[i+1].at.Sub(got[i].at)
		if gap < minGap-200*time.Millisecond {
			t.Errorf("attempt %d came %s after attempt %d, want at least %s", i+2, gap, i+1, minGap)
		}
		if a := got[i+1].header.Get("hookfan-attempt"); a != string(rune('2'+i)) {
			t.Errorf("attempt %d carried hookfan-attempt %q", i+2, a)
		}
		if got[i+1].header.Get("webhook-id") != ev.id {
			t.Errorf("retry changed webhook-id")
		}
	}
	r, _ := e.record("broken", ev.id)
	if r.Attempts != 3 || r.LastStatus != 500 {
		t.Errorf("broken record: %d attempts, last status %d; want 3, 500", r.Attempts, r.LastStatus)
	}

	waitFor(t, 20*time.Second, "flaky's recovery", func() bool {
		r, _ := e.record("flaky", ev.id)
		return r.Status == dedupe.StatusDelivered
	})
	e.settled()
	statuses := 0
	for _, d := range flaky.deliveries() {
		if d.header.Get("webhook-id") == ev.id {
			statuses++
		}
	}
	if statuses != 3 {
		t.Errorf("flaky got %d requests, want 3 (two 503s, then one success)", statuses)
	}
	if diff := cmp.Diff([]string{ev.id}, healthy.ids()); diff != "" {
		t.Errorf("healthy received (-want +got):\n%s", diff)
	}
}

// TestGoneAndRetryAfter: 410 ends retries at once with the record GONE,
// and a copy of the event (the provider resending it) is acknowledged
// without a POST; a 429 with Retry-After delays the next attempt by at
// least that long.
func TestGoneAndRetryAfter(t *testing.T) {
	t.Parallel()
	gone := newReceiver(t, func(int, *http.Request) int { return http.StatusGone })
	limited := newReceiver(t, nil)
	limited.respond = func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusTooManyRequests
		}
		return http.StatusOK
	}
	limitedSrv := limited.srv.Config.Handler
	limited.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "4")
		limitedSrv.ServeHTTP(w, r)
	})
	e := startEnv(t, []string{
		destJSON("gone", gone, `"retry": {"schedule": ["1s", "1s"], "jitter": 0}`),
		destJSON("limited", limited, `"retry": {"schedule": ["1s", "1s"], "jitter": 0}`),
	}, map[string]*receiver{"gone": gone, "limited": limited})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_gone_1", nil)
	waitFor(t, 20*time.Second, "limited delivered", func() bool {
		r, _ := e.record("limited", ev.id)
		return r.Status == dedupe.StatusDelivered
	})
	r, _ := e.record("gone", ev.id)
	if r.Status != dedupe.StatusGone || r.LastStatus != http.StatusGone || r.Attempts != 1 {
		t.Errorf("gone record = %s, last %d, %d attempts; want GONE, 410, 1", r.Status, r.LastStatus, r.Attempts)
	}
	// The provider resends the event: the copy reaches both lanes; gone's
	// copy is acknowledged without a POST (limited's is a duplicate).
	e.send("stripe", "stripe", "payment_intent.succeeded", "evt_gone_1", nil)
	waitFor(t, 20*time.Second, "the copy acknowledged on the gone lane", func() bool {
		return strings.Contains(e.logs.String(), "the destination answered 410 Gone for this event")
	})
	e.settled()
	if n := len(gone.ids()); n != 1 {
		t.Errorf("gone got %d attempts, want 1: a destination that answered 410 gets no copy", n)
	}
	got := limited.deliveries()
	if len(got) != 2 {
		t.Fatalf("limited got %d attempts, want 2", len(got))
	}
	if gap := got[1].at.Sub(got[0].at); gap < 4*time.Second-200*time.Millisecond {
		t.Errorf("retry came %s after a 429 with Retry-After: 4; want at least 4s (schedule said 1s)", gap)
	}
}

// TestTwoInstancesOneQueue: two deliver function instances (and the
// provider sending every event twice, so two messages per event race) give
// exactly one POST per event.
func TestTwoInstancesOneQueue(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	rc.delay = 300 * time.Millisecond // keep claims overlapping
	e := startEnv(t, []string{destJSON("race", rc, `"batchSize": 1`)}, map[string]*receiver{"race": rc},
		func(o *devstack.Options) { o.Pollers = 2 })
	e.stop() // restart with a second instance added
	if err := e.stack.AddInstance("race"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan struct{})
	go func() { e.stack.Run(ctx); close(e.done) }()

	var want []string
	var wg sync.WaitGroup
	var mu sync.Mutex
	for i := range 8 {
		id := "evt_race_" + string(rune('a'+i))
		for range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got := e.send("stripe", "stripe", "payment_intent.succeeded", id, nil)
				mu.Lock()
				want = append(want, got.id)
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	want = slices.Compact(sorted(want))
	waitFor(t, 30*time.Second, "8 deliveries", func() bool { return len(rc.ids()) >= 8 })
	e.settled()
	if diff := cmp.Diff(want, sorted(rc.ids())); diff != "" {
		t.Errorf("POSTs (-want +got):\n%s", diff)
	}
}

// TestPoisonMessage: a message that is not ours fails alone: the rest of
// its batch is delivered, nothing crashes, and it ends in the DLQ.
func TestPoisonMessage(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("p", rc, `"retry": {"schedule": ["1s"], "jitter": 0}, "batchWindowSeconds": 0`)}, map[string]*receiver{"p": rc})
	lane, _ := e.stack.Topology.Lane("p")
	e.stop() // queue the batch first, so poison and good messages share it
	_, err := clients.SQS.SendMessage(context.Background(), &sqs.SendMessageInput{QueueUrl: &lane.QueueURL,
		MessageBody: aws.String(`{"not":"a hookfan message"}`),
		MessageAttributes: map[string]sqstypes.MessageAttributeValue{
			"source": {DataType: aws.String("String"), StringValue: aws.String("stripe")}}})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 4 {
		want = append(want, e.send("stripe", "stripe", "payment_intent.succeeded", "evt_poison_"+string(rune('a'+i)), nil).id)
	}
	ctx, cancel := context.WithCancel(context.Background())
	e.cancel, e.done = cancel, make(chan struct{})
	go func() { e.stack.Run(ctx); close(e.done) }()
	waitFor(t, 20*time.Second, "4 deliveries", func() bool { return len(rc.ids()) >= 4 })
	var dlq []string
	waitFor(t, 20*time.Second, "the poison message in the DLQ", func() bool {
		dlq = append(dlq, queueIDs(t, lane.DLQURL, 2*time.Second)...)
		return len(dlq) > 0
	})
	if diff := cmp.Diff([]string{"<malformed>"}, dlq); diff != "" {
		t.Errorf("DLQ (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(sorted(want), sorted(rc.ids())); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
	if !strings.Contains(e.logs.String(), "malformed") {
		t.Error("the poison message was not logged as malformed")
	}
}

// TestDestinationSecretRotation: during the overlap each delivery carries
// two signatures and a receiver holding either secret verifies it; after
// the overlap only the new secret verifies.
func TestDestinationSecretRotation(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	oldSecret := rc.secrets[0]
	newSecret := devstack.NewDestinationSecret()
	e := startEnv(t, []string{destJSON("rot", rc, "")}, map[string]*receiver{"rot": rc},
		func(o *devstack.Options) { o.SecretTTL = time.Second })
	lane, _ := e.stack.Topology.Lane("rot")

	verifies := func(d got, secret string) bool {
		wh, err := standardwebhooks.NewWebhook(secret)
		return err == nil && wh.Verify(d.body, d.header) == nil
	}
	step := func(providerID string, secrets ...string) got {
		t.Helper()
		if err := devstack.SetSecret(context.Background(), clients, lane.SecretID, secrets...); err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // past the cache TTL
		n := len(rc.ids())
		e.send("stripe", "stripe", "payment_intent.succeeded", providerID, nil)
		waitFor(t, 15*time.Second, "delivery", func() bool { return len(rc.ids()) > n })
		return rc.deliveries()[n]
	}
	before := step("evt_rot_1", oldSecret)
	during := step("evt_rot_2", oldSecret, newSecret)
	after := step("evt_rot_3", newSecret)
	got := []bool{
		verifies(before, oldSecret), verifies(before, newSecret),
		verifies(during, oldSecret), verifies(during, newSecret),
		verifies(after, oldSecret), verifies(after, newSecret),
	}
	if diff := cmp.Diff([]bool{true, false, true, true, false, true}, got); diff != "" {
		t.Errorf("verification before/during/after × old/new secret (-want +got):\n%s", diff)
	}
	if n := len(strings.Fields(during.header.Get("webhook-signature"))); n != 2 {
		t.Errorf("during the overlap the delivery carried %d signatures, want 2", n)
	}
}

// TestGracefulShutdown: stopping the stack while a batch is being delivered
// finishes that batch; a new stack on the same queues delivers the rest;
// every event arrives exactly once.
func TestGracefulShutdown(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	rc.delay = 1500 * time.Millisecond
	e := startEnv(t, []string{destJSON("g", rc, `"batchSize": 2`)}, map[string]*receiver{"g": rc},
		func(o *devstack.Options) { o.Pollers = 1 })
	var want []string
	for i := range 6 {
		want = append(want, e.send("stripe", "stripe", "payment_intent.succeeded", "evt_shutdown_"+string(rune('a'+i)), nil).id)
	}
	waitFor(t, 15*time.Second, "a batch in flight", func() bool { return len(rc.ids()) >= 1 })
	first := rc.deliveries()[0].at
	e.stop() // returns only after the batch in flight is finished
	inFlight := rc.ids()
	// Counted from the POST's arrival, not from when the poll above saw
	// it: on a loaded machine that can be most of the 1.5 s later.
	if since := time.Since(first); since < rc.delay {
		t.Errorf("stop returned %s after the in-flight POST arrived, before it could finish (%s)", since.Round(time.Millisecond), rc.delay)
	}
	for _, id := range inFlight {
		if r, _ := e.record("g", id); r.Status != dedupe.StatusDelivered {
			t.Errorf("in-flight event %s: record %s after shutdown, want DELIVERED", id, r.Status)
		}
	}
	if len(inFlight) >= len(want) {
		t.Fatalf("all %d events delivered before the stop; the test did not stop mid-stream", len(inFlight))
	}
	// A fresh stack on the same resources picks up the rest.
	again, err := devstack.New(context.Background(), devstack.Options{Config: e.cfg,
		Secrets: map[string][]string{devstate.DestinationSecretName(e.prefix, e.cfg.Destinations[0]): rc.secrets},
		Prefix:  e.prefix, Clients: clients, Region: awsCfg.Region, Log: slog.New(slog.NewJSONHandler(e.logs, nil)), EMF: io.Discard, PollWait: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { again.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	rc.delay = 0
	waitFor(t, 30*time.Second, "all events", func() bool { return len(rc.ids()) >= len(want) })
	e.settled()
	if diff := cmp.Diff(sorted(want), sorted(rc.ids())); diff != "" {
		t.Errorf("deliveries across the restart (-want +got):\n%s", diff)
	}
}

// failOnceStore fails the first DELIVERED write, as a DynamoDB error
// between the 2xx and the record would.
type failOnceStore struct {
	delivery.Store
	failed atomic.Bool
}

func (f *failOnceStore) Finish(ctx context.Context, l dedupe.Lease, o dedupe.Outcome) error {
	if o.Status == dedupe.StatusDelivered && f.failed.CompareAndSwap(false, true) {
		return errors.New("injected: record write failed")
	}
	return f.Store.Finish(ctx, l, o)
}

// TestDedupeOnEmulator runs the dedupe protocol against the emulator's
// DynamoDB: a claim left by a crashed function delays delivery until its
// lease ends, then the event is delivered once; and the documented window —
// a 2xx whose record write failed, then a redelivery — repeats the delivery
// with the same webhook-id.
func TestDedupeOnEmulator(t *testing.T) {
	t.Parallel()
	t.Run("crash after claim", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		e := startEnv(t, []string{destJSON("crash", rc, "")}, map[string]*receiver{"crash": rc})
		ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_crash_probe", nil)
		waitFor(t, 10*time.Second, "probe delivery", func() bool { return len(rc.ids()) == 1 })
		// A crashed function's claim on the next event: a live lease of 4 s.
		next := "evt_crash_next"
		nextID := ingest.EventID("stripe", next) // the id ingest derives: a pure function
		now := time.Now()
		if _, err := e.stack.Store.Claim(context.Background(), dedupe.ClaimInput{PK: dedupe.Key("crash", nextID), Source: "stripe",
			Type: "payment_intent.succeeded", Now: now, LeaseUntil: now.Add(4 * time.Second), ExpiresAt: now.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
		e.send("stripe", "stripe", "payment_intent.succeeded", next, nil)
		waitFor(t, 20*time.Second, "delivery after the lease", func() bool { return len(rc.ids()) == 2 })
		if at := rc.deliveries()[1].at; at.Before(now.Add(4 * time.Second)) {
			t.Errorf("delivered %s before the crashed claim's lease ended", now.Add(4*time.Second).Sub(at))
		}
		e.settled()
		if diff := cmp.Diff([]string{ev.id, nextID}, rc.ids()); diff != "" {
			t.Errorf("POSTs (-want +got):\n%s", diff)
		}
	})
	t.Run("final states and an operator's replay", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		e := startEnv(t, []string{destJSON("final", rc, "")}, map[string]*receiver{"final": rc})
		ctx := context.Background()
		claim := func(pk string, now time.Time, replay string) (dedupe.Lease, error) {
			return e.stack.Store.Claim(ctx, dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "t", Now: now,
				LeaseUntil: now.Add(5 * time.Second), ExpiresAt: now.Add(time.Hour), Replay: replay})
		}
		for _, final := range []dedupe.Status{dedupe.StatusGone, dedupe.StatusDelivered} {
			pk := dedupe.Key("final", "evt_"+strings.ToLower(string(final)))
			now := time.Now()
			l, err := claim(pk, now, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := e.stack.Store.Finish(ctx, l, dedupe.Outcome{Status: final, HTTPStatus: 410, Error: "HTTP 410", At: now}); err != nil {
				t.Fatal(err)
			}
			want := map[dedupe.Status]error{dedupe.StatusGone: dedupe.ErrGone, dedupe.StatusDelivered: dedupe.ErrDuplicate}[final]
			if _, err := claim(pk, now.Add(time.Hour), ""); !errors.Is(err, want) {
				t.Errorf("%s: a copy's claim = %v, want %v", final, err, want)
			}
			rl, err := claim(pk, now.Add(time.Hour), "rpl_a")
			if err != nil {
				t.Fatalf("%s: replay claim = %v, want a lease", final, err)
			}
			if _, err := claim(pk, now.Add(time.Hour+time.Second), "rpl_b"); !errors.Is(err, dedupe.ErrInFlight) {
				t.Errorf("%s: a second replay within the lease = %v, want %v", final, err, dedupe.ErrInFlight)
			}
			if r, _ := e.record("final", strings.TrimPrefix(pk, "final#")); r.Status != dedupe.StatusInProgress || r.Attempts != 2 {
				t.Errorf("%s: after the replay claim the record is %s after %d claims, want IN_PROGRESS after 2", final, r.Status, r.Attempts)
			}
			// The replay ends the event; a copy of its message is a duplicate
			// (DynamoDB's contains on the record's replays), another replay is not.
			if err := e.stack.Store.Finish(ctx, rl, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 200, At: now.Add(time.Hour)}); err != nil {
				t.Fatal(err)
			}
			if _, err := claim(pk, now.Add(2*time.Hour), "rpl_a"); !errors.Is(err, dedupe.ErrDuplicate) {
				t.Errorf("%s: a copy of the finished replay = %v, want %v", final, err, dedupe.ErrDuplicate)
			}
			if _, err := claim(pk, now.Add(2*time.Hour), "rpl_b"); err != nil {
				t.Errorf("%s: another replay = %v, want a lease", final, err)
			}
			if r, _ := e.record("final", strings.TrimPrefix(pk, "final#")); len(r.History) != 2 || r.History[1].Replay != "rpl_a" || len(r.Replays) != 1 {
				t.Errorf("%s: history %+v, replays %v; want two attempts, the second rpl_a's", final, r.History, r.Replays)
			}
		}
	})
	t.Run("2xx then failed record write", func(t *testing.T) {
		t.Parallel()
		rc := newReceiver(t, nil)
		store := &failOnceStore{}
		e := startEnv(t, []string{destJSON("window", rc, "")}, map[string]*receiver{"window": rc},
			func(o *devstack.Options) {
				o.WrapStore = func(s delivery.Store) delivery.Store { store.Store = s; return store }
			})
		first := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_window_1", nil)
		waitFor(t, 10*time.Second, "first delivery", func() bool { return len(rc.ids()) == 1 })
		// The provider resends the event (or the function died before its
		// batch response): a second message for the same event.
		time.Sleep(time.Second)
		e.send("stripe", "stripe", "payment_intent.succeeded", "evt_window_1", nil)
		waitFor(t, 30*time.Second, "the repeat", func() bool { return len(rc.ids()) == 2 })
		e.settled()
		if diff := cmp.Diff([]string{first.id, first.id}, rc.ids()); diff != "" {
			t.Errorf("POSTs (-want +got):\n%s", diff)
		}
		ds := rc.deliveries()
		if string(ds[0].body) != string(ds[1].body) {
			t.Error("the repeat carried a different body")
		}
		if r, _ := e.record("window", first.id); r.Status != dedupe.StatusDelivered {
			t.Errorf("record after the repeat = %s, want DELIVERED", r.Status)
		}
	})
}

// TestRetryAfterPastTwelveHours: a subscriber answering 429 with
// Retry-After of a day is left alone for as long as SQS allows. SQS (and
// moto) refuse a ChangeMessageVisibility that would hide the message past
// 12 h from its receive; asking for exactly 12 h is refused, and the
// message would come back after the visibility it was received with. Here
// it is received with a 3 s visibility, so a refused call shows at once.
func TestRetryAfterPastTwelveHours(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(int, *http.Request) int { return http.StatusTooManyRequests })
	rcSrv := rc.srv.Config.Handler
	rc.srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "86400")
		rcSrv.ServeHTTP(w, r)
	})
	// The retention of a schedule with an 11 h delay lets a Retry-After
	// stretch the first delay to the 12 h ceiling.
	e := startEnv(t, []string{destJSON("day", rc, `"retry": {"schedule": ["5s", "11h"], "jitter": 0}`)}, map[string]*receiver{"day": rc})
	e.stop() // this test plays the event source mapping itself
	lane, _ := e.stack.Topology.Lane("day")
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_day_1", nil)

	ctx := context.Background()
	var msgs []sqstypes.Message
	waitFor(t, 10*time.Second, "the message in the lane's queue", func() bool {
		out, err := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &lane.QueueURL, MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, VisibilityTimeout: 3, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
			MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		msgs = out.Messages
		return len(msgs) == 1
	})
	fctx, cancel := context.WithTimeout(ctx, e.stack.FunctionTimeout(lane.Destination))
	resp, err := e.stack.Deliver["day"].Handle(fctx, devstack.SQSEvent(msgs, lane.QueueARN, awsCfg.Region))
	cancel()
	if err != nil || len(resp.BatchItemFailures) != 1 {
		t.Fatalf("Handle = %v, %v; want the record reported failed", resp, err)
	}
	if strings.Contains(e.logs.String(), "visibility not changed") {
		t.Error(`the visibility call failed (log line "visibility not changed")`)
	}
	time.Sleep(5 * time.Second) // past the 3 s the message was received with
	out, err := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &lane.QueueURL, MaxNumberOfMessages: 10, WaitTimeSeconds: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Messages) != 0 {
		t.Errorf("the message came back after %s; want it hidden for about 12 h", 5*time.Second)
	}
	if diff := cmp.Diff([]string{ev.id}, rc.ids()); diff != "" {
		t.Errorf("POSTs (-want +got):\n%s", diff)
	}
	if r, _ := e.record("day", ev.id); r.Status != dedupe.StatusFailed || r.LastStatus != http.StatusTooManyRequests {
		t.Errorf("record %s, last %d; want FAILED, 429", r.Status, r.LastStatus)
	}
}
