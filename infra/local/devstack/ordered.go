package devstack

import (
	"context"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
)

// createOrderedTopic makes the ordered lanes' FIFO topic as the stack
// does: FIFO, deduplicated by the id ingest gives each copy (never by
// content, so a provider's retry of an event after 5 minutes reaches the
// lanes, whose records refuse it).
func createOrderedTopic(ctx context.Context, api *sns.Client, prefix string) (string, error) {
	out, err := api.CreateTopic(ctx, &sns.CreateTopicInput{Name: aws.String(devstate.OrderedTopicName(prefix)),
		Attributes: map[string]string{"FifoTopic": "true", "ContentBasedDeduplication": "false"}})
	if err != nil {
		return "", fmt.Errorf("create the FIFO topic: %w", err)
	}
	return *out.TopicArn, nil
}

// fifoQueue adds to an ordered lane's queue attributes what makes it a
// FIFO queue: deduplicated by the id SNS passes on (the topic's), and
// with high throughput's per-group scope, as the stack sets it.
func fifoQueue(d config.Destination, attrs map[string]string) map[string]string {
	if !d.Ordered() {
		return attrs
	}
	out := maps.Clone(attrs)
	out["FifoQueue"] = "true"
	out["ContentBasedDeduplication"] = "false"
	out["DeduplicationScope"] = "messageGroup"
	out["FifoThroughputLimit"] = "perMessageGroupId"
	return out
}
