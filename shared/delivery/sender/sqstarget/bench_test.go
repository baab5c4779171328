package sqstarget_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// callTime is an in-region SendMessage's or SendMessageBatch's round trip
// (the cost model's SQSSendMs).
const callTime = 10 * time.Millisecond

// BenchmarkSendBatch: 100 events of 1 KiB to a queue answering each call
// after callTime, in one SendBatch: ten calls, four at a time. Budget: the
// batch within 5 calls' time (one call per event would take 100).
func BenchmarkSendBatch(b *testing.B) {
	slow := func(_ int, in *sqs.SendMessageBatchInput) (*sqs.SendMessageBatchOutput, error) {
		time.Sleep(callTime)
		return allSuccessful(in), nil
	}
	ds := deliveries(100, 1024, nil)
	s := batchSender(b, newSender(b, &fakeSQS{answer: slow}, "orders"))
	start := time.Now()
	for b.Loop() {
		for _, r := range s.SendBatch(context.Background(), ds) {
			if r.Verdict() != sender.Delivered {
				b.Fatal(r.Describe())
			}
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per)/float64(callTime), "calls-time")
	if per > 5*callTime {
		b.Errorf("a batch of 100 took %v, over the budget of 5 calls (%v)", per, 5*callTime)
	}
}
