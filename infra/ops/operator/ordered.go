package operator

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
)

// Ordered reports whether the lane is an ordered lane: its queue is a FIFO
// queue, whose sends need a message group and a deduplication id.
func (l Lane) Ordered() bool {
	return l.OrderingKey != "" || strings.HasSuffix(l.QueueURL, ".fifo")
}

// redriveGroup gives the copy of DLQ message m what a FIFO queue needs:
// its own message group (a FIFO DLQ keeps it), so it joins the back of
// its key, and a deduplication id of the DLQ message, so a copy sent
// twice by a rerun after a failed delete is dropped by SQS within its
// five minutes (and by the delivery record after).
func (l Lane) redriveGroup(in *sqs.SendMessageInput, m sqstypes.Message) {
	if !l.Ordered() {
		return
	}
	group := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
	if group == "" {
		group = decoded(m).Source // the keyless group of its source
	}
	in.MessageGroupId = aws.String(group)
	in.MessageDeduplicationId = aws.String(dedupOf("redrive", aws.ToString(m.MessageId)))
}

// replayGroup gives a replay to an ordered lane its key's group, read
// from the body as ingest read it: the archived message, or stored, the
// body a payload reference names (as restoreBody wrote it again). A
// header key is not archived: those replays go to the source's keyless
// group. It also sets a deduplication id of the replay.
func (l Lane) replayGroup(in *sqs.SendMessageInput, ev archive.Event, replayID string, stored []byte) {
	if !l.Ordered() {
		return
	}
	value := ""
	if k, err := config.ParseOrderingKey(l.OrderingKey); err == nil && k.From == config.KeyFromBody {
		body := stored
		if dec, _ := ev.Decode(); dec.Encoding != message.Stored {
			body, _ = dec.Bytes()
		}
		value = k.Value(nil, body)
	}
	in.MessageGroupId = aws.String(config.GroupID(ev.Source, value))
	in.MessageDeduplicationId = aws.String(dedupOf("replay", replayID+"\n"+ev.ID))
}

func dedupOf(kind, of string) string {
	sum := sha256.Sum256([]byte(kind + "\n" + of))
	return base64.RawURLEncoding.EncodeToString(sum[:])
}

// MaxNextWaitingPeek bounds the messages of an ordered lane's queue dlq
// reads to find each dead event's key's next waiting event.
const MaxNextWaitingPeek = 100

// nextWaiting fills in, for the dead letters of an ordered lane, the
// event its key delivers next: the first message of its group a peek of
// the lane's queue sees (a FIFO queue hands a group's messages oldest
// first, and none of a group with one in flight). The peek holds the keys
// it reads for a moment (released at once, within PeekVisibility at
// worst).
func (o *Operator) nextWaiting(ctx context.Context, l Lane, dead []DeadLetter) error {
	want := map[string]bool{}
	for _, d := range dead {
		if d.Group != "" {
			want[d.Group] = true
		}
	}
	if len(want) == 0 {
		return nil
	}
	next := map[string]string{}
	_, err := o.peek(ctx, l.QueueURL, MaxNextWaitingPeek, func(m sqstypes.Message) bool {
		g := m.Attributes[string(sqstypes.MessageSystemAttributeNameMessageGroupId)]
		if _, ok := next[g]; !ok && want[g] {
			next[g] = decoded(m).ID
		}
		return len(next) < len(want)
	})
	if err != nil {
		return fmt.Errorf("find the keys' next waiting events: %w", err)
	}
	for i := range dead {
		dead[i].NextWaiting = next[dead[i].Group]
	}
	return nil
}

// printKeys shows, on an ordered lane, each dead event's key and what the
// key delivers next: where the key's order broke.
func (o *Operator) printKeys(l Lane, p DLQPage) {
	if !l.Ordered() || len(p.Messages) == 0 {
		return
	}
	o.printf("\nordered lane: each dead event's key moved on without it (docs/operations.md#ordered-lanes)\n")
	o.printf("%-38s %-44s %s\n", "EVENT", "KEY (MESSAGE GROUP)", "NEXT WAITING")
	for _, m := range p.Messages {
		next := m.NextWaiting
		if next == "" {
			next = "(none waiting, or in flight now)"
		}
		o.printf("%-38s %-44s %s\n", m.ID, m.Group, next)
	}
}
