package delivery

import (
	"context"
	"fmt"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

// checkMode puts a harness's store in dedupe.mode check.
func checkMode(store *dedupe.Memory) func(*laneOptions) {
	return func(o *laneOptions) { o.Store = store.InMode(dedupe.ModeCheck) }
}

// TestCheckModeRefusesCopiesInTurn: with dedupe.mode check, copies of an
// event arriving one after another get one POST, as with the lease; a
// failure is recorded and its next copy attempted; a 410 is final.
func TestCheckModeRefusesCopiesInTurn(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(id string) reply {
		switch id {
		case "failing":
			return reply{status: http.StatusServiceUnavailable}
		case "gone":
			return reply{status: http.StatusGone}
		}
		return reply{status: http.StatusOK}
	})
	store := dedupe.NewMemory()
	hs := newHarness(t, sub.URL, secret, checkMode(store))
	for i := range 3 {
		for _, id := range []string{"e1", "gone"} {
			m := sqsRecord(id, 1)
			m.MessageId, m.ReceiptHandle = fmt.Sprintf("msg-%s-%d", id, i), fmt.Sprintf("rh-%s-%d", id, i)
			if resp, _ := hs.h.Handle(context.Background(), batch(m)); len(resp.BatchItemFailures) != 0 {
				t.Errorf("%s copy %d: failures %v, want acknowledged", id, i, resp.BatchItemFailures)
			}
		}
		hs.clock.Advance(time.Minute)
	}
	for _, id := range []string{"e1", "gone"} {
		if n := sub.posts(id); n != 1 {
			t.Errorf("%s: %d POSTs, want 1", id, n)
		}
	}
	if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 4 {
		t.Errorf("DeliveryDuplicate = %g, want 4 (two copies of each)", got)
	}
	for id, want := range map[string]dedupe.Status{"e1": dedupe.StatusDelivered, "gone": dedupe.StatusGone} {
		r, _, _ := store.Get(context.Background(), dedupe.Key("orders", id))
		if r.Status != want || r.Attempts != 1 || r.LeaseToken != "" {
			t.Errorf("%s: record %s after %d attempts, lease %q; want %s after 1, no lease", id, r.Status, r.Attempts, r.LeaseToken, want)
		}
	}

	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("failing", 1)))
	if len(resp.BatchItemFailures) != 1 {
		t.Fatalf("503: failures %v, want the record back", resp.BatchItemFailures)
	}
	r, _, _ := store.Get(context.Background(), dedupe.Key("orders", "failing"))
	if r.Status != dedupe.StatusFailed || r.LastStatus != http.StatusServiceUnavailable || r.NextAttemptAt.IsZero() {
		t.Errorf("record after a 503 = %+v, want FAILED, 503, its next attempt", r)
	}
	hs.clock.Advance(time.Hour)
	hs.h.Handle(context.Background(), batch(sqsRecord("failing", 2)))
	if n := sub.posts("failing"); n != 2 {
		t.Errorf("%d POSTs of the failing event, want 2 (its next copy is attempted)", n)
	}
}

// TestCheckModeCopiesAtOnce: with dedupe.mode check, two copies handled at
// the same moment are both POSTed, with the same webhook-id; the first
// outcome stays on the record. With the lease (TestRacingHandlers) the
// second waits instead.
func TestCheckModeCopiesAtOnce(t *testing.T) {
	secret := newSecret(t)
	store := dedupe.NewMemory()
	var second *harness
	var n atomic.Int32
	sub := newSubscriber(t, secret, func(string) reply {
		if n.Add(1) == 1 {
			// While the first POST is open, the copy is handled.
			m := sqsRecord("e1", 1)
			m.MessageId, m.ReceiptHandle = "msg-copy", "rh-copy"
			if resp, _ := second.h.Handle(context.Background(), batch(m)); len(resp.BatchItemFailures) != 0 {
				t.Errorf("copy: failures %v, want acknowledged", resp.BatchItemFailures)
			}
		}
		return reply{status: http.StatusOK}
	})
	first := newHarness(t, sub.URL, secret, checkMode(store))
	second = newHarness(t, sub.URL, secret, checkMode(store), func(o *laneOptions) { o.Now = first.clock.Now })
	if resp, _ := first.h.Handle(context.Background(), batch(sqsRecord("e1", 1))); len(resp.BatchItemFailures) != 0 {
		t.Errorf("first: failures %v, want acknowledged", resp.BatchItemFailures)
	}
	got := sub.requests()
	if len(got) != 2 || got[0].header.Get(https.HeaderID) != "e1" || got[1].header.Get(https.HeaderID) != "e1" {
		t.Fatalf("%d POSTs, want 2 with webhook-id e1", len(got))
	}
	r, _, _ := store.Get(context.Background(), dedupe.Key("orders", "e1"))
	if r.Status != dedupe.StatusDelivered || r.Attempts != 1 {
		t.Errorf("record %s after %d attempts, want DELIVERED after 1 (the copy's write; the first found it settled)", r.Status, r.Attempts)
	}
	var settled bool
	for _, line := range first.logs.lines(t) {
		if s, _ := line["record_error"].(string); strings.Contains(s, dedupe.ErrSettled.Error()) {
			settled = true
		}
	}
	if !settled {
		t.Error("the first attempt's log line does not say the record was settled by the copy")
	}
	resp, _ := first.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{sqsRecord("e1", 2)}})
	if len(resp.BatchItemFailures) != 0 || len(sub.requests()) != 2 {
		t.Errorf("a later copy: failures %v, %d POSTs; want a duplicate, still 2", resp.BatchItemFailures, len(sub.requests()))
	}
}

// TestAssembleDedupeMode: the contract's dedupe mode reaches the store; a
// store that cannot take check mode is refused by name.
func TestAssembleDedupeMode(t *testing.T) {
	cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks"}`)
	cfg.Dedupe.Mode = config.DedupeCheck
	env := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", SecretID: "orders-secret"})
	if env.DedupeMode != config.DedupeCheck || env.Render()[EnvDedupeMode] != config.DedupeCheck {
		t.Fatalf("LaneEnv with dedupe.mode check: %q, rendered %q", env.DedupeMode, env.Render()[EnvDedupeMode])
	}
	if _, ok := LaneEnv(contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks"}`), cfg.Destinations[0], LaneResources{Table: "t", QueueURL: "q", SecretID: "s"}).Render()[EnvDedupeMode]; ok {
		t.Errorf("%s rendered for the default lease", EnvDedupeMode)
	}
	store := dedupe.NewMemory()
	clients := func(s Store) Clients {
		return Clients{Store: s, SQS: sqs.New(sqs.Options{Region: "us-east-1"}),
			Secrets: secrets.NewCache(secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})),
			Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler)}
	}
	h, err := Assemble(env, clients(store))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Claim(context.Background(), dedupe.ClaimInput{PK: "orders#e1", Now: time.Now(), LeaseUntil: time.Now().Add(time.Minute)}); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := store.Get(context.Background(), "orders#e1"); ok {
		t.Error("the assembled store wrote a lease: it is not in check mode")
	}
	_, err = Assemble(env, clients(leaseOnly{}))
	if err == nil || !strings.Contains(err.Error(), "dedupe.mode") {
		t.Errorf("Assemble of a lease-only store in check mode = %v, want an error naming dedupe.mode", err)
	}
	bad := map[string]string{EnvDedupeMode: "optimistic", EnvLaneMetrics: "some"}
	_, err = ReadEnv(func(k string) string { return bad[k] })
	for _, want := range []string{`"optimistic"`, EnvDedupeMode, `"some"`, EnvLaneMetrics} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ReadEnv of unknown values = %v, want %s named", err, want)
		}
	}
}

// leaseOnly is a Store that keeps only its own protocol.
type leaseOnly struct{ Store }

// TestLaneMetricsAggregate: with metrics.laneDimensions false the
// delivery metrics are published under Destination "(all)", LanePaused
// under the lane's name (its alarm reads it).
func TestLaneMetricsAggregate(t *testing.T) {
	sink := &captureSink{}
	m := laneMetrics(Env{LaneMetrics: config.LaneMetricsAggregate}, metrics.NewRecorder(sink))
	dim := metrics.Dimension{Name: metrics.DimDestination, Value: "orders"}
	m.Add(metrics.DeliverySucceeded, metrics.Count, 1, dim)
	m.Add(metrics.LanePaused, metrics.Count, 1, dim)
	if err := m.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, p := range sink.points {
		got[p.Name] = p.Dimensions[0].Value
	}
	if got[metrics.DeliverySucceeded] != AllLanes || got[metrics.LanePaused] != "orders" {
		t.Errorf("dimensions %v, want %s for deliveries and orders for the paused gauge", got, AllLanes)
	}
	if m := laneMetrics(Env{}, metrics.NewRecorder(sink)); m == nil {
		t.Fatal("nil")
	} else if _, ok := m.(aggregated); ok {
		t.Error("the default contract aggregates the lanes' metrics")
	}
}

// TestFailedAttemptKeepsTheAnswer: the record's history keeps the first
// bytes of what the receiver answered to a failed attempt, in either mode.
func TestFailedAttemptKeepsTheAnswer(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply {
		return reply{status: http.StatusUnprocessableEntity, body: `{"error":"unknown customer cus_1"}`}
	})
	for _, mode := range []string{"lease", "check"} {
		store := dedupe.NewMemory()
		opts := []func(*laneOptions){func(o *laneOptions) { o.Store = store }}
		if mode == "check" {
			opts = []func(*laneOptions){checkMode(store)}
		}
		hs := newHarness(t, sub.URL, secret, opts...)
		if resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1))); len(resp.BatchItemFailures) != 1 {
			t.Fatalf("%s: failures %v, want the message retried", mode, resp.BatchItemFailures)
		}
		r, _, _ := store.Get(context.Background(), dedupe.Key("orders", "e1"))
		if len(r.History) != 1 || string(r.History[0].Answer) != `{"error":"unknown customer cus_1"}` || r.History[0].HTTPStatus != 422 {
			t.Errorf("%s: history %+v, want the 422's answer kept", mode, r.History)
		}
	}
}

// TestAssembleTimeIndex: with dedupe.timeIndex false the contract says
// so (HOOKFAN_TIME_INDEX=off, read back), and the assembled store, in
// either dedupe mode, writes records with their first attempt but no
// time index key; by default the variable is not rendered and the first
// write files the record in the index. A store that cannot leave the key
// out is refused by name, and so is an unknown value.
func TestAssembleTimeIndex(t *testing.T) {
	ctx := context.Background()
	clients := func(s Store) Clients {
		return Clients{Store: s, SQS: sqs.New(sqs.Options{Region: "us-east-1"}),
			Secrets: secrets.NewCache(secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})),
			Metrics: metrics.NewEMF(io.Discard), Logger: slog.New(slog.DiscardHandler)}
	}
	off := false
	for _, tc := range []struct {
		name    string
		index   *bool
		mode    string
		indexed bool
	}{
		{"default", nil, config.DedupeLease, true},
		{"off", &off, config.DedupeLease, false},
		{"off, check mode", &off, config.DedupeCheck, false},
	} {
		cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks"}`)
		cfg.Dedupe.TimeIndex, cfg.Dedupe.Mode = tc.index, tc.mode
		rendered := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: "https://sqs/queue", SecretID: "orders-secret"}).Render()
		if v, ok := rendered[EnvTimeIndex]; ok != !tc.indexed || ok && v != TimeIndexOff {
			t.Errorf("%s: %s rendered %q (%v), want %q only when off", tc.name, EnvTimeIndex, v, ok, TimeIndexOff)
		}
		env, err := ReadEnv(func(k string) string { return rendered[k] })
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		store := dedupe.NewMemory()
		h, err := Assemble(env, clients(store))
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		now := time.Date(2026, 12, 3, 15, 4, 5, 0, time.UTC)
		lease, err := h.store.Claim(ctx, dedupe.ClaimInput{PK: "orders#e1", Source: "stripe", Type: "t", Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.store.Finish(ctx, lease, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 200, At: now.Add(time.Second)}); err != nil {
			t.Fatal(err)
		}
		r, _, _ := store.Get(ctx, "orders#e1")
		want := ""
		if tc.indexed {
			want = dedupe.TimeBucket("orders#e1", now)
		}
		if r.Status != dedupe.StatusDelivered || !r.FirstAttemptAt.Equal(now) || r.TimeBucket != want {
			t.Errorf("%s: record %s, first attempt %s, bucket %q; want DELIVERED, %s, %q", tc.name, r.Status, r.FirstAttemptAt, r.TimeBucket, now, want)
		}
		var listed int
		_ = store.Window(ctx, now.Add(-time.Hour), now.Add(time.Hour), func(dedupe.IndexEntry) error { listed++; return nil })
		if listed != map[bool]int{true: 1, false: 0}[tc.indexed] {
			t.Errorf("%s: the index lists %d records", tc.name, listed)
		}
		if !tc.indexed {
			if _, err := Assemble(env, clients(leaseOnly{})); err == nil || !strings.Contains(err.Error(), "dedupe.timeIndex") {
				t.Errorf("%s: Assemble of a store that cannot leave the index out = %v, want an error naming dedupe.timeIndex", tc.name, err)
			}
		}
	}
	bad := map[string]string{EnvTimeIndex: "false"}
	if _, err := ReadEnv(func(k string) string { return bad[k] }); err == nil || !strings.Contains(err.Error(), EnvTimeIndex+` = "false": want "off"`) {
		t.Errorf("ReadEnv of %s=false = %v, want it named with the fix", EnvTimeIndex, err)
	}
}
