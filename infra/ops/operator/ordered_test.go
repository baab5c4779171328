package operator

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
)

// TestOrderedSends: sends to an ordered lane's FIFO queue carry a group
// and a deduplication id; a standard lane's carry neither.
func TestOrderedSends(t *testing.T) {
	ordered := Lane{Destination: "o", QueueURL: "https://sqs/1/o.fifo", OrderingKey: "body:data.object.id"}
	standard := Lane{Destination: "s", QueueURL: "https://sqs/1/s"}
	m := sqstypes.Message{MessageId: aws.String("m1"), Attributes: map[string]string{"MessageGroupId": "stripe:in_1"}}

	in := &sqs.SendMessageInput{}
	ordered.redriveGroup(in, m)
	if aws.ToString(in.MessageGroupId) != "stripe:in_1" || aws.ToString(in.MessageDeduplicationId) == "" {
		t.Errorf("redrive: group %q, dedup %q", aws.ToString(in.MessageGroupId), aws.ToString(in.MessageDeduplicationId))
	}
	again := &sqs.SendMessageInput{}
	ordered.redriveGroup(again, m)
	if aws.ToString(again.MessageDeduplicationId) != aws.ToString(in.MessageDeduplicationId) {
		t.Error("a rerun's copy of the same DLQ message has another deduplication id")
	}

	ev := archive.Event{ID: "evt_1", Source: "stripe", Message: `{"data": {"object": {"id": "in_1"}}}`, Attributes: map[string]archive.Attribute{}}
	in = &sqs.SendMessageInput{}
	ordered.replayGroup(in, ev, "rpl_1", nil)
	if got, want := aws.ToString(in.MessageGroupId), config.GroupID("stripe", "in_1"); got != want {
		t.Errorf("replay group %q, want %q", got, want)
	}
	// A body in S3: the key is read from the stored body, not from the
	// reference the message carries.
	ref := archive.Event{ID: "evt_2", Source: "stripe", Message: `{"bucket":"b","key":"payloads/stripe/evt_2"}`,
		Attributes: map[string]archive.Attribute{message.AttrPayload: {Type: "String", Value: message.PayloadS3}}}
	in = &sqs.SendMessageInput{}
	ordered.replayGroup(in, ref, "rpl_1", []byte(`{"data": {"object": {"id": "in_2"}}}`))
	if got, want := aws.ToString(in.MessageGroupId), config.GroupID("stripe", "in_2"); got != want {
		t.Errorf("replay of a body in S3: group %q, want %q (its stored body's key)", got, want)
	}
	// A stored body without the key joins the keyless group.
	in = &sqs.SendMessageInput{}
	ordered.replayGroup(in, ref, "rpl_1", []byte(`{"data": {}}`))
	if got := aws.ToString(in.MessageGroupId); got != "stripe" {
		t.Errorf("replay of a stored body without the key: group %q, want the keyless stripe", got)
	}

	in = &sqs.SendMessageInput{}
	standard.redriveGroup(in, m)
	standard.replayGroup(in, ev, "rpl_1", nil)
	if in.MessageGroupId != nil || in.MessageDeduplicationId != nil {
		t.Error("a standard lane's send carries FIFO fields")
	}
}
