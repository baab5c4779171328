//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/config"
)

func publish(t *testing.T, topic, source, typ, id, body string) {
	t.Helper()
	attr := func(v string) snstypes.MessageAttributeValue {
		return snstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	_, err := clients.SNS.Publish(context.Background(), &sns.PublishInput{TopicArn: &topic, Message: &body,
		MessageAttributes: map[string]snstypes.MessageAttributeValue{
			"source": attr(source), "type": attr(typ), "id": attr(id),
			"received_at": attr("2026-11-30T05:00:00.000Z"), "content_type": attr("application/json"),
		}})
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// TestProvisionedTopology checks the emulator carries what the design relies
// on: raw delivery with attributes, filter policies, queue attributes
// derived from the config, and redrive to the DLQ.
func TestProvisionedTopology(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`{
	  "sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s1"}},
	              {"name": "github", "verify": {"kind": "github", "secretName": "s2"}}],
	  "destinations": [
	    {"name": "payments", "url": "http://127.0.0.1:1/x", "allowPrivateNetworks": true,
	     "filter": {"sources": ["stripe"], "types": ["payment_intent.*"]}},
	    {"name": "no-pings", "url": "http://127.0.0.1:1/y", "allowPrivateNetworks": true,
	     "filter": {"excludeTypes": ["ping"]}, "retry": {"schedule": ["1s"]}}
	  ]}`))
	if err != nil {
		t.Fatal(err)
	}
	prefix := uniquePrefix(t)
	topo, err := devstack.Provision(ctx, clients, cfg, map[string][]string{"s1": {"a"}}, prefix)
	if err != nil {
		t.Fatalf("Provision: %v", err)
	}
	// Provisioning twice is harmless.
	if _, err := devstack.Provision(ctx, clients, cfg, map[string][]string{"s1": {"a"}}, prefix); err != nil {
		t.Fatalf("Provision again: %v", err)
	}
	pay, _ := topo.Lane("payments")
	noPings, _ := topo.Lane("no-pings")
	attrs, err := clients.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &noPings.QueueURL,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameAll}})
	if err != nil {
		t.Fatal(err)
	}
	var redrive struct {
		DeadLetterTargetArn string `json:"deadLetterTargetArn"`
		MaxReceiveCount     any    `json:"maxReceiveCount"`
	}
	_ = json.Unmarshal([]byte(attrs.Attributes["RedrivePolicy"]), &redrive)
	d := noPings.Destination
	got := []string{attrs.Attributes["VisibilityTimeout"], attrs.Attributes["MessageRetentionPeriod"], redrive.DeadLetterTargetArn, fmtAny(redrive.MaxReceiveCount)}
	want := []string{strconv.Itoa(int(d.VisibilityTimeout().Seconds())), strconv.Itoa(int(d.Retention().Seconds())), noPings.DLQARN, "2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("queue attributes (-want +got):\n%s", diff)
	}

	publish(t, topo.TopicARN, "stripe", "payment_intent.succeeded", "evt_1", `{"n":1}`)
	publish(t, topo.TopicARN, "stripe", "charge.refunded", "evt_2", `{"n":2}`)
	publish(t, topo.TopicARN, "github", "ping", "evt_3", `{"n":3}`)
	publish(t, topo.TopicARN, "github", "push", "evt_4", `{"n":4}`)

	if diff := cmp.Diff([]string{"evt_1"}, drainIDs(t, pay.QueueURL, 1)); diff != "" {
		t.Errorf("payments received (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"evt_1", "evt_2", "evt_4"}, drainIDs(t, noPings.QueueURL, 3)); diff != "" {
		t.Errorf("no-pings received (-want +got):\n%s", diff)
	}
}

func fmtAny(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case float64:
		return strconv.Itoa(int(x))
	}
	return ""
}

// drainIDs receives until want messages arrived (or the patience for 10 s
// ran out), deletes them, checks the raw body and attributes, and returns
// the sorted ids.
func drainIDs(t *testing.T, url string, want int) []string {
	t.Helper()
	ctx := context.Background()
	var ids []string
	deadline := time.Now().Add(patience(t, 10*time.Second))
	for len(ids) < want && time.Now().Before(deadline) {
		out, err := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10,
			WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			id := aws.ToString(m.MessageAttributes["id"].StringValue)
			if id == "" || aws.ToString(m.Body)[0] != '{' || aws.ToString(m.MessageAttributes["content_type"].StringValue) != "application/json" {
				t.Errorf("message is not a raw delivery with attributes: body %q attrs %v", aws.ToString(m.Body), m.MessageAttributes)
			}
			ids = append(ids, id)
			_, _ = clients.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
		}
	}
	// Nothing more may arrive.
	out, _ := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
	for range out.Messages {
		ids = append(ids, "unexpected")
	}
	slices.Sort(ids)
	return ids
}

// TestPollerSemantics: partial batch failures come back, successes are
// deleted, a failing message reaches the DLQ through the redrive policy,
// and a cancelled poller finishes its in-flight batch.
func TestPollerSemantics(t *testing.T) {
	ctx := context.Background()
	cfg, err := config.Parse([]byte(`{
	  "sources": [{"name": "s", "verify": {"kind": "github", "secretName": "x"}}],
	  "destinations": [{"name": "d", "url": "http://127.0.0.1:1/", "allowPrivateNetworks": true,
	     "retry": {"schedule": ["1s"]}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	topo, err := devstack.Provision(ctx, clients, cfg, nil, uniquePrefix(t))
	if err != nil {
		t.Fatal(err)
	}
	lane := topo.Lanes[0]
	for i := range 5 {
		publish(t, topo.TopicARN, "s", "push", "evt_"+strconv.Itoa(i), `{}`)
	}
	var mu sync.Mutex
	seen := map[string]int{}
	handler := func(ctx context.Context, ev events.SQSEvent) (events.SQSEventResponse, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("handler context has no deadline")
		}
		var resp events.SQSEventResponse
		mu.Lock()
		defer mu.Unlock()
		for _, r := range ev.Records {
			id := *r.MessageAttributes["id"].StringValue
			seen[id]++
			if id == "evt_3" { // always fails
				resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: r.MessageId})
				vis := int32(0)
				_, _ = clients.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &lane.QueueURL, ReceiptHandle: &r.ReceiptHandle, VisibilityTimeout: vis})
			}
		}
		return resp, nil
	}
	pctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	p := &devstack.Poller{SQS: clients.SQS, QueueURL: lane.QueueURL, QueueARN: lane.QueueARN, BatchSize: 10, Concurrency: 2,
		WaitTime: time.Second, FunctionTimeout: 5 * time.Second, Handler: handler, Log: slog.New(slog.NewTextHandler(io.Discard, nil))}
	go func() { _ = p.Run(pctx); close(done) }()
	waitFor(t, 20*time.Second, "evt_3 handled twice", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return seen["evt_3"] >= 2
	})
	// The third receive moves evt_3 to the DLQ.
	waitFor(t, 20*time.Second, "evt_3 in the DLQ", func() bool { return depth(t, lane.DLQURL) == 1 })
	cancel()
	<-done
	mu.Lock()
	defer mu.Unlock()
	for i := range 5 {
		id := "evt_" + strconv.Itoa(i)
		want := 1
		if id == "evt_3" {
			want = 2 // maxReceiveCount = 2 attempts, then the DLQ
		}
		if seen[id] != want {
			t.Errorf("%s handled %d times, want %d", id, seen[id], want)
		}
	}
	if diff := cmp.Diff([]string{"evt_3"}, drainIDs(t, lane.DLQURL, 1)); diff != "" {
		t.Errorf("DLQ (-want +got):\n%s", diff)
	}
}
