package operator

import (
	"crypto/sha256"
	"encoding/base64"
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
		group = attr(m, message.AttrSource) // the keyless group of its source
	}
	in.MessageGroupId = aws.String(group)
	in.MessageDeduplicationId = aws.String(dedupOf("redrive", aws.ToString(m.MessageId)))
}

// replayGroup gives a replay to an ordered lane its key's group, read
// from the archived body as ingest read it (a header key is not
// archived, nor a body stored in S3: those replays go to the source's
// keyless group), and a deduplication id of the replay.
func (l Lane) replayGroup(in *sqs.SendMessageInput, ev archive.Event, replayID string) {
	if !l.Ordered() {
		return
	}
	value := ""
	if k, err := config.ParseOrderingKey(l.OrderingKey); err == nil && k.From == config.KeyFromBody && !isReference(ev.Attributes[message.AttrPayload].Value) {
		body := []byte(ev.Message)
		if ev.Attributes[message.AttrEncoding].Value == message.EncodingBase64 {
			body, _ = base64.StdEncoding.DecodeString(ev.Message)
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
