package devstate

import "github.com/hookfan/hookfan/shared/config"

// FIFOSuffix ends the name of every FIFO topic and queue (SNS and SQS
// require it).
const FIFOSuffix = ".fifo"

// OrderedTopicName is the FIFO topic of the ordered lanes.
func OrderedTopicName(prefix string) string { return prefix + "-ordered" + FIFOSuffix }

// fifo adds the FIFO suffix to an ordered lane's queue names.
func fifo(d config.Destination, name string) string {
	if d.Ordered() {
		return name + FIFOSuffix
	}
	return name
}

// The names of a lane's queues: QueueName, DLQName and
// SubscriptionDLQName, ending in ".fifo" on an ordered lane, whose
// queues (the DLQs included: a FIFO queue's DLQ and a FIFO
// subscription's are FIFO queues) are FIFO queues.
func LaneQueueName(prefix string, d config.Destination) string {
	return fifo(d, QueueName(prefix, d.Name))
}

func LaneDLQName(prefix string, d config.Destination) string {
	return fifo(d, DLQName(prefix, d.Name))
}

func LaneSubscriptionDLQName(prefix string, d config.Destination) string {
	return fifo(d, SubscriptionDLQName(prefix, d.Name))
}
