//go:build integration

package integration

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/eventbridgetarget"
	"github.com/hookfan/hookfan/shared/delivery/sender/sqstarget"
)

// batchOf is n deliveries of small JSON events of one source, id prefix
// p, each in group (when set) p-<i%2>.
func batchOf(p string, n int, grouped bool) []sender.Delivery {
	ds := make([]sender.Delivery, n)
	for i := range ds {
		id := fmt.Sprintf("%s_%02d", p, i)
		ds[i] = sender.Delivery{ID: id, Source: "stripe", Type: "invoice.paid", ContentType: "application/json",
			Body: fmt.Appendf(nil, `{"id":%q,"n":%d}`, id, i), ReceivedAt: time.Now().UTC().Truncate(time.Millisecond), Timeout: 20 * time.Second}
		if grouped {
			ds[i].Group = fmt.Sprintf("stripe:%d", i%2)
		}
	}
	return ds
}

// drainAll receives and deletes messages from a queue until it has n or the
// wait runs out, in the order received.
func drainAll(t *testing.T, url string, n int) []sqstypes.Message {
	t.Helper()
	var got []sqstypes.Message
	waitFor(t, 20*time.Second, fmt.Sprintf("%d messages on %s", n, url), func() bool {
		out, err := clients.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			got = append(got, m)
			if _, err := clients.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
		}
		return len(got) >= n
	})
	return got
}

func sqsBatchSender(t *testing.T, queue string) sender.BatchSender {
	t.Helper()
	s, err := sqstarget.New(sqstarget.NewClient(awsCfg), config.Destination{Name: "q", Type: config.TypeSQS, Target: arnOf("sqs", queue)}, false)
	if err != nil {
		t.Fatal(err)
	}
	return s.(sender.BatchSender)
}

// TestSQSTargetBatch: over the wire, SendMessageBatch delivers a batch of
// 23 events (a binary one among them, in base64) to a standard queue in
// calls SQS takes, each arriving once with its attributes; an event over
// what SQS takes goes alone and fails alone; a FIFO queue gets
// each group in order; a missing queue fails every event with SQS's error.
func TestSQSTargetBatch(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix(t)
	plain, fifo := targetQueue(t, prefix+"-batch"), targetQueue(t, prefix+"-batch.fifo")

	ds := batchOf("evt_sqsb", 23, false)
	ds[5].ContentType, ds[5].Body = "application/octet-stream", []byte{0, 1, 0xff, 'x'}
	big := batchOf("evt_sqsb_big", 1, false)[0]
	big.Body = []byte(`{"pad":"` + strings.Repeat("x", 1<<20) + `"}`) // over SQS's 1 MiB
	ds = slices.Insert(ds, 12, big)
	results := sqsBatchSender(t, prefix+"-batch").SendBatch(context.Background(), ds)
	for i, r := range results {
		switch {
		case ds[i].ID == big.ID:
			if r.Verdict() != sender.Failed || r.Err == nil {
				t.Errorf("the event over 1 MiB: %q, want it refused", r.Describe())
			}
		case r.Verdict() != sender.Delivered:
			t.Errorf("%s: %q", ds[i].ID, r.Describe())
		}
	}
	got := map[string]sqstypes.Message{}
	for _, m := range drainAll(t, plain, 23) {
		id := aws.ToString(m.MessageAttributes["id"].StringValue)
		if _, dup := got[id]; dup {
			t.Errorf("%s arrived twice", id)
		}
		got[id] = m
	}
	for _, d := range ds {
		m, ok := got[d.ID]
		if d.ID == big.ID {
			if ok {
				t.Errorf("the refused event arrived")
			}
			continue
		}
		body := []byte(aws.ToString(m.Body))
		if aws.ToString(m.MessageAttributes["encoding"].StringValue) == "base64" {
			body, _ = base64.StdEncoding.DecodeString(string(body))
		}
		if !ok || string(body) != string(d.Body) || aws.ToString(m.MessageAttributes["type"].StringValue) != d.Type {
			t.Errorf("%s: arrived %v, body %q, attributes %v", d.ID, ok, body, m.MessageAttributes)
		}
	}

	grouped := batchOf("evt_sqsf", 14, true)
	for i, r := range sqsBatchSender(t, prefix+"-batch.fifo").SendBatch(context.Background(), grouped) {
		if r.Verdict() != sender.Delivered {
			t.Errorf("fifo %d: %q", i, r.Describe())
		}
	}
	order := map[string][]string{}
	for _, m := range drainAll(t, fifo, 14) {
		order[m.Attributes["MessageGroupId"]] = append(order[m.Attributes["MessageGroupId"]], aws.ToString(m.MessageAttributes["id"].StringValue))
	}
	want := map[string][]string{}
	for _, d := range grouped {
		want[d.Group] = append(want[d.Group], d.ID)
	}
	if diff := cmp.Diff(want, order); diff != "" {
		t.Errorf("FIFO order per group (-sent +received):\n%s", diff)
	}

	for i, r := range sqsBatchSender(t, prefix+"-nowhere").SendBatch(context.Background(), batchOf("evt_sqsn", 3, false)) {
		if !strings.Contains(r.Describe(), "NonExistentQueue") {
			t.Errorf("missing queue, event %d: %q", i, r.Describe())
		}
	}
}

// TestEventBridgeTargetBatch: over the wire, PutEvents puts a batch of 15
// events on a bus in calls of at most ten, each reaching the rule's queue
// once as Source hookfan.<source> with its Detail; a bus that does not
// exist fails every event with the bus's error.
func TestEventBridgeTargetBatch(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix(t)
	ctx := context.Background()
	bus := prefix + "-bus"
	if _, err := clients.EventBridge.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	seen := targetQueue(t, prefix+"-seen")
	if _, err := clients.EventBridge.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(prefix + "-all"), EventBusName: aws.String(bus),
		EventPattern: aws.String(`{"source": [{"prefix": "hookfan."}]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients.EventBridge.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(prefix + "-all"), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("seen"), Arn: aws.String(arnOf("sqs", prefix+"-seen"))}}}); err != nil {
		t.Fatal(err)
	}
	newSender := func(bus string) sender.BatchSender {
		s, err := eventbridgetarget.New(eventbridgetarget.NewClient(awsCfg), config.Destination{Name: "b", Type: config.TypeEventBridge, Target: arnOf("events", "event-bus/"+bus)}, false)
		if err != nil {
			t.Fatal(err)
		}
		return s.(sender.BatchSender)
	}
	ds := batchOf("evt_ebb", 15, false)
	for i, r := range newSender(bus).SendBatch(ctx, ds) {
		if r.Verdict() != sender.Delivered {
			t.Errorf("%s: %q", ds[i].ID, r.Describe())
		}
	}
	var got []string
	for _, m := range drainAll(t, seen, 15) {
		var ev struct {
			Source string `json:"source"`
			Detail struct {
				ID string `json:"id"`
			} `json:"detail"`
		}
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &ev); err != nil {
			t.Fatalf("%.200s: %v", aws.ToString(m.Body), err)
		}
		if ev.Source != "hookfan.stripe" {
			t.Errorf("%s: source %q", ev.Detail.ID, ev.Source)
		}
		got = append(got, ev.Detail.ID)
	}
	var want []string
	for _, d := range ds {
		want = append(want, d.ID)
	}
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events on the bus (-put +arrived):\n%s", diff)
	}

	for i, r := range newSender(prefix+"-nowhere").SendBatch(ctx, batchOf("evt_ebn", 3, false)) {
		if r.Verdict() != sender.Failed || !strings.Contains(r.Describe(), "eventbridge") {
			t.Errorf("missing bus, event %d: %q", i, r.Describe())
		}
	}
}

// TestBatchedTargetLanes: on the local stack, a batched sqs lane and a
// batched eventbridge lane deliver 12 events each exactly once through
// the batch calls, every record DELIVERED with the batch it went in.
func TestBatchedTargetLanes(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix(t)
	ctx := context.Background()
	queue := targetQueue(t, prefix+"-lane")
	bus := prefix + "-bus"
	if _, err := clients.EventBridge.CreateEventBus(ctx, &eventbridge.CreateEventBusInput{Name: aws.String(bus)}); err != nil {
		t.Fatal(err)
	}
	seen := targetQueue(t, prefix+"-seen")
	if _, err := clients.EventBridge.PutRule(ctx, &eventbridge.PutRuleInput{Name: aws.String(prefix + "-all"), EventBusName: aws.String(bus),
		EventPattern: aws.String(`{"source": [{"prefix": "hookfan."}]}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := clients.EventBridge.PutTargets(ctx, &eventbridge.PutTargetsInput{Rule: aws.String(prefix + "-all"), EventBusName: aws.String(bus),
		Targets: []ebtypes.Target{{Id: aws.String("seen"), Arn: aws.String(arnOf("sqs", prefix+"-seen"))}}}); err != nil {
		t.Fatal(err)
	}
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "queue", "type": "sqs", "target": %q, "batch": {"maxEvents": 10}}`, arnOf("sqs", prefix+"-lane")),
		fmt.Sprintf(`{"name": "bus", "type": "eventbridge", "target": %q, "batch": {"maxEvents": 10}}`, arnOf("events", "event-bus/"+bus)),
	}, nil)
	var ids []string
	for i := range 12 {
		ids = append(ids, e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_batched_target_%02d", i), nil).id)
	}
	for _, lane := range []string{"queue", "bus"} {
		for _, id := range ids {
			delivered(t, e, lane, id)
			if r, _ := e.record(lane, id); len(r.History) != 1 || !strings.HasPrefix(r.History[0].Batch, sender.BatchIDPrefix) {
				t.Errorf("%s %s: history %+v, want one attempt in a batch", lane, id, r.History)
			}
		}
	}
	var onQueue, onBus []string
	for _, m := range drainAll(t, queue, 12) {
		onQueue = append(onQueue, aws.ToString(m.MessageAttributes["id"].StringValue))
	}
	for _, m := range drainAll(t, seen, 12) {
		var ev struct {
			Detail struct {
				ID string `json:"id"`
			} `json:"detail"`
		}
		_ = json.Unmarshal([]byte(aws.ToString(m.Body)), &ev)
		onBus = append(onBus, ev.Detail.ID)
	}
	if extra := queueIDs(t, queue, 2*time.Second); len(extra) > 0 {
		t.Errorf("the queue got more: %v", extra)
	}
	want := slices.Clone(ids)
	slices.Sort(want)
	slices.Sort(onQueue)
	if diff := cmp.Diff(want, onQueue); diff != "" {
		t.Errorf("on the target queue (-sent +arrived):\n%s", diff)
	}
	var providerIDs []string
	for i := range 12 {
		providerIDs = append(providerIDs, fmt.Sprintf("evt_batched_target_%02d", i))
	}
	slices.Sort(onBus)
	if diff := cmp.Diff(providerIDs, onBus); diff != "" {
		t.Errorf("through the bus (-sent +arrived):\n%s", diff)
	}
}
