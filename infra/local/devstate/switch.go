package devstate

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// MappingTag is the queue tag that stands in for the event source
// mapping's Enabled flag on the local stack: "disabled" while the lane is
// paused. It lives on the emulator, so the operator command, a process of
// its own, switches the same flag the pollers read.
const (
	MappingTag      = "hookfan:mapping"
	MappingEnabled  = "enabled"
	MappingDisabled = "disabled"
)

// TagAPI is the part of the SQS client a TagSwitch uses.
type TagAPI interface {
	ListQueueTags(ctx context.Context, in *sqs.ListQueueTagsInput, optFns ...func(*sqs.Options)) (*sqs.ListQueueTagsOutput, error)
	TagQueue(ctx context.Context, in *sqs.TagQueueInput, optFns ...func(*sqs.Options)) (*sqs.TagQueueOutput, error)
}

// TagSwitch is the local twin of a lane's event source mapping switch
// (pausing.EventSourceMapping): the MappingTag of its queue. A queue without
// the tag is enabled, as a new mapping is.
type TagSwitch struct {
	SQS      TagAPI
	QueueURL string
}

// Enabled reports whether the lane's pollers receive.
func (s TagSwitch) Enabled(ctx context.Context) (bool, error) {
	out, err := s.SQS.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &s.QueueURL})
	if err != nil {
		return false, fmt.Errorf("read the mapping tag of %s: %w", s.QueueURL, err)
	}
	return out.Tags[MappingTag] != MappingDisabled, nil
}

// Enable lets the lane's pollers receive.
func (s TagSwitch) Enable(ctx context.Context) error { return s.set(ctx, MappingEnabled) }

// Disable stops the lane's pollers receiving; batches in flight finish.
func (s TagSwitch) Disable(ctx context.Context) error { return s.set(ctx, MappingDisabled) }

func (s TagSwitch) set(ctx context.Context, v string) error {
	if _, err := s.SQS.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &s.QueueURL, Tags: map[string]string{MappingTag: v}}); err != nil {
		return fmt.Errorf("set the mapping tag of %s to %s: %w", s.QueueURL, v, err)
	}
	return nil
}
