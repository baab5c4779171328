//go:build integration

package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
)

// The emulator's account and region: target ARNs name them.
const emulatorAccount = "123456789012"

func arnOf(service, resource string) string {
	return fmt.Sprintf("arn:aws:%s:%s:%s:%s", service, awsCfg.Region, emulatorAccount, resource)
}

// targetQueue creates a queue a target delivers to (FIFO when the name
// ends in .fifo) and returns its URL.
func targetQueue(t *testing.T, name string) string {
	t.Helper()
	in := &sqs.CreateQueueInput{QueueName: aws.String(name)}
	if strings.HasSuffix(name, ".fifo") {
		in.Attributes = map[string]string{"FifoQueue": "true"}
	}
	out, err := clients.SQS.CreateQueue(context.Background(), in)
	if err != nil {
		t.Fatalf("create %s: %v", name, err)
	}
	return aws.ToString(out.QueueUrl)
}

// receiveOne waits for one message on a queue, with its attributes.
func receiveOne(t *testing.T, url string) sqstypes.Message {
	t.Helper()
	var msg *sqstypes.Message
	waitFor(t, 10*time.Second, "a message on "+url, func() bool {
		out, err := clients.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url, MaxNumberOfMessages: 1, WaitTimeSeconds: 1,
			MessageAttributeNames: []string{"All"}, MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 0 {
			msg = &out.Messages[0]
		}
		return msg != nil
	})
	return *msg
}

// deadWithDLQ waits for the event's record on a destination to be DEAD
// with an error holding want, and for its message in the lane's DLQ.
func deadWithDLQ(t *testing.T, e *env, destination, id, want string) {
	t.Helper()
	waitFor(t, 20*time.Second, destination+"'s record DEAD", func() bool {
		r, _ := e.record(destination, id)
		return r.Status == dedupe.StatusDead
	})
	if r, _ := e.record(destination, id); !strings.Contains(r.LastError, want) || r.Attempts != 2 {
		t.Errorf("%s: record after %d attempts, error %q; want 2 attempts and %q", destination, r.Attempts, r.LastError, want)
	}
	lane, _ := e.stack.Topology.Lane(destination)
	var dlq []string
	waitFor(t, 20*time.Second, "the message in "+destination+"'s DLQ", func() bool {
		dlq = append(dlq, queueIDs(t, lane.DLQURL, 2*time.Second)...)
		return len(dlq) > 0
	})
	if diff := cmp.Diff([]string{id}, dlq); diff != "" {
		t.Errorf("%s DLQ (-want +got):\n%s", destination, diff)
	}
}

func delivered(t *testing.T, e *env, destination, id string) {
	t.Helper()
	waitFor(t, 10*time.Second, destination+"'s record DELIVERED", func() bool {
		r, _ := e.record(destination, id)
		return r.Status == dedupe.StatusDelivered
	})
}

const oneRetry = `"retry": {"schedule": ["1s"], "jitter": 0}`

// TestSQSTargets: an event reaches a standard and a FIFO queue as its own
// bytes with its attributes (the FIFO queue with the source as group and
// the event id as dedupe id), and a lane whose queue does not exist fails
// each attempt with SQS's error, ending DEAD and in its DLQ.
func TestSQSTargets(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix(t)
	plain, fifo := targetQueue(t, prefix+"-target"), targetQueue(t, prefix+"-target.fifo")
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "queue", "type": "sqs", "target": %q}`, arnOf("sqs", prefix+"-target")),
		fmt.Sprintf(`{"name": "fifo", "type": "sqs", "target": %q}`, arnOf("sqs", prefix+"-target.fifo")),
		fmt.Sprintf(`{"name": "missing", "type": "sqs", "target": %q, %s}`, arnOf("sqs", prefix+"-nowhere"), oneRetry),
	}, nil)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_sqs_target_1", nil)
	delivered(t, e, "queue", ev.id)
	delivered(t, e, "fifo", ev.id)
	for _, url := range []string{plain, fifo} {
		m := receiveOne(t, url)
		attr := func(k string) string { return aws.ToString(m.MessageAttributes[k].StringValue) }
		if attr("id") != ev.id || attr("source") != "stripe" || attr("type") != "payment_intent.succeeded" || attr("received_at") == "" || attr("encoding") != "" {
			t.Errorf("%s: attributes %v", url, m.MessageAttributes)
		}
		var body struct{ ID, Type string }
		if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &body); err != nil || body.ID != "evt_sqs_target_1" || body.Type != "payment_intent.succeeded" {
			t.Errorf("%s: body %.200s: %v", url, aws.ToString(m.Body), err)
		}
		if url == fifo && (m.Attributes["MessageGroupId"] != "stripe" || m.Attributes["MessageDeduplicationId"] != ev.id) {
			t.Errorf("fifo: group %q, dedupe id %q", m.Attributes["MessageGroupId"], m.Attributes["MessageDeduplicationId"])
		}
	}
	deadWithDLQ(t, e, "missing", ev.id, "NonExistentQueue")
}

// TestEventBridgeTarget: an event put on a bus arrives, through a rule
// with an SQS target, as Source hookfan.<source>, DetailType its type and
// Detail its JSON body; a lane whose bus does not exist fails each attempt
// with the bus's refusal, ending DEAD and in its DLQ.
func TestEventBridgeTarget(t *testing.T) {
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
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "bus", "type": "eventbridge", "target": %q}`, arnOf("events", "event-bus/"+bus)),
		fmt.Sprintf(`{"name": "nobus", "type": "eventbridge", "target": %q, %s}`, arnOf("events", "event-bus/"+prefix+"-nowhere"), oneRetry),
	}, nil)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_eb_target_1", nil)
	delivered(t, e, "bus", ev.id)
	m := receiveOne(t, seen)
	var got struct {
		Source     string `json:"source"`
		DetailType string `json:"detail-type"`
		Detail     struct{ ID, Type string }
	}
	if err := json.Unmarshal([]byte(aws.ToString(m.Body)), &got); err != nil {
		t.Fatalf("what arrived: %.300s: %v", aws.ToString(m.Body), err)
	}
	if got.Source != "hookfan.stripe" || got.DetailType != "payment_intent.succeeded" || got.Detail.ID != "evt_eb_target_1" {
		t.Errorf("arrived %+v", got)
	}
	deadWithDLQ(t, e, "nobus", ev.id, "eventbridge")
}

// TestLambdaTarget: a real Go function under the Lambda RIE, invoked
// through the SDK's Lambda client, gets the envelope; a function error is
// a failed attempt with the error's type in the record, ending DEAD and
// in the DLQ after the schedule.
func TestLambdaTarget(t *testing.T) {
	t.Parallel()
	bin := lambdaBin(t)
	var primed map[string]string
	fn := startFunction(t, bin, "targetfn", "targetfn", 30*time.Second, map[string]string{},
		lambdatarget.Envelope{ID: "prime", Type: "prime", Encoding: sender.EncodingText}, &primed)
	arn := arnOf("lambda", "function:targetfn:live")
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "fn", "type": "lambda", "target": %q, "batchSize": 1, "maxConcurrency": 2, %s}`, arn, oneRetry),
	}, nil, func(o *devstack.Options) {
		o.Lambda = devstack.NewRIEInvoker(awsCfg, fn.Endpoint())
		o.Pollers = 1 // the RIE runs one invocation at a time
	})
	ok := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_fn_target_ok", nil)
	bad := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_fn_target_bad", setType("payment_intent.fail"))
	delivered(t, e, "fn", ok.id)
	if !strings.Contains(fn.Logs(), `"targetfn_got":"`+ok.id+`","type":"payment_intent.succeeded","source":"stripe","encoding":"text","attempt":1`) {
		t.Errorf("the function did not log the envelope of %s:\n%s", ok.id, fn.Logs())
	}
	deadWithDLQ(t, e, "fn", bad.id, "lambda FunctionError Unhandled: TargetRefused")
}

// TestSQSTargetRedriveAfterFix: a lane whose queue does not exist yet
// sends its event to the DLQ; ops dlq lists it with the target's error;
// the owner creates the queue; ops redrive moves it back and it arrives
// once.
func TestSQSTargetRedriveAfterFix(t *testing.T) {
	t.Parallel()
	prefix := uniquePrefix(t)
	e := startEnv(t, []string{
		fmt.Sprintf(`{"name": "late", "type": "sqs", "target": %q, %s}`, arnOf("sqs", prefix+"-late"), oneRetry),
	}, nil)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_sqs_late_1", nil)
	lane, _ := e.stack.Topology.Lane("late")
	waitFor(t, 30*time.Second, "the event DEAD and in the DLQ", func() bool {
		r, _ := e.record("late", ev.id)
		return r.Status == dedupe.StatusDead && depth(t, lane.DLQURL) == 1
	})
	out, errOut, code := e.ops("dlq", "late")
	if code != 0 || !strings.Contains(out, ev.id) || !strings.Contains(out, "NonExistentQueue") {
		t.Fatalf("dlq: exit %d\n%s%s", code, out, errOut)
	}
	url := targetQueue(t, prefix+"-late")
	if out, errOut, code := e.ops("redrive", "late"); code != 0 || !strings.Contains(out, "moved 1 message(s)") {
		t.Fatalf("redrive: exit %d\n%s%s", code, out, errOut)
	}
	delivered(t, e, "late", ev.id)
	e.settled()
	if ids := queueIDs(t, url, 2*time.Second); !cmp.Equal(ids, []string{ev.id}) {
		t.Errorf("the queue got %v, want the event once", ids)
	}
}
