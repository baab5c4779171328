//go:build integration

package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// batchBody is a batch's envelope as a receiver reads it.
type batchBody struct {
	Events []struct {
		ID   string          `json:"id"`
		Type string          `json:"type"`
		Data json.RawMessage `json:"data"`
	} `json:"events"`
}

// batchIDs reads the event ids of a batch POST, and its ordering keys.
func batchIDs(t *testing.T, d got) (ids, keys []string) {
	t.Helper()
	var b batchBody
	if err := json.Unmarshal(d.body, &b); err != nil {
		t.Fatalf("batch %s is not an envelope: %v", d.header.Get("webhook-id"), err)
	}
	for _, ev := range b.Events {
		ids = append(ids, ev.ID)
		keys = append(keys, keyOf(got{body: ev.Data}))
	}
	return ids, keys
}

// acceptedItems counts, per event id, the batches answered 2xx that
// carried it.
func acceptedItems(t *testing.T, rc *receiver) map[string]int {
	out := map[string]int{}
	for _, d := range rc.deliveries() {
		if d.status >= 200 && d.status < 300 && d.header.Get("hookfan-batch-size") != "" {
			ids, _ := batchIDs(t, d)
			for _, id := range ids {
				out[id]++
			}
		}
	}
	return out
}

// TestBatchedLaneDeliversEveryEventOnce: 40 events on a lane batching up
// to 10 in a 1 s window reach the receiver in POSTs of at most 10 events,
// each verified by the Standard Webhooks library over its raw body and
// naming its size; the first POST is answered 500: its events come again
// in a later POST, and once a POST carrying an event is answered 2xx,
// no later POST carries it. Every event is accepted exactly once and its
// record is DELIVERED in a named batch.
func TestBatchedLaneDeliversEveryEventOnce(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("b", rc, `"batch": {"maxEvents": 10, "windowSeconds": 1}, "retry": {"schedule": ["1s", "1s", "1s"], "jitter": 0}`)},
		map[string]*receiver{"b": rc})
	lane, _ := e.stack.Topology.Lane("b")
	const n = 40
	start := time.Now()
	ids := e.sendAtOnce(n, 8, "evt_batch")
	waitFor(t, 60*time.Second, "every event accepted", func() bool { return len(acceptedItems(t, rc)) >= n })
	waitDrained(t, 30*time.Second, lane.QueueURL, lane.DLQURL)
	e.settled()

	posts := rc.deliveries()
	var failedFirst []string
	deliveredAt := map[string]int{} // event → index of the POST that delivered it
	sizes := 0
	for k, d := range posts {
		if !d.verified {
			t.Errorf("POST %d (%s) does not verify", k, d.header.Get("webhook-id"))
		}
		got, _ := batchIDs(t, d)
		sizes += len(got)
		if len(got) == 0 || len(got) > 10 {
			t.Errorf("POST %d carries %d events, want 1 to 10", k, len(got))
		}
		if h := d.header.Get("hookfan-batch-size"); h != fmt.Sprint(len(got)) {
			t.Errorf("POST %d: hookfan-batch-size %q for %d events", k, h, len(got))
		}
		if k == 0 {
			failedFirst = got
		}
		for _, id := range got {
			if at, ok := deliveredAt[id]; ok {
				t.Errorf("%s sent in POST %d after POST %d delivered it", id, k, at)
			}
			if d.status >= 200 && d.status < 300 {
				deliveredAt[id] = k
			}
		}
	}
	if len(failedFirst) == 0 {
		t.Fatal("the first POST carried no events")
	}
	for _, id := range failedFirst {
		if at, ok := deliveredAt[id]; !ok || at == 0 {
			t.Errorf("%s of the failed first POST was not delivered later (at %d, %v)", id, at, ok)
		}
	}
	accepted := acceptedItems(t, rc)
	for _, id := range ids {
		if accepted[id] != 1 {
			t.Errorf("%s accepted %d times, want once", id, accepted[id])
		}
		r, ok := e.record("b", id)
		if !ok || r.Status != dedupe.StatusDelivered || len(r.History) == 0 || r.History[len(r.History)-1].Batch == "" {
			t.Errorf("%s: record %+v (found %v); want DELIVERED in a batch", id, r, ok)
		}
	}
	t.Logf("%d events in %d POSTs (%.1f events a POST, the first failed with %d events) in %s",
		n, len(posts), float64(sizes)/float64(len(posts)), len(failedFirst), time.Since(start).Round(time.Millisecond))
	if got := depth(t, lane.DLQURL); got != 0 {
		t.Errorf("DLQ holds %d messages", got)
	}
}

// TestBatchedOrderedLaneKeepsEachKeysOrder: three keys, 8 events each, on
// an ordered lane batching up to 10; the first POST fails. Each key's
// events are accepted once each, in send order, and within every POST a
// key's events are consecutive.
func TestBatchedOrderedLaneKeepsEachKeysOrder(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusInternalServerError
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("bo", rc, orderedKey+`, "batch": {"maxEvents": 10}, "retry": {"schedule": ["1s", "1s", "1s"], "jitter": 0}`)},
		map[string]*receiver{"bo": rc})
	const n = 8
	want := map[string][]string{}
	for i := range n {
		for _, k := range []string{"A", "B", "C"} {
			want[k] = append(want[k], e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_bo_%s_%s_%02d", e.prefix, k, i), object(k)).id)
		}
	}
	waitFor(t, 60*time.Second, "every event accepted", func() bool { return len(acceptedItems(t, rc)) >= 3*n })
	e.settled()
	gotByKey := map[string][]string{}
	posts := 0
	for k, d := range rc.deliveries() {
		if !d.verified {
			t.Errorf("POST %d does not verify", k)
		}
		ids, keys := batchIDs(t, d)
		posts++
		if len(ids) > 10 {
			t.Errorf("POST %d carries %d events", k, len(ids))
		}
		// A key's events are consecutive within the POST.
		seen := map[string]bool{}
		for j, key := range keys {
			if j > 0 && keys[j-1] != key && seen[key] {
				t.Errorf("POST %d interleaves key %s: %v", k, key, keys)
			}
			seen[key] = true
		}
		if d.status >= 200 && d.status < 300 {
			for j, id := range ids {
				gotByKey[keys[j]] = append(gotByKey[keys[j]], id)
			}
		}
	}
	for _, k := range []string{"A", "B", "C"} {
		if !slices.Equal(gotByKey[k], want[k]) {
			t.Errorf("key %s accepted\n  %v\nwant\n  %v", k, gotByKey[k], want[k])
		}
	}
	t.Logf("%d events of 3 keys in %d POSTs", 3*n, posts)
}
