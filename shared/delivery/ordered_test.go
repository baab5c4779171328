package delivery

import (
	"context"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
)

func orderedRecord(id, group string, attempt int) events.SQSMessage {
	r := sqsRecord(id, attempt)
	r.Attributes[MessageGroupIDAttribute] = group
	return r
}

func ordered(o *laneOptions) {
	o.Destination.Ordering = &config.Ordering{Key: "body:id"}
}

// TestOrderedBatch: one key's events go one after another; when one fails
// every later event of its key comes back unsent (visible at once, the
// failed one hidden for its delay), and the other keys go on.
func TestOrderedBatch(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(id string) reply {
		if id == "a2" {
			return reply{status: http.StatusInternalServerError}
		}
		return reply{status: http.StatusOK}
	})
	hs := newHarness(t, sub.URL, secret, ordered)
	resp, _ := hs.h.Handle(context.Background(), batch(
		orderedRecord("a1", "stripe:A", 1), orderedRecord("b1", "stripe:B", 1), orderedRecord("a2", "stripe:A", 1),
		orderedRecord("b2", "stripe:B", 1), orderedRecord("a3", "stripe:A", 1), orderedRecord("a4", "stripe:A", 1),
		orderedRecord("b3", "stripe:B", 1),
	))
	if diff := cmp.Diff([]string{"msg-a2-1", "msg-a3-1", "msg-a4-1"}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	var a, b []string
	for _, r := range sub.requests() {
		if r.err != nil {
			t.Errorf("signature: %v", r.err)
		}
		id := r.header.Get(https.HeaderID)
		if id[0] == 'a' {
			a = append(a, id)
		} else {
			b = append(b, id)
		}
		if r.header.Get(https.HeaderAcceptedAt) == "" {
			t.Errorf("%s carries no %s", id, https.HeaderAcceptedAt)
		}
	}
	if !slices.Equal(a, []string{"a1", "a2"}) || !slices.Equal(b, []string{"b1", "b2", "b3"}) {
		t.Errorf("key A got %v (want a1 a2), key B %v (want b1 b2 b3)", a, b)
	}
	vis := hs.sqs.visibility()
	if got := vis["rh-a2"]; len(got) != 1 || got[0] != 5 {
		t.Errorf("a2 hidden %v, want its first delay (5 s)", got)
	}
	for _, rh := range []string{"rh-a3", "rh-a4"} {
		if got := vis[rh]; len(got) != 1 || got[0] != 0 {
			t.Errorf("%s visibility %v, want 0 (the failed a2 keeps the group locked)", rh, got)
		}
	}
}

// TestOrderedAttemptNumbers: receives spent waiting behind another event
// are no attempts: the attempt is numbered by the record's claims, and a
// record past its last attempt is released unsent.
func TestOrderedAttemptNumbers(t *testing.T) {
	secret := newSecret(t)
	fail := true
	sub := newSubscriber(t, secret, func(string) reply {
		if fail {
			return reply{status: http.StatusInternalServerError}
		}
		return reply{status: http.StatusOK}
	})
	hs := newHarness(t, sub.URL, secret, ordered, func(o *laneOptions) {
		o.Destination.Retry = config.Retry{Schedule: []config.Duration{config.Duration(time.Second)}}
	})
	// Received 7 times, all of them spent waiting: this is its first attempt.
	resp, _ := hs.h.Handle(context.Background(), batch(orderedRecord("c1", "stripe:C", 7)))
	if len(failures(resp)) != 1 || sub.requests()[0].header.Get(https.HeaderAttempt) != "1" {
		t.Fatalf("failures %v, attempt header %q; want one failure at attempt 1", failures(resp), sub.requests()[0].header.Get(https.HeaderAttempt))
	}
	// Its second, the last of a one-delay schedule: DEAD.
	hs.clock.Advance(2 * time.Second)
	hs.h.Handle(context.Background(), batch(orderedRecord("c1", "stripe:C", 8)))
	if n := sub.posts("c1"); n != 2 {
		t.Fatalf("%d POSTs, want 2", n)
	}
	// Received again before SQS's count takes it to the DLQ: unsent.
	fail = false
	resp, _ = hs.h.Handle(context.Background(), batch(orderedRecord("c1", "stripe:C", 9)))
	if n := sub.posts("c1"); n != 2 || len(failures(resp)) != 1 {
		t.Errorf("%d POSTs, failures %v; want a spent record released unsent", n, failures(resp))
	}
}

// TestOrderedHold: a paused ordered lane hides its batch in place, never
// sending copies (which would join the back of their keys).
func TestOrderedHold(t *testing.T) {
	h := &Handler{order: keyOrder{}, lane: &lane{holdFor: time.Minute}, queue: queue{url: testQueueURL, api: &fakeSQS{}}, now: time.Now, log: slogJSON(&syncBuffer{}),
		timeouts: CallTimeouts{}.withDefaults()}
	resp := h.order.hold(context.Background(), h, batch(orderedRecord("d1", "g", 1), orderedRecord("d2", "g", 1)))
	if len(resp.BatchItemFailures) != 2 {
		t.Fatalf("failures %v, want both", failures(resp))
	}
	for _, rh := range []string{"rh-d1", "rh-d2"} {
		if got := h.queue.api.(*fakeSQS).visibility()[rh]; len(got) != 1 || got[0] != 60 {
			t.Errorf("%s visibility %v, want 60 s", rh, got)
		}
	}
}
