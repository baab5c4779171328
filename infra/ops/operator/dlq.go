package operator

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
)

// DefaultDLQPage is how many messages dlq lists by default.
const DefaultDLQPage = 10

// DeadLetter is a message in a DLQ, with what its delivery record says.
type DeadLetter struct {
	MessageID  string
	ID         string // the event id; "" for a malformed message
	Source     string
	Type       string
	ReceivedAt string
	// Record is the event's delivery record at this destination.
	Record    dedupe.Record
	HasRecord bool
	// Group is the message group (the key) on an ordered lane, and
	// NextWaiting the event id of that key's next event waiting in the
	// lane's queue ("" when none is waiting or it is in flight).
	Group, NextWaiting string
}

// DLQPage is what a destination's DLQ holds.
type DLQPage struct {
	Destination string
	Depth       int // approximate: visible, in flight and delayed
	Messages    []DeadLetter
}

// DLQ lists up to limit messages of a destination's DLQ with their delivery
// records' last error, without consuming them: each is hidden for
// PeekVisibility while it is read, and none is deleted.
func (o *Operator) DLQ(ctx context.Context, destination string, limit int) (DLQPage, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return DLQPage{}, err
	}
	if limit <= 0 {
		limit = DefaultDLQPage
	}
	d, err := o.depth(ctx, l.DLQURL)
	if err != nil {
		return DLQPage{}, err
	}
	page := DLQPage{Destination: destination, Depth: d.total()}
	if page.Depth > 0 {
		var readErr error
		_, err = o.peek(ctx, l.DLQURL, limit, func(m sqstypes.Message) bool {
			ev := decoded(m)
			dl := DeadLetter{MessageID: aws.ToString(m.MessageId), ID: ev.ID, Source: ev.Source, Type: ev.Type, ReceivedAt: receivedAtText(ev),
				Group: m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]}
			if dl.ID != "" {
				dl.Record, dl.HasRecord, readErr = o.Records.Get(ctx, dedupe.Key(destination, dl.ID))
			}
			page.Messages = append(page.Messages, dl)
			return readErr == nil
		})
		if err == nil {
			err = readErr
		}
		if err != nil {
			return page, err
		}
		if l.Ordered() {
			if err := o.nextWaiting(ctx, l, page.Messages); err != nil {
				return page, err
			}
		}
	}
	o.printDLQ(page, d)
	o.printKeys(l, page)
	return page, nil
}

func (o *Operator) printDLQ(p DLQPage, d depth) {
	o.printf("DLQ of %s: %d message(s)", p.Destination, p.Depth)
	if d.InFlight > 0 {
		o.printf(" (%d being read or redriven right now)", d.InFlight)
	}
	o.printf("\n")
	if p.Depth == 0 {
		return
	}
	if len(p.Messages) < p.Depth {
		o.printf("showing %d (--max N for more)\n", len(p.Messages))
	}
	o.printf("\n%-38s %-12s %-28s %-24s %s\n", "EVENT", "SOURCE", "TYPE", "RECEIVED", "LAST ERROR")
	for _, m := range p.Messages {
		id := m.ID
		if id == "" {
			id = "(malformed: message " + m.MessageID + ")"
		}
		last := "no delivery record"
		if m.HasRecord {
			last = fmt.Sprintf("%s after %d attempt(s): %s", m.Record.Status, m.Record.Attempts, answer(m.Record.LastStatus, m.Record.LastError))
		}
		o.printf("%-38s %-12s %-28s %-24s %s\n", id, m.Source, m.Type, m.ReceivedAt, last)
	}
	o.printf("\n(read without consuming: every message is back in the DLQ)\n")
}

// receivedAtText is when ingest received a dead letter's event, as its
// attribute carries it; "" when unknown.
func receivedAtText(ev message.Event) string {
	if ev.ReceivedAt.IsZero() {
		return ""
	}
	return ev.ReceivedAt.UTC().Format(message.ReceivedAtLayout)
}
