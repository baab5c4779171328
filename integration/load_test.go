//go:build integration

package integration

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstack"
)

// TestLoad pushes N events through the local stack to M=3 destinations with
// different filters, then checks delivered = Σ accepted × matching
// destinations (every event exactly once per matching destination) and
// reports throughput and event age. N is HOOKFAN_LOAD_EVENTS (default 60;
// `make load` uses 600).
func TestLoad(t *testing.T) {
	n := 60
	if v := os.Getenv("HOOKFAN_LOAD_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 2 {
			t.Fatalf("HOOKFAN_LOAD_EVENTS=%q: want a number ≥ 2", v)
		}
	}
	all, payments, notPush := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{
		destJSON("all", all, ""),
		destJSON("payments", payments, `"filter": {"sources": ["stripe"]}`),
		destJSON("not-push", notPush, `"filter": {"excludeTypes": ["push"]}`),
	}, map[string]*receiver{"all": all, "payments": payments, "not-push": notPush},
		func(o *devstack.Options) { o.Pollers = 2 })

	// Half Stripe events (→ all three destinations), half GitHub pushes (→ "all" only).
	accepted := make(map[string]time.Time, n)
	var mu sync.Mutex
	jobs := make(chan int)
	var wg sync.WaitGroup
	start := time.Now()
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range jobs {
				var s sent
				if i%2 == 0 {
					s = e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_load_%s_%d", e.prefix, i), nil)
				} else {
					s = e.send("github", "github", "push", fmt.Sprintf("%s-load-%d", e.prefix, i), nil)
				}
				mu.Lock()
				accepted[s.id] = s.at
				mu.Unlock()
			}
		}()
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	acceptDur := time.Since(start)
	stripeEvents, pushEvents := (n+1)/2, n/2
	want := stripeEvents*3 + pushEvents
	total := func() int { return len(all.ids()) + len(payments.ids()) + len(notPush.ids()) }
	waitFor(t, time.Duration(n)*time.Second/2+30*time.Second, fmt.Sprintf("%d deliveries", want), func() bool { return total() >= want })
	e.settled()

	if len(accepted) != n {
		t.Fatalf("ingest accepted %d distinct events, want %d", len(accepted), n)
	}
	var ages []time.Duration
	var last time.Time
	for name, rc := range map[string]*receiver{"all": all, "payments": payments, "not-push": notPush} {
		seen := map[string]bool{}
		for _, d := range rc.deliveries() {
			id := d.header.Get("webhook-id")
			if seen[id] {
				t.Errorf("%s got %s twice", name, id)
			}
			seen[id] = true
			if !d.verified {
				t.Errorf("%s: delivery %s did not verify", name, id)
			}
			if at, ok := accepted[id]; ok {
				ages = append(ages, d.at.Sub(at))
			} else {
				t.Errorf("%s got %s, which ingest never accepted", name, id)
			}
			if d.at.After(last) {
				last = d.at
			}
		}
	}
	got := map[string]int{"all": len(all.ids()), "payments": len(payments.ids()), "not-push": len(notPush.ids())}
	wantPer := map[string]int{"all": n, "payments": stripeEvents, "not-push": stripeEvents}
	for k, w := range wantPer {
		if got[k] != w {
			t.Errorf("%s received %d, want %d", k, got[k], w)
		}
	}
	if total() != want {
		t.Errorf("delivered %d, want accepted × matching destinations = %d", total(), want)
	}
	slices.Sort(ages)
	pct := func(p float64) time.Duration { return ages[min(len(ages)-1, int(float64(len(ages))*p))] }
	report := fmt.Sprintf("load: %d events × 3 destinations (%d deliveries) — accepted %.0f/s, delivered %.0f/s, event age p50 %s p99 %s",
		n, want, float64(n)/acceptDur.Seconds(), float64(want)/last.Sub(start).Seconds(),
		pct(0.50).Round(time.Millisecond), pct(0.99).Round(time.Millisecond))
	t.Log(report)
	fmt.Fprintln(os.Stderr, report)
}
