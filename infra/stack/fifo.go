package stack

import (
	"errors"
	"fmt"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awskms"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// Ordered lanes (docs/configuration.md#ordering, docs/operations.md#ordered-lanes):
// a destination with "ordering" gets an SQS FIFO queue (and FIFO DLQs)
// subscribed to the stack's SNS FIFO topic instead of a standard queue on
// the fan-out topic. Everything else of the lane (function, role, secret,
// mapping, alarms, pause) is the standard lane's. The topic exists only
// when some destination is ordered.

// SNSSubscriptionsPerFIFOTopic is SNS's quota of subscriptions on one FIFO
// topic: each ordered destination's lane is one.
const SNSSubscriptionsPerFIFOTopic = 100

// FIFOBatchSize is the largest batch an event source mapping takes from a
// FIFO queue (Lambda: BatchSize at most 10, and no batching window).
const FIFOBatchSize = 10

// fifoQueueNameLength is the longest queue name CDK may generate for an
// ordered lane's queue: with "-queue.fifo" it stays within SQS's 80
// characters. The standard lane keeps its own length, so its queue's name,
// and the queue, never change.
const fifoQueueNameLength = 80 - len("-queue.fifo")

// NewOrderedTopic makes the SNS FIFO topic the ordered lanes subscribe to:
// encrypted with the fan-out topic's key (nil: SNS's default, as that
// topic), TLS only, traced as that topic, deduplicated by the
// deduplication id ingest sets (the event id) and in high-throughput mode
// (FifoThroughputScope MessageGroup: order and deduplication per message
// group, which is per key; docs/decisions.md#ordered-lanes-high-throughput).
func NewOrderedTopic(scope constructs.Construct, id string, cfg *config.Config, key awskms.IKey) awssns.Topic {
	props := &awssns.TopicProps{
		DisplayName:               jsii.String("Hookfan ordered events"),
		MasterKey:                 key,
		EnforceSSL:                jsii.Bool(true),
		Fifo:                      jsii.Bool(true),
		ContentBasedDeduplication: jsii.Bool(false),
		FifoThroughputScope:       awssns.FifoThroughputScope_MESSAGE_GROUP,
	}
	if t := topicTracing(cfg.TracingMode()); t != "" {
		props.TracingConfig = t
	}
	return awssns.NewTopic(scope, jsii.String(id), props)
}

// orderedTopicRef is the FIFO topic as a lane's nested stack references it
// (the ARN a parameter of the nested stack).
func orderedTopicRef(scope constructs.Construct, topic awssns.ITopic) awssns.ITopic {
	if topic == nil {
		return nil
	}
	return awssns.Topic_FromTopicArn(scope, jsii.String("OrderedTopic"), topic.TopicArn())
}

// laneTopic is the topic a lane subscribes to: the FIFO topic for an
// ordered destination, the fan-out topic otherwise.
func laneTopic(props *LaneProps) (awssns.ITopic, error) {
	d := props.Destination
	if !d.Ordered() {
		return props.Topic, nil
	}
	if props.OrderedTopic == nil {
		return nil, fmt.Errorf("destination %s is ordered: LaneProps.OrderedTopic (the SNS FIFO topic) is required", d.Name)
	}
	return props.OrderedTopic, nil
}

// CheckOrderedLane refuses what an SQS FIFO event source cannot take;
// configuration validation refuses both first, with the fix.
func CheckOrderedLane(d config.Destination) error {
	if !d.Ordered() {
		return nil
	}
	var errs []error
	if d.BatchWindow() > 0 {
		errs = append(errs, fmt.Errorf("destination %s is ordered: batchWindowSeconds %g cannot apply (Lambda has no batching window on FIFO queues); remove it",
			d.Name, d.BatchWindow().Seconds()))
	}
	if d.ReceiveBatch() > FIFOBatchSize {
		errs = append(errs, fmt.Errorf("destination %s is ordered: batchSize %d is more than the %d a FIFO queue's event source takes; set at most %d",
			d.Name, d.ReceiveBatch(), FIFOBatchSize, FIFOBatchSize))
	}
	return errors.Join(errs...)
}

// laneQueueName is the lane queue's physical name, derived from the
// construct path (the DLQ's RedriveAllowPolicy names it without a
// reference); an ordered lane's ends in ".fifo", as SQS requires.
func laneQueueName(c constructs.Construct, d config.Destination) string {
	length := 74
	suffix := "-queue"
	if d.Ordered() {
		length, suffix = fifoQueueNameLength, "-queue.fifo"
	}
	return *awscdk.Names_UniqueResourceName(c, &awscdk.UniqueResourceNameOptions{
		MaxLength: jsii.Number(float64(length)), Separator: jsii.String("-"), AllowedSpecialCharacters: jsii.String("-_"),
	}) + suffix
}

// fifoQueue makes an ordered lane's queue props FIFO (queue, DLQ and
// subscription DLQ alike: SQS moves a FIFO queue's dead letters only to a
// FIFO queue, and SNS a FIFO subscription's only to a FIFO queue), in
// high-throughput mode: deduplication and the throughput quota per message
// group, as the topic. The deduplication id is ingest's (SNS passes it on),
// so content-based deduplication stays off. A standard lane's props are
// returned as they were.
func fifoQueue(d config.Destination, p *awssqs.QueueProps) *awssqs.QueueProps {
	if !d.Ordered() {
		return p
	}
	p.Fifo = jsii.Bool(true)
	p.ContentBasedDeduplication = jsii.Bool(false)
	p.DeduplicationScope = awssqs.DeduplicationScope_MESSAGE_GROUP
	p.FifoThroughputLimit = awssqs.FifoThroughputLimit_PER_MESSAGE_GROUP_ID
	return p
}

// checkFIFOQuota warns, with the fix, when the ordered destinations need
// more subscriptions on the FIFO topic than SNS allows (their filter
// policies, at most one each, stay under SNS's 200 per topic).
func checkFIFOQuota(topic awssns.Topic, cfg *config.Config) {
	ordered := 0
	for _, d := range cfg.Destinations {
		if d.Ordered() {
			ordered++
		}
	}
	if ordered > SNSSubscriptionsPerFIFOTopic {
		awscdk.Annotations_Of(topic).AddWarningV2(jsii.String("hookfan:fifoSubscriptions"), jsii.String(fmt.Sprintf(
			"%d destinations are ordered; SNS allows %d subscriptions per FIFO topic: deploy the ordered destinations over two stacks (-c %s=FILE -c hookfanStackName=NAME), or have AWS raise the account's quota first",
			ordered, SNSSubscriptionsPerFIFOTopic, config.ContextFileKey)), nil)
	}
}

// requeues reports whether a lane's function sends to its own queue: a
// standard lane that pauses re-queues what it holds as fresh copies; an
// ordered lane hides it in place instead (a copy would queue behind its
// key's later events), so it is given no send.
func requeues(d config.Destination) bool {
	_, pauses := d.PauseRule()
	return pauses && !d.Ordered()
}

// laneFilter is the filter policy of a lane's subscription and its scope:
// an ordered lane's takes its own key spec's copies (and its sources and
// types) by their attributes, a standard lane's is the destination's
// filter.
func laneFilter(cfg *config.Config, d config.Destination) (policy, scope string) {
	if d.Ordered() {
		return cfg.OrderedSubscriptionFilter(d), "MessageAttributes"
	}
	return cfg.SubscriptionFilter(d)
}

// standardFiltered counts the filter policies on the fan-out topic: the
// standard lanes' (an ordered lane's policy is on the FIFO topic).
func standardFiltered(cfg *config.Config) int {
	n := 0
	for _, d := range cfg.Destinations {
		if d.Ordered() {
			continue
		}
		if policy, _ := cfg.SubscriptionFilter(d); policy != "" {
			n++
		}
	}
	return n
}

// orderingKey is a lane's key spec for its index, "" on a standard lane.
func orderingKey(d config.Destination) string {
	if !d.Ordered() {
		return ""
	}
	return d.Ordering.Key
}
