package devstack

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/delivery"
)

// GroupGate keeps an ordered lane's keys (FIFO message groups) in order on
// the local stack whatever the emulator does. SQS hands out no message of
// a group while one of it is in flight; moto 5.2.1 reads which groups are
// in flight once, when a long poll starts, so a poll that began before a
// group's message was received by another poll can hand out the group's
// next message while the first waits for its retry. The gate does two
// things for the lane's pollers (every instance on the queue shares it):
//
//   - one receive at a time on the queue, so that every poll starts after
//     the previous one's messages are in flight and the emulator's own
//     lock is exact (it costs nothing: the handler invocations still run
//     at once);
//   - it remembers the lane's messages in flight (from their receive until
//     they are deleted or visible again, as the deliver function's
//     visibility changes say) and holds a received message whose group has
//     another in flight: the handler never sees it, and it is hidden until
//     that group's message is visible again, when the emulator hands the
//     group's oldest message first.
//
// A hold costs the held message a receive, which the deliver function does
// not count as an attempt (it numbers them by its record) but SQS's redrive
// policy does, so a message whose receive count has reached the queue's
// maxReceiveCount is never held: hiding it would send it to the DLQ at its
// next receive without an attempt, so it goes to the handler, logged.
type GroupGate struct {
	// MaxReceiveCount is the queue's redrive policy's (0: no DLQ).
	MaxReceiveCount int
	// Visibility is the queue's default visibility timeout: how long a
	// message received and not changed stays in flight.
	Visibility time.Duration
	Log        *slog.Logger
	// now is the clock (time.Now; tests set it).
	now func() time.Time

	recv     sync.Mutex
	queued   atomic.Int32 // receives waiting for or in recv
	mu       sync.Mutex
	inflight map[string]map[string]*flight // group → receipt handle → flight
	groupOf  map[string]string             // receipt handle → group
	holds    int
}

// flight is one of the lane's messages in flight.
type flight struct {
	messageID string
	inHand    bool      // a handler has it
	until     time.Time // when it is visible again
}

func (g *GroupGate) clock() time.Time {
	if g.now != nil {
		return g.now()
	}
	return time.Now()
}

func (g *GroupGate) init() {
	if g.inflight == nil {
		g.inflight = map[string]map[string]*flight{}
		g.groupOf = map[string]string{}
	}
}

// Holds is how many received messages the gate has held so far.
func (g *GroupGate) Holds() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.holds
}

// receive runs one ReceiveMessage alone on the queue and splits what it
// returned into the messages for the handler and those to hold, each held
// one with how long to hide it.
func (g *GroupGate) receive(ctx context.Context, api QueueAPI, in *sqs.ReceiveMessageInput) (take []sqstypes.Message, hold []heldMessage, err error) {
	g.queued.Add(1)
	defer g.queued.Add(-1)
	g.recv.Lock()
	defer g.recv.Unlock()
	out, err := api.ReceiveMessage(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	take, hold = g.admit(out.Messages)
	return take, hold, nil
}

// heldMessage is a received message the gate keeps from the handler.
type heldMessage struct {
	msg  sqstypes.Message
	wait time.Duration
}

// admit decides, in the batch's order, which messages go to the handler.
func (g *GroupGate) admit(msgs []sqstypes.Message) (take []sqstypes.Message, hold []heldMessage) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	now := g.clock()
	held := map[string]time.Duration{} // groups held in this batch
	mine := map[string]bool{}          // groups taken in this batch
	for _, m := range msgs {
		group := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
		if group == "" {
			take = append(take, m)
			continue
		}
		id := aws.ToString(m.MessageId)
		wait, blocked := held[group]
		if !blocked && !mine[group] {
			wait, blocked = g.busy(group, id, now)
		}
		if blocked && g.spent(m) {
			g.Log.Warn("a message of a key with another in flight has no receive to spare; handed to the function rather than to the DLQ",
				"message_id", id, "group", group)
			blocked = false
		}
		if blocked {
			held[group] = wait
			hold = append(hold, heldMessage{msg: m, wait: wait})
			g.holds++
			continue
		}
		mine[group] = true
		h := aws.ToString(m.ReceiptHandle)
		if g.inflight[group] == nil {
			g.inflight[group] = map[string]*flight{}
		}
		g.inflight[group][h] = &flight{messageID: id, inHand: true, until: now.Add(g.visibility())}
		g.groupOf[h] = group
		take = append(take, m)
	}
	return take, hold
}

func (g *GroupGate) visibility() time.Duration {
	if g.Visibility > 0 {
		return g.Visibility
	}
	return 30 * time.Second // SQS's default
}

// busy reports whether another message of group is in flight, and how long
// until the last of them is visible again. It forgets what has ended.
func (g *GroupGate) busy(group, messageID string, now time.Time) (time.Duration, bool) {
	var last time.Time
	for h, f := range g.inflight[group] {
		switch {
		case f.messageID == messageID, !f.inHand && !f.until.After(now):
			// The message itself, received again, or one visible again.
			g.forget(group, h)
		case f.until.After(last):
			last = f.until
		}
	}
	if last.IsZero() {
		return 0, false
	}
	return max(last.Sub(now), time.Second), true
}

// spent reports whether hiding m once more would leave it no receive.
func (g *GroupGate) spent(m sqstypes.Message) bool {
	if g.MaxReceiveCount <= 0 {
		return false
	}
	n := 0
	for _, c := range m.Attributes[string(sqstypes.MessageSystemAttributeNameApproximateReceiveCount)] {
		if c < '0' || c > '9' {
			return false
		}
		n = n*10 + int(c-'0')
	}
	return n >= g.MaxReceiveCount
}

func (g *GroupGate) forget(group, handle string) {
	delete(g.inflight[group], handle)
	if len(g.inflight[group]) == 0 {
		delete(g.inflight, group)
	}
	delete(g.groupOf, handle)
}

// returned marks a batch's messages out of the handler's hands: each stays
// in flight until its visibility (the default, or what the function set).
func (g *GroupGate) returned(msgs []sqstypes.Message) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, m := range msgs {
		h := aws.ToString(m.ReceiptHandle)
		if group, ok := g.groupOf[h]; ok {
			g.inflight[group][h].inHand = false
		}
	}
}

// deleted forgets a deleted message.
func (g *GroupGate) deleted(handle string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if group, ok := g.groupOf[handle]; ok {
		g.forget(group, handle)
	}
}

// changed notes a visibility change: the message is in flight for that long
// from now (0: visible at once).
func (g *GroupGate) changed(handle string, seconds int32) {
	g.mu.Lock()
	defer g.mu.Unlock()
	group, ok := g.groupOf[handle]
	if !ok {
		return
	}
	if seconds <= 0 {
		g.forget(group, handle)
		return
	}
	g.inflight[group][handle].until = g.clock().Add(time.Duration(seconds) * time.Second)
}

// Observe wraps the deliver function's SQS client so that the gate sees
// the visibility changes it makes.
func (g *GroupGate) Observe(api delivery.QueueAPI) delivery.QueueAPI {
	return observedQueue{QueueAPI: api, gate: g}
}

type observedQueue struct {
	delivery.QueueAPI
	gate *GroupGate
}

func (o observedQueue) ChangeMessageVisibility(ctx context.Context, in *sqs.ChangeMessageVisibilityInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	out, err := o.QueueAPI.ChangeMessageVisibility(ctx, in, optFns...)
	if err == nil {
		o.gate.changed(aws.ToString(in.ReceiptHandle), in.VisibilityTimeout)
	}
	return out, err
}
