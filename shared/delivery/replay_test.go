package delivery

import (
	"context"
	"errors"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
)

// replayOf is the message an operator's replay sends for event id.
func replayOf(id, replay, name string) events.SQSMessage {
	m := sqsRecord(id, 1)
	m.MessageId, m.ReceiptHandle = "msg-"+name, "rh-"+name
	m.MessageAttributes[message.AttrReplay] = events.SQSMessageAttribute{StringValue: &replay, DataType: "String"}
	return m
}

// TestReplay: a replayed message is delivered although the event was
// delivered before, with the same webhook-id, signed; a copy of the same
// replayed message is acknowledged without a POST; another replay delivers
// again; an ordinary copy stays a duplicate. The record shows the replays.
func TestReplay(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-1"})
	steps := []struct {
		msg       events.SQSMessage
		wantPosts int
	}{
		{sqsRecord("e1", 1), 1},
		{replayOf("e1", "rpl_a", "replay-a"), 2},
		{replayOf("e1", "rpl_a", "replay-a-copy"), 2}, // SQS delivered the replayed message twice
		{replayOf("e1", "rpl_b", "replay-b"), 3},
		{sqsRecord("e1", 1), 3}, // the provider resends the event
	}
	for i, s := range steps {
		hs.clock.Advance(time.Minute)
		resp, _ := hs.h.Handle(ctx, batch(s.msg))
		if len(resp.BatchItemFailures) != 0 {
			t.Fatalf("step %d: failures %v", i, resp.BatchItemFailures)
		}
		if n := sub.posts("e1"); n != s.wantPosts {
			t.Fatalf("step %d (%s): %d POSTs, want %d", i, s.msg.MessageId, n, s.wantPosts)
		}
	}
	for _, r := range sub.requests() {
		if r.err != nil || r.header.Get(https.HeaderID) != "e1" {
			t.Errorf("a POST with webhook-id %q did not verify: %v", r.header.Get(https.HeaderID), r.err)
		}
	}
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	var replays []string
	for _, a := range r.History {
		replays = append(replays, a.Replay)
		if a.ClaimedBy != "req-1" || a.Outcome != dedupe.StatusDelivered || a.HTTPStatus != http.StatusOK {
			t.Errorf("history entry %+v", a)
		}
	}
	if diff := cmp.Diff([]string{"", "rpl_a", "rpl_b"}, replays); diff != "" || r.Status != dedupe.StatusDelivered || r.Attempts != 3 {
		t.Errorf("record %s after %d claims; history replays (-want +got):\n%s", r.Status, r.Attempts, diff)
	}
	if diff := cmp.Diff([]string{"rpl_a", "rpl_b"}, r.Replays); diff != "" {
		t.Errorf("replays (-want +got):\n%s", diff)
	}
	if got := hs.sink.sum(metrics.DeliveryDuplicate); got != 2 {
		t.Errorf("DeliveryDuplicate = %g, want 2 (the replay's copy, the provider's copy)", got)
	}
}

// TestReplayAfterGone: an operator's replay sends an event the destination
// answered 410 for; ordinary copies stay acknowledged without a POST.
func TestReplayAfterGone(t *testing.T) {
	secret := newSecret(t)
	gone := true
	sub := newSubscriber(t, secret, func(string) reply {
		if gone {
			return reply{status: http.StatusGone}
		}
		return reply{status: http.StatusNoContent}
	})
	hs := newHarness(t, sub.URL, secret)
	hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	gone = false
	hs.clock.Advance(time.Minute)
	hs.h.Handle(context.Background(), batch(replayOf("e1", "rpl_a", "replay")))
	hs.clock.Advance(time.Minute)
	hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	if n := sub.posts("e1"); n != 2 {
		t.Errorf("%d POSTs, want 2 (the first, answered 410, and the replay)", n)
	}
	if r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1")); r.Status != dedupe.StatusDelivered {
		t.Errorf("record %s, want DELIVERED by the replay", r.Status)
	}
}

// TestReplayAndOriginalInOneBatch: a replayed message and an ordinary copy
// of the same event in one batch are not copies of each other: the replay
// is attempted; the ordinary copy finds the event delivered, or, should it
// run while the replay holds the lease, comes back and finds it then.
func TestReplayAndOriginalInOneBatch(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := newHarness(t, sub.URL, secret)
	hs.h.Handle(context.Background(), batch(sqsRecord("e1", 1)))
	hs.clock.Advance(time.Minute)
	orig := sqsRecord("e1", 1)
	orig.MessageId, orig.ReceiptHandle = "msg-orig-again", "rh-orig-again"
	resp, _ := hs.h.Handle(context.Background(), batch(orig, replayOf("e1", "rpl_a", "replay")))
	switch got := failures(resp); {
	case len(got) == 0:
	case len(got) == 1 && got[0] == "msg-orig-again":
		hs.clock.Advance(time.Minute) // past the replay's lease
		if resp, _ := hs.h.Handle(context.Background(), batch(orig)); len(resp.BatchItemFailures) != 0 {
			t.Errorf("the ordinary copy again: failures %v, want a duplicate acknowledged", resp.BatchItemFailures)
		}
	default:
		t.Errorf("failures %v: the replay must not wait", got)
	}
	if n := sub.posts("e1"); n != 2 {
		t.Errorf("%d POSTs, want 2 (the original, then the replay)", n)
	}
}

// TestHistoryOfFailures: each attempt is recorded with its time, status,
// latency, error and claimer; a failed attempt records when the next is
// due; the summary fields stay.
func TestHistoryOfFailures(t *testing.T) {
	secret := newSecret(t)
	n := 0
	sub := newSubscriber(t, secret, func(string) reply {
		n++
		if n == 1 {
			return reply{status: http.StatusServiceUnavailable}
		}
		return reply{status: http.StatusNoContent}
	})
	hs := newHarness(t, sub.URL, secret)
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-first"})
	start := hs.clock.Now()
	hs.h.Handle(ctx, batch(sqsRecord("e1", 1)))
	r, _, _ := hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	// The default schedule's first delay is 5 s (jitter drawn at its middle).
	if r.Status != dedupe.StatusFailed || !r.NextAttemptAt.Equal(start.Add(5*time.Second)) || len(r.History) != 1 {
		t.Fatalf("after a 503: %s, next attempt %s (want %s), %d history entries", r.Status, r.NextAttemptAt, start.Add(5*time.Second), len(r.History))
	}
	hs.clock.Advance(5 * time.Second)
	ctx = lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "req-second"})
	hs.h.Handle(ctx, batch(sqsRecord("e1", 2)))
	r, _, _ = hs.store.Get(context.Background(), dedupe.Key("orders", "e1"))
	got := []any{r.Status, r.Attempts, r.LastStatus, r.NextAttemptAt.IsZero(), len(r.History)}
	if diff := cmp.Diff([]any{dedupe.StatusDelivered, 2, 204, true, 2}, got); diff != "" {
		t.Fatalf("record (-want +got):\n%s", diff)
	}
	first, second := r.History[0], r.History[1]
	if first.Outcome != dedupe.StatusFailed || first.HTTPStatus != 503 || first.Error != "HTTP 503" || first.ClaimedBy != "req-first" || !first.At.Equal(start) || first.Latency <= 0 {
		t.Errorf("first attempt %+v", first)
	}
	if second.Outcome != dedupe.StatusDelivered || second.HTTPStatus != 204 || second.Error != "" || second.ClaimedBy != "req-second" {
		t.Errorf("second attempt %+v", second)
	}
}

func TestParseReplayAttribute(t *testing.T) {
	m, err := ParseMessage(replayOf("e1", "rpl_20260501T130000Z_a1b2c3", "x"))
	if err != nil || m.Replay != "rpl_20260501T130000Z_a1b2c3" {
		t.Errorf("replay message: %q, %v", m.Replay, err)
	}
	if m, err := ParseMessage(sqsRecord("e1", 1)); err != nil || m.Replay != "" {
		t.Errorf("ordinary message: replay %q, %v", m.Replay, err)
	}
	_, err = ParseMessage(replayOf("e1", "bogus id", "x"))
	if !errors.Is(err, ErrMalformed) {
		t.Errorf("a bad replay id: %v, want malformed", err)
	}
}
