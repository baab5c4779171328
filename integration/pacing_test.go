//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pacing/pacingtest"
	"github.com/hookfan/hookfan/shared/pausing"
)

// TestPacingStoreOnDynamoDB runs the bucket's contract against the
// emulator's DynamoDB over the wire, on a table with the record table's
// key schema: 50 concurrent takers, each with a store of its own (as each
// function instance has), hold rate×t+burst on an injected clock. moto's
// conditional writes are not atomic, so the stores go through the local
// stack's per-item lock, as the local stack's do (docs/local.md); the
// conditions, the refusals and the state each refusal returns are the
// emulator's. The check with leases at 200/s runs 8 takers (each calls
// every few milliseconds; the memory twin's run has 50).
func TestPacingStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	attrs, key := ddbitem.KeySchema()
	if _, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key,
	}); err != nil {
		t.Fatal(err)
	}
	locks := &sync.Map{}
	store := func() pacing.Store { return devstack.NewPaceLocked(pacing.NewDynamoDB(clients.DynamoDB, table), locks) }
	pacingtest.Run(t, store(), pacingtest.Lanes("dest"), pacingtest.Options{NewStore: store, LeaseTakers: 8})

	// The bucket shares the lane's item with its pause state: each keeps
	// the other's attributes.
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lanes := pausing.NewDynamoDB(clients.DynamoDB, table)
	if _, err := lanes.Count(ctx, "shared", pausing.Tally{Attempts: 1, Failures: 1, Trailing: 1}, at, 0); err != nil {
		t.Fatal(err)
	}
	p := pacing.NewDynamoDB(clients.DynamoDB, table)
	if _, err := p.SetOverride(ctx, "shared", pacing.Override{N: 1, Per: time.Second, At: at, Until: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if s, err := lanes.Get(ctx, "shared"); err != nil || s.Failures != 1 {
		t.Errorf("pause state after an override: %+v, %v", s, err)
	}
	if _, err := lanes.Count(ctx, "shared", pausing.Tally{Attempts: 1, Failures: 1, Trailing: 1}, at, 0); err != nil {
		t.Fatal(err)
	}
	if s, err := p.Get(ctx, "shared"); err != nil || s.Override == nil || s.Override.N != 1 {
		t.Errorf("pacing state after a count: %+v, %v", s, err)
	}
}

// windowExcess is, over the requests' arrival times (sorted), the largest
// count in any window less rate × its length; and that count and length.
func windowExcess(at []time.Time, rate float64) (excess float64, count int, span time.Duration) {
	excess = -1
	for i := range at {
		for j := i; j < len(at); j++ {
			d := at[j].Sub(at[i])
			if x := float64(j-i+1) - rate*d.Seconds(); x > excess {
				excess, count, span = x, j-i+1, d
			}
		}
	}
	return excess, count, span
}

// waitDrained waits until a lane's queue and DLQ hold nothing, in flight
// or delayed, twice in a row: every copy delivered or dropped.
func waitDrained(t *testing.T, timeout time.Duration, urls ...string) {
	t.Helper()
	empty := 0
	waitFor(t, timeout, "the lane's queues empty", func() bool {
		n := 0
		for _, u := range urls {
			n += depth(t, u)
		}
		if n != 0 {
			empty = 0
			return false
		}
		empty++
		return empty >= 2
	})
}

// TestPacedLaneHoldsItsRate is issue #33's acceptance: 50 events sent at
// once to a lane limited to 5 a second, maxConcurrency 5, reach the
// receiver at most 5 × t + burst in any window of t seconds (the
// receiver's timestamps), each exactly once, every record at attempt 1,
// the DLQ empty.
func TestPacedLaneHoldsItsRate(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("paced", rc, `"rateLimit": {"perSecond": 5}, "maxConcurrency": 5`)}, map[string]*receiver{"paced": rc},
		func(o *devstack.Options) { o.Pollers = 5 })
	lane, _ := e.stack.Topology.Lane("paced")
	const n, rate, burst = 50, 5.0, 5
	start := time.Now()
	ids := e.sendAtOnce(n, 10, "evt_paced")
	waitFor(t, 60*time.Second, "every event delivered", func() bool { return len(rc.deliveries()) >= n })
	waitDrained(t, 30*time.Second, lane.QueueURL, lane.DLQURL)

	var at, handled []time.Time
	for _, d := range rc.deliveries() {
		at, handled = append(at, d.at), append(handled, d.handled)
		if a := d.header.Get("hookfan-attempt"); a != "1" {
			t.Errorf("%s arrived as attempt %s, want 1", d.header.Get("webhook-id"), a)
		}
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	excess, count, span := windowExcess(at, rate)
	slices.SortFunc(handled, func(a, b time.Time) int { return a.Compare(b) })
	hexcess, hcount, hspan := windowExcess(handled, rate)
	paced := 0
	for _, id := range ids {
		if c := rc.accepted(id); c != 1 {
			t.Errorf("%s accepted %d times, want once", id, c)
		}
		r, ok := e.record("paced", id)
		if !ok || r.Status != dedupe.StatusDelivered || r.Attempts != 1 {
			t.Errorf("%s: record %+v (found %v); want DELIVERED at attempt 1", id, r, ok)
			continue
		}
		if len(r.History) > 0 && r.History[0].Paced > 0 {
			paced++
		}
	}
	t.Logf("%d deliveries in %s (from the first send); busiest window: %d requests in %s, bound 5×t+5 = %.2f (excess over 5×t: %.2f of %d allowed); %d events paced by copy",
		len(at), at[len(at)-1].Sub(start).Round(time.Millisecond), count, span.Round(time.Millisecond), rate*span.Seconds()+burst, excess, burst, paced)
	t.Logf("as the receiver's handler ran (later on a busy machine): busiest window %d requests in %s (excess over 5×t: %.2f)", hcount, hspan.Round(time.Millisecond), hexcess)
	if excess > burst {
		t.Errorf("%d requests in %s: more than 5 × t + %d", count, span, burst)
	}
	if len(at) != n {
		t.Errorf("the receiver got %d requests, want %d", len(at), n)
	}
	if paced == 0 {
		t.Error("no record shows it was paced: 50 events at 5 a second must defer some")
	}
	if got := depth(t, lane.DLQURL); got != 0 {
		t.Errorf("the DLQ holds %d messages, want none", got)
	}
}

// TestAdaptivePacingFindsTheReceiversRate: with rateLimit.adaptive, a
// receiver that allows 2 requests a second and answers 429 above gets at
// most 10% 429s after the first 10 seconds.
func TestAdaptivePacingFindsTheReceiversRate(t *testing.T) {
	t.Parallel()
	// The receiver's limit is what a rateLimit of 2 a second means: a
	// token bucket of 2 a second with a burst of 2 (a GCRA).
	var (
		mu  sync.Mutex
		tat time.Time
	)
	const interval, burst = 500 * time.Millisecond, 2
	rc := newReceiver(t, func(_ int, _ *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		now := time.Now()
		next := now.Add(interval)
		if tat.After(now) {
			next = tat.Add(interval)
		}
		if next.Sub(now) > burst*interval {
			return http.StatusTooManyRequests
		}
		tat = next
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("adaptive", rc, `"rateLimit": {"perSecond": 5, "adaptive": true}, "maxConcurrency": 5, "retry": {"schedule": ["1s", "2s", "4s", "8s", "16s"], "jitter": 0}`)},
		map[string]*receiver{"adaptive": rc}, func(o *devstack.Options) { o.Pollers = 5 })
	lane, _ := e.stack.Topology.Lane("adaptive")
	const n = 50
	start := time.Now()
	ids := e.sendAtOnce(n, 10, "evt_adaptive")
	waitFor(t, 120*time.Second, "every event accepted", func() bool {
		for _, id := range ids {
			if rc.accepted(id) == 0 {
				return false
			}
		}
		return true
	})
	waitDrained(t, 60*time.Second, lane.QueueURL, lane.DLQURL)
	var all, late, late429, total429 int
	first := rc.deliveries()[0].at
	var last time.Time
	for _, d := range rc.deliveries() {
		all++
		if d.status == http.StatusTooManyRequests {
			total429++
		}
		if d.at.Sub(first) >= 10*time.Second {
			late++
			if d.status == http.StatusTooManyRequests {
				late429++
			}
		}
		last = d.at
	}
	share := float64(late429) / float64(max(late, 1))
	t.Logf("%d requests (%d 429s) in %s from the first send; after the first 10 s: %d requests, %d 429s (%.1f%%)",
		all, total429, last.Sub(start).Round(time.Millisecond), late, late429, 100*share)
	if share > 0.10 {
		var seq []string
		for _, d := range rc.deliveries() {
			seq = append(seq, fmt.Sprintf("%.2fs:%d", d.at.Sub(first).Seconds(), d.status))
		}
		t.Errorf("%.1f%% of the requests after the first 10 s were 429s, want at most 10%%; requests (time since the first: status): %v", 100*share, seq)
	}
	for _, id := range ids {
		if c := rc.accepted(id); c != 1 {
			t.Errorf("%s accepted %d times, want once", id, c)
		}
	}
	if got := depth(t, lane.DLQURL); got != 0 {
		t.Errorf("the DLQ holds %d messages, want none", got)
	}
}

// TestPacedOrderedLaneKeepsEachKeysOrder: an ordered lane limited to 2 a
// second delivers each key's events in order, each once, within the
// bound, the DLQ empty.
func TestPacedOrderedLaneKeepsEachKeysOrder(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("po", rc, orderedKey+`, "rateLimit": {"perSecond": 2}`)}, map[string]*receiver{"po": rc})
	lane, _ := e.stack.Topology.Lane("po")
	const n = 6
	want := map[string][]string{}
	for i := range n {
		for _, k := range []string{"A", "B", "C"} {
			want[k] = append(want[k], e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_po_%s_%s_%02d", e.prefix, k, i), object(k)).id)
		}
	}
	waitFor(t, 60*time.Second, "every event delivered", func() bool { return len(rc.deliveries()) >= 3*n })
	waitDrained(t, 30*time.Second, lane.QueueURL, lane.DLQURL)
	got := acceptedByKey(rc)
	for _, k := range []string{"A", "B", "C"} {
		if !slices.Equal(got[k], want[k]) {
			t.Errorf("key %s delivered\n  %v\nwant\n  %v", k, got[k], want[k])
		}
	}
	var at []time.Time
	for _, d := range rc.deliveries() {
		at = append(at, d.at)
	}
	slices.SortFunc(at, func(a, b time.Time) int { return a.Compare(b) })
	excess, count, span := windowExcess(at, 2)
	t.Logf("%d deliveries; busiest window: %d requests in %s (excess over 2×t: %.2f of 2 allowed)", len(at), count, span.Round(time.Millisecond), excess)
	if excess > 2 || len(at) != 3*n {
		t.Errorf("%d requests, %d within %s: want %d, at most 2 × t + 2", len(at), count, span, 3*n)
	}
	if got := depth(t, lane.DLQURL); got != 0 {
		t.Errorf("the DLQ holds %d messages, want none", got)
	}
}
