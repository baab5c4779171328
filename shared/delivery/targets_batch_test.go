package delivery

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
)

// batchedTargetHarness is a batched lane of type typ delivering to the
// fakes.
func batchedTargetHarness(t *testing.T, typ, arn string, f *MemoryTargets, b config.Batch) *harness {
	return newHarness(t, "", "", func(o *laneOptions) {
		o.Destination = config.Destination{Name: "orders", Type: typ, Target: arn, TimeoutSeconds: 2, Batch: &b}
		o.SecretID, o.Secrets = "", nil
		o.Targets = f
	})
}

func eventIDs(n int) []string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf("evt_%02d", i)
	}
	return ids
}

func sentIDs(batches []*sqs.SendMessageBatchInput) []string {
	var ids []string
	for _, b := range batches {
		for _, e := range b.Entries {
			ids = append(ids, aws.ToString(e.MessageAttributes[message.AttrID].StringValue))
		}
	}
	return ids
}

func putIDs(calls []*eventbridge.PutEventsInput) []string {
	var ids []string
	for _, c := range calls {
		for _, e := range c.Entries {
			var d struct {
				ID string `json:"id"`
			}
			_ = json.Unmarshal([]byte(aws.ToString(e.Detail)), &d)
			ids = append(ids, d.ID)
		}
	}
	return ids
}

// TestBatchedSQSTargetLane: a batched sqs lane sends an invocation's 23
// events with SendMessageBatch (10 + 10 + 3) and judges each alone: the
// one SQS lists Failed is a failed attempt with SQS's words, retried;
// the others are DELIVERED, each record naming the batch. When the
// messages come again, the delivered events are not sent again: only the
// failed one goes.
func TestBatchedSQSTargetLane(t *testing.T) {
	f := &MemoryTargets{RefuseEvents: map[string]bool{"evt_07": true}}
	hs := batchedTargetHarness(t, config.TypeSQS, "arn:aws:sqs:us-east-1:210987654321:orders", f, config.Batch{MaxEvents: 50, Window: time.Second})
	ids := eventIDs(23)
	resp, err := hs.h.Handle(context.Background(), records(ids...))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Sent) != 0 || len(f.SentBatches) != 3 {
		t.Fatalf("%d SendMessage and %d SendMessageBatch calls, want 0 and 3", len(f.Sent), len(f.SentBatches))
	}
	for _, b := range f.SentBatches {
		if len(b.Entries) > 10 {
			t.Errorf("a call of %d entries", len(b.Entries))
		}
	}
	got := sentIDs(f.SentBatches)
	slices.Sort(got)
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("events sent (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sqsRecord("evt_07", 1).MessageId}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	for _, id := range ids {
		r := recordOf(t, hs, id)
		switch {
		case id == "evt_07":
			if r.Status != dedupe.StatusFailed || r.LastError != "sqs InvalidParameterValue: The message is refused." {
				t.Errorf("%s: %s %q, want FAILED with SQS's words", id, r.Status, r.LastError)
			}
			if vis := hs.sqs.visibility()["rh-evt_07"]; len(vis) != 1 || vis[0] <= 0 {
				t.Errorf("%s: visibility %v, want a backoff", id, vis)
			}
		case r.Status != dedupe.StatusDelivered:
			t.Errorf("%s: %s %q", id, r.Status, r.LastError)
		}
		if len(r.History) != 1 || !strings.HasPrefix(r.History[0].Batch, "batch_") {
			t.Errorf("%s: history %+v, want one attempt naming its batch", id, r.History)
		}
	}

	f.RefuseEvents = nil
	again := records(ids...)
	for i := range again.Records {
		again.Records[i] = sqsRecord(ids[i], 2)
	}
	resp, _ = hs.h.Handle(context.Background(), again)
	if len(resp.BatchItemFailures) != 0 {
		t.Errorf("failures %v", failures(resp))
	}
	if diff := cmp.Diff([]string{"evt_07"}, sentIDs(f.SentBatches[3:])); diff != "" {
		t.Errorf("sent again (-want +got):\n%s", diff)
	}
	if r := recordOf(t, hs, "evt_07"); r.Status != dedupe.StatusDelivered {
		t.Errorf("evt_07 after its retry: %s", r.Status)
	}
}

// TestBatchedEventBridgeTargetLane: a batched eventbridge lane puts an
// invocation's 12 events with PutEvents (10 + 2); the entry the bus
// refuses fails alone with the bus's words; a call refused as a whole
// fails every event of the attempt with its error.
func TestBatchedEventBridgeTargetLane(t *testing.T) {
	f := &MemoryTargets{RefuseEvents: map[string]bool{"evt_03": true}}
	hs := batchedTargetHarness(t, config.TypeEventBridge, "arn:aws:events:us-east-1:210987654321:event-bus/orders", f, config.Batch{MaxEvents: 12, Window: time.Second})
	ids := eventIDs(12)
	resp, _ := hs.h.Handle(context.Background(), records(ids...))
	if len(f.Put) != 2 {
		t.Fatalf("%d PutEvents calls, want 2", len(f.Put))
	}
	got := putIDs(f.Put)
	slices.Sort(got)
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("events put (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{sqsRecord("evt_03", 1).MessageId}, failures(resp)); diff != "" {
		t.Errorf("failures (-want +got):\n%s", diff)
	}
	if r := recordOf(t, hs, "evt_03"); r.Status != dedupe.StatusFailed || r.LastError != "eventbridge MalformedDetail: Detail is malformed." {
		t.Errorf("evt_03: %s %q", r.Status, r.LastError)
	}
	if r := recordOf(t, hs, "evt_04"); r.Status != dedupe.StatusDelivered {
		t.Errorf("evt_04: %s %q", r.Status, r.LastError)
	}

	f.RefuseEvents = nil
	f.Err = &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform events:PutEvents"}
	more := []string{"evt_20", "evt_21", "evt_22"}
	resp, _ = hs.h.Handle(context.Background(), records(more...))
	if len(resp.BatchItemFailures) != 3 {
		t.Errorf("failures %v, want all three", failures(resp))
	}
	for _, id := range more {
		if r := recordOf(t, hs, id); r.Status != dedupe.StatusFailed || r.LastError != "eventbridge AccessDenied: not authorized to perform events:PutEvents" {
			t.Errorf("%s: %s %q", id, r.Status, r.LastError)
		}
	}
}

// TestBatchedLambdaTargetLane: a batched lambda lane invokes its function
// once with the batch's envelope, every event in it; a function error
// fails every event of the batch, and when they come again they go in
// one invocation once more and are delivered.
func TestBatchedLambdaTargetLane(t *testing.T) {
	f := &MemoryTargets{FunctionError: true}
	hs := batchedTargetHarness(t, config.TypeLambda, "arn:aws:lambda:us-east-1:210987654321:function:orders", f, config.Batch{MaxEvents: 50, Window: time.Second})
	ids := eventIDs(12)
	resp, err := hs.h.Handle(context.Background(), records(ids...))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Invoked) != 1 {
		t.Fatalf("%d invocations, want 1 for the batch", len(f.Invoked))
	}
	var env struct {
		Events []struct {
			ID string `json:"id"`
		} `json:"events"`
	}
	if err := json.Unmarshal(f.Invoked[0].Payload, &env); err != nil {
		t.Fatalf("the payload is not the envelope: %v", err)
	}
	var got []string
	for _, e := range env.Events {
		got = append(got, e.ID)
	}
	if diff := cmp.Diff(ids, got); diff != "" {
		t.Errorf("events in the invocation (-want +got):\n%s", diff)
	}
	if len(resp.BatchItemFailures) != len(ids) {
		t.Errorf("%d failures, want every event of the failed batch", len(resp.BatchItemFailures))
	}
	for _, id := range ids {
		if r := recordOf(t, hs, id); r.Status != dedupe.StatusFailed || len(r.History) != 1 || !strings.HasPrefix(r.History[0].Batch, "batch_") {
			t.Errorf("%s: %s, history %+v; want FAILED, one attempt naming its batch", id, r.Status, r.History)
		}
	}

	f.FunctionError = false
	again := records(ids...)
	for i := range again.Records {
		again.Records[i] = sqsRecord(ids[i], 2)
	}
	if resp, _ = hs.h.Handle(context.Background(), again); len(resp.BatchItemFailures) != 0 || len(f.Invoked) != 2 {
		t.Fatalf("failures %v after %d invocations; want none after 2", failures(resp), len(f.Invoked))
	}
	for _, id := range ids {
		if r := recordOf(t, hs, id); r.Status != dedupe.StatusDelivered {
			t.Errorf("%s: %s after its retry", id, r.Status)
		}
	}
}
