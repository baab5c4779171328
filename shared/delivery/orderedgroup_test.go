package delivery

import (
	"context"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
)

// fifoGroup plays one message group of an SQS FIFO queue and its event
// source mapping against a handler: a batch holds the group's oldest
// visible messages in order, every receive counts, and a message received
// more than maxReceiveCount times goes to the DLQ instead of the batch.
// The handler's answer deletes what it acknowledged and hides the rest for
// the visibility it set.
type fifoGroup struct {
	hs    *harness
	queue []*fifoMessage
	dlq   []string
}

type fifoMessage struct {
	rec       events.SQSMessage
	receives  int
	visibleAt time.Time
}

func newFIFOGroup(hs *harness, group string, recs ...events.SQSMessage) *fifoGroup {
	g := &fifoGroup{hs: hs}
	for _, r := range recs {
		r.Attributes[MessageGroupIDAttribute] = group
		g.queue = append(g.queue, &fifoMessage{rec: r})
	}
	return g
}

// drain runs batches until the group is empty, at most rounds of them.
func (g *fifoGroup) drain(t *testing.T, rounds int) {
	t.Helper()
	maxReceive := g.hs.h.dest.MaxReceiveCount()
	for round := 0; len(g.queue) > 0; round++ {
		if round == rounds {
			t.Fatalf("the group still holds %d messages after %d batches", len(g.queue), rounds)
		}
		if head := g.queue[0]; head.visibleAt.After(g.hs.clock.Now()) {
			g.hs.clock.Set(head.visibleAt)
		}
		now := g.hs.clock.Now()
		var got []*fifoMessage
		var recs []events.SQSMessage
		for len(g.queue) > 0 && len(got) < g.hs.h.dest.ReceiveBatch() && !g.queue[0].visibleAt.After(now) {
			m := g.queue[0]
			g.queue = g.queue[1:]
			if m.receives++; m.receives > maxReceive {
				g.dlq = append(g.dlq, *m.rec.MessageAttributes[message.AttrID].StringValue)
				continue
			}
			r := m.rec
			r.Attributes = maps.Clone(r.Attributes)
			r.Attributes["ApproximateReceiveCount"] = strconv.Itoa(m.receives)
			r.ReceiptHandle = r.MessageId + "-" + strconv.Itoa(m.receives)
			got, recs = append(got, m), append(recs, r)
		}
		if len(recs) == 0 {
			continue
		}
		resp, err := g.hs.h.Handle(context.Background(), batch(recs...))
		if err != nil {
			t.Fatal(err)
		}
		failed := failures(resp)
		vis := g.hs.sqs.visibility()
		var back []*fifoMessage
		for i, m := range got {
			if !slices.Contains(failed, recs[i].MessageId) {
				continue // acknowledged: deleted
			}
			m.visibleAt = now
			if v := vis[recs[i].ReceiptHandle]; len(v) > 0 {
				m.visibleAt = now.Add(time.Duration(v[len(v)-1]) * time.Second)
			}
			back = append(back, m)
		}
		g.queue = append(back, g.queue...)
	}
}

// TestOrderedGivenUpEventHoldsNoKeyBack: an event of an ordered lane that
// is given up — its attempts spent, its transform failing, its message
// malformed — goes to the DLQ and its key moves on: the next event of the
// key is delivered, not dead-lettered beside it. Before, the given-up
// event held its key's later events back on each of the receives it spent
// on its way to the DLQ, each of those counted against them too, and they
// reached maxReceiveCount with it, never attempted.
func TestOrderedGivenUpEventHoldsNoKeyBack(t *testing.T) {
	short := func(o *laneOptions) {
		o.Destination.Retry = config.Retry{Schedule: []config.Duration{config.Duration(time.Second)}}
		o.Destination.BatchSize = 2
	}
	malformed := sqsRecord("h", 1)
	delete(malformed.MessageAttributes, message.AttrType)
	follower := sqsRecord("f", 1)
	follower.Body = `{"id":"f","type":"invoice.paid","amount":{"value":4200}}` // a body the transform below takes
	for _, tt := range []struct {
		name string
		opts []func(*laneOptions)
		head events.SQSMessage
		// failing: the subscriber answers 500 to the head.
		failing bool
	}{
		{"attempts spent, one attempt and batches of two", []func(*laneOptions){short}, sqsRecord("h", 1), true},
		{"attempts spent, the defaults", nil, sqsRecord("h", 1), true},
		{"transform failing on the head", []func(*laneOptions){withTransform(`.amount | keys`)}, sqsRecord("h", 1), false},
		{"malformed head", nil, malformed, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, func(id string) reply {
				if id == "h" && tt.failing {
					return reply{status: http.StatusInternalServerError}
				}
				return reply{status: http.StatusOK}
			})
			hs := newHarness(t, sub.URL, secret, append([]func(*laneOptions){ordered}, tt.opts...)...)
			g := newFIFOGroup(hs, "stripe:K", tt.head, follower)
			g.drain(t, 5000)
			if !slices.Equal(g.dlq, []string{"h"}) || sub.posts("f") != 1 {
				t.Errorf("dead-lettered %v, f POSTed %d times; want only h dead-lettered and f delivered once (maxReceiveCount %d)",
					g.dlq, sub.posts("f"), hs.h.dest.MaxReceiveCount())
			}
			if tt.failing && sub.posts("h") != hs.h.policy.Attempts() {
				t.Errorf("h POSTed %d times, want its %d attempts", sub.posts("h"), hs.h.policy.Attempts())
			}
			if i := slices.IndexFunc(sub.requests(), func(r received) bool { return r.header.Get(https.HeaderID) == "f" }); i >= 0 && i < len(sub.requests())-1 {
				t.Errorf("f was POSTed before h's last attempt: %d of %d requests", i+1, len(sub.requests()))
			}
		})
	}
}

// TestOrderedCopyCarriedInKeyOrder: when two copies of an event share a
// batch of an ordered lane (a provider resending after the FIFO
// deduplication window), the first in batch order carries it, though a
// later one has fewer receives: carrying it at the later copy's place
// would send it after its key's events accepted after it.
func TestOrderedCopyCarriedInKeyOrder(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusOK} })
	hs := newHarness(t, sub.URL, secret, ordered)
	first := orderedRecord("a", "stripe:K", 3)
	first.MessageId, first.ReceiptHandle = "msg-a-first", "rh-a-first"
	again := orderedRecord("a", "stripe:K", 1)
	again.MessageId, again.ReceiptHandle = "msg-a-again", "rh-a-again"
	resp, err := hs.h.Handle(context.Background(), batch(first, orderedRecord("b", "stripe:K", 2), again))
	if err != nil || len(resp.BatchItemFailures) != 0 {
		t.Fatalf("batch: %v %v", resp, err)
	}
	var got []string
	for _, r := range sub.requests() {
		got = append(got, r.header.Get(https.HeaderID))
	}
	if !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("key K delivered %v, want [a b]: a was accepted before b", got)
	}
}
