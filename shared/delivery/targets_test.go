package delivery

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/eventbridgetarget"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// targetHarness is a lane of type typ delivering to the fakes: no URL, no
// signing secret.
func targetHarness(t *testing.T, typ, arn string, f *MemoryTargets) *harness {
	return newHarness(t, "", "", func(o *laneOptions) {
		o.Destination = config.Destination{Name: "orders", Type: typ, Target: arn, TimeoutSeconds: 2}
		o.SecretID, o.Secrets = "", nil
		o.Targets = f
	})
}

func recordOf(t *testing.T, hs *harness, id string) dedupe.Record {
	t.Helper()
	r, ok, err := hs.store.Get(context.Background(), dedupe.Key("orders", id))
	if err != nil || !ok {
		t.Fatalf("record of %s: %v, %v", id, ok, err)
	}
	return r
}

// TestSQSTargetKeepsTheKeysGroup: a record received in a FIFO message group
// (an ordered lane's key) goes to a FIFO target queue in that group, so the
// target keeps the key's order.
func TestSQSTargetKeepsTheKeysGroup(t *testing.T) {
	f := &MemoryTargets{}
	hs := targetHarness(t, config.TypeSQS, "arn:aws:sqs:eu-west-1:210987654321:orders.fifo", f)
	rec := sqsRecord("evt_1", 1)
	if rec.Attributes == nil {
		rec.Attributes = map[string]string{}
	}
	rec.Attributes[MessageGroupIDAttribute] = "stripe:ord_42"
	resp, _ := hs.h.Handle(context.Background(), batch(rec))
	if len(resp.BatchItemFailures) != 0 || len(f.Sent) != 1 {
		t.Fatalf("failures %v, sent %d", failures(resp), len(f.Sent))
	}
	if got := aws.ToString(f.Sent[0].MessageGroupId); got != "stripe:ord_42" {
		t.Errorf("group %q, want the key's group stripe:ord_42", got)
	}
}

// TestSQSTarget: the body is the event's bytes and the attributes name
// it; a FIFO queue gets the source as group and the id as dedupe id.
func TestSQSTarget(t *testing.T) {
	f := &MemoryTargets{}
	hs := targetHarness(t, config.TypeSQS, "arn:aws:sqs:eu-west-1:210987654321:orders.fifo", f)
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("evt_1", 1)))
	if len(resp.BatchItemFailures) != 0 || len(f.Sent) != 1 {
		t.Fatalf("failures %v, sent %d", failures(resp), len(f.Sent))
	}
	in := f.Sent[0]
	if got := aws.ToString(in.QueueUrl); got != "https://sqs.eu-west-1.amazonaws.com/210987654321/orders.fifo" {
		t.Errorf("queue URL %s", got)
	}
	if got := aws.ToString(in.MessageBody); got != sqsRecord("evt_1", 1).Body {
		t.Errorf("body %s", got)
	}
	for k, want := range map[string]string{message.AttrID: "evt_1", message.AttrSource: "stripe", message.AttrType: "invoice.paid", message.AttrContentType: "application/json"} {
		if got := aws.ToString(in.MessageAttributes[k].StringValue); got != want {
			t.Errorf("attribute %s = %q, want %q", k, got, want)
		}
	}
	if _, ok := in.MessageAttributes[message.AttrEncoding]; ok {
		t.Error("a text body carries encoding")
	}
	if _, ok := in.MessageAttributes[message.AttrReceivedAt]; !ok {
		t.Error("no received_at")
	}
	if aws.ToString(in.MessageGroupId) != "stripe" || aws.ToString(in.MessageDeduplicationId) != "evt_1" {
		t.Errorf("group %v, dedupe %v", aws.ToString(in.MessageGroupId), aws.ToString(in.MessageDeduplicationId))
	}
	if r := recordOf(t, hs, "evt_1"); r.Status != dedupe.StatusDelivered {
		t.Errorf("record %+v", r)
	}
}

// TestSQSTargetBinaryBody: bytes SQS would refuse travel as base64 with
// encoding=base64, and a standard queue gets no group.
func TestSQSTargetBinaryBody(t *testing.T) {
	f := &MemoryTargets{}
	hs := targetHarness(t, config.TypeSQS, "arn:aws:sqs:us-east-1:123456789012:orders", f)
	rec := sqsRecord("evt_b", 1)
	raw := []byte{0x00, 0x01, 'x', 0xff}
	rec.Body = base64.StdEncoding.EncodeToString(raw)
	enc := message.EncodingBase64
	rec.MessageAttributes[message.AttrEncoding] = eventsAttr(enc)
	_, _ = hs.h.Handle(context.Background(), batch(rec))
	if len(f.Sent) != 1 {
		t.Fatalf("sent %d", len(f.Sent))
	}
	in := f.Sent[0]
	if aws.ToString(in.MessageBody) != base64.StdEncoding.EncodeToString(raw) || aws.ToString(in.MessageAttributes[message.AttrEncoding].StringValue) != "base64" {
		t.Errorf("body %q, attributes %v", aws.ToString(in.MessageBody), in.MessageAttributes)
	}
	if in.MessageGroupId != nil || in.MessageDeduplicationId != nil {
		t.Error("a standard queue got a group or dedupe id")
	}
}

// TestTargetFailuresAreFailedAttempts: each type's refusal is a failed
// attempt, retried on the schedule, with the target's error in the
// record; at the last attempt the record is DEAD and the message goes to
// the DLQ (released at once).
func TestTargetFailuresAreFailedAttempts(t *testing.T) {
	denied := &smithy.GenericAPIError{Code: "AccessDenied", Message: "not authorized to perform sqs:SendMessage"}
	tests := []struct {
		name, typ, arn string
		f              *MemoryTargets
		wantErr        string
	}{
		{"sqs missing queue", config.TypeSQS, "arn:aws:sqs:us-east-1:123456789012:gone",
			&MemoryTargets{Err: &smithy.GenericAPIError{Code: "AWS.SimpleQueueService.NonExistentQueue", Message: "The specified queue does not exist."}},
			"sqs AWS.SimpleQueueService.NonExistentQueue: The specified queue does not exist."},
		{"sqs denied", config.TypeSQS, "arn:aws:sqs:us-east-1:123456789012:q", &MemoryTargets{Err: denied}, "sqs AccessDenied: not authorized"},
		{"eventbridge entry refused", config.TypeEventBridge, "arn:aws:events:us-east-1:123456789012:event-bus/default",
			&MemoryTargets{RefuseEntry: true}, "eventbridge MalformedDetail: Detail is malformed."},
		{"eventbridge bus missing", config.TypeEventBridge, "arn:aws:events:us-east-1:123456789012:event-bus/nope",
			&MemoryTargets{Err: &smithy.GenericAPIError{Code: "ResourceNotFoundException", Message: "Event bus nope does not exist."}}, "eventbridge ResourceNotFoundException"},
		{"lambda function error", config.TypeLambda, "arn:aws:lambda:us-east-1:123456789012:function:f",
			&MemoryTargets{FunctionError: true}, "lambda FunctionError Unhandled: OrderRejected: no such customer"},
		{"lambda throttled", config.TypeLambda, "arn:aws:lambda:us-east-1:123456789012:function:f:live",
			&MemoryTargets{Err: &lambdatypes.TooManyRequestsException{Message: aws.String("Rate exceeded"), RetryAfterSeconds: aws.String("7")}},
			"lambda TooManyRequestsException: Rate exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := targetHarness(t, tt.typ, tt.arn, tt.f)
			resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("evt_f", 1)))
			if len(resp.BatchItemFailures) != 1 {
				t.Fatalf("failures %v", failures(resp))
			}
			r := recordOf(t, hs, "evt_f")
			if r.Status != dedupe.StatusFailed || !strings.Contains(r.LastError, tt.wantErr) {
				t.Errorf("record %s %q, want FAILED with %q", r.Status, r.LastError, tt.wantErr)
			}
			vis := hs.sqs.visibility()["rh-evt_f"]
			if len(vis) != 1 || vis[0] <= 0 {
				t.Errorf("visibility %v: want a backoff", vis)
			}
			if tt.name == "lambda throttled" && vis[0] < 7 {
				t.Errorf("throttled retry in %ds, before Lambda's Retry-After 7", vis[0])
			}
			last := hs.h.policy.Attempts()
			resp, _ = hs.h.Handle(context.Background(), batch(sqsRecord("evt_f", last)))
			if r := recordOf(t, hs, "evt_f"); len(resp.BatchItemFailures) != 1 || r.Status != dedupe.StatusDead {
				t.Errorf("last attempt: record %s, failures %v", r.Status, failures(resp))
			}
			if vis := hs.sqs.visibility()["rh-evt_f"]; vis[len(vis)-1] != 0 {
				t.Errorf("last attempt released in %ds, want 0 (to the DLQ)", vis[len(vis)-1])
			}
		})
	}
}

// TestEventBridgeTarget: Source hookfan.<source>, DetailType the type,
// Detail the JSON object; anything else in the documented wrapper.
func TestEventBridgeTarget(t *testing.T) {
	f := &MemoryTargets{}
	bus := "arn:aws:events:us-east-1:210987654321:event-bus/orders"
	hs := targetHarness(t, config.TypeEventBridge, bus, f)
	_, _ = hs.h.Handle(context.Background(), batch(sqsRecord("evt_j", 1)))
	list := sqsRecord("evt_l", 1)
	list.Body = `[1,2]`
	_, _ = hs.h.Handle(context.Background(), batch(list))
	if len(f.Put) != 2 {
		t.Fatalf("put %d", len(f.Put))
	}
	e := f.Put[0].Entries[0]
	if aws.ToString(e.EventBusName) != bus || aws.ToString(e.Source) != "hookfan.stripe" || aws.ToString(e.DetailType) != "invoice.paid" ||
		aws.ToString(e.Detail) != sqsRecord("evt_j", 1).Body || e.Time == nil {
		t.Errorf("entry %+v", e)
	}
	var w eventbridgetarget.WrappedDetail
	if err := json.Unmarshal([]byte(aws.ToString(f.Put[1].Entries[0].Detail)), &w); err != nil || w.Wrapped.Body != "[1,2]" || w.Wrapped.Encoding != sender.EncodingText {
		t.Errorf("wrapped %s: %+v %v", aws.ToString(f.Put[1].Entries[0].Detail), w, err)
	}
	if d := eventbridgetarget.Detail(sender.Delivery{Body: []byte{0xff, 0}, ContentType: "application/octet-stream"}); !strings.Contains(d, `"encoding":"base64","body":"/wA="`) {
		t.Errorf("binary detail %s", d)
	}
}

// TestLambdaTarget: a synchronous invoke of the ARN with the envelope.
func TestLambdaTarget(t *testing.T) {
	f := &MemoryTargets{}
	fn := "arn:aws:lambda:us-east-1:210987654321:function:orders:live"
	hs := targetHarness(t, config.TypeLambda, fn, f)
	resp, _ := hs.h.Handle(context.Background(), batch(sqsRecord("evt_1", 2)))
	if len(resp.BatchItemFailures) != 0 || len(f.Invoked) != 1 {
		t.Fatalf("failures %v, invoked %d", failures(resp), len(f.Invoked))
	}
	in := f.Invoked[0]
	if aws.ToString(in.FunctionName) != fn || in.InvocationType != lambdatypes.InvocationTypeRequestResponse {
		t.Errorf("invoke %s %s", aws.ToString(in.FunctionName), in.InvocationType)
	}
	var env lambdatarget.Envelope
	if err := json.Unmarshal(in.Payload, &env); err != nil {
		t.Fatal(err)
	}
	if env.ID != "evt_1" || env.Source != "stripe" || env.Type != "invoice.paid" || env.Attempt != 2 || env.Encoding != sender.EncodingText ||
		env.Body != sqsRecord("evt_1", 1).Body || env.ReceivedAt == "" || env.ContentType != "application/json" {
		t.Errorf("envelope %+v", env)
	}
}

// TestTargetClientRequired: an AWS destination without its client is
// refused at assembly, naming what is missing; no signing secret needed.
func TestTargetClientRequired(t *testing.T) {
	_, err := newLane(laneOptions{Options: Options{
		Destination: config.Destination{Name: "orders", Type: config.TypeLambda, Target: "arn:aws:lambda:us-east-1:123456789012:function:f"},
		QueueURL:    testQueueURL, Store: dedupe.NewMemory(), SQS: &fakeSQS{}, Metrics: metrics.NewRecorder(&captureSink{}),
	}, Client: https.NewClient(config.Destination{})})
	if err == nil || !strings.Contains(err.Error(), "the destination is of type lambda but no Lambda client was given") {
		t.Errorf("err %v", err)
	}
	if err != nil && strings.Contains(err.Error(), "SecretID") {
		t.Errorf("a lambda destination asked for a signing secret: %v", err)
	}
}

// TestTargetTimeout: an attempt that outlives the destination's timeout
// is recorded as "timeout".
func TestTargetTimeout(t *testing.T) {
	r := sender.Call(context.Background(), 1, "sqs", func(ctx context.Context) error {
		<-ctx.Done()
		return errors.Join(errors.New("operation error SQS: SendMessage"), ctx.Err())
	})
	if r.Verdict() != sender.Failed || r.Describe() != "timeout" {
		t.Errorf("verdict %v, describe %q", r.Verdict(), r.Describe())
	}
}

func eventsAttr(v string) events.SQSMessageAttribute {
	return events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
}

// TestTargetReplayAndProbe: an operator's replay of a delivered event is
// sent to the target again, marked with its replay id (on a FIFO queue in
// the dedupe id too, or SQS would drop it as a copy); a paused lane's
// probe goes through the target's call, unsigned, as type hookfan.probe.
func TestTargetReplayAndProbe(t *testing.T) {
	f := &MemoryTargets{}
	hs := targetHarness(t, config.TypeSQS, "arn:aws:sqs:us-east-1:123456789012:orders.fifo", f)
	_, _ = hs.h.Handle(context.Background(), batch(sqsRecord("evt_r", 1)))
	replay := sqsRecord("evt_r", 1)
	replay.MessageId = "msg-replay"
	replay.MessageAttributes[message.AttrReplay] = eventsAttr("rpl_ops1")
	resp, _ := hs.h.Handle(context.Background(), batch(replay))
	if len(resp.BatchItemFailures) != 0 || len(f.Sent) != 2 {
		t.Fatalf("failures %v, sent %d; want the replay sent", failures(resp), len(f.Sent))
	}
	in := f.Sent[1]
	if aws.ToString(in.MessageAttributes[message.AttrReplay].StringValue) != "rpl_ops1" || aws.ToString(in.MessageDeduplicationId) != "evt_r:rpl_ops1" {
		t.Errorf("replay attributes %v, dedupe id %q", in.MessageAttributes, aws.ToString(in.MessageDeduplicationId))
	}
	res := hs.h.probe(context.Background(), pausing.State{Probes: 3})
	if !res.OK || len(f.Sent) != 3 || aws.ToString(f.Sent[2].MessageAttributes[message.AttrType].StringValue) != ProbeType {
		t.Errorf("probe %+v, sent %d", res, len(f.Sent))
	}
	f.Err = &smithy.GenericAPIError{Code: "AccessDenied", Message: "no"}
	if res := hs.h.probe(context.Background(), pausing.State{Probes: 4}); res.OK || !strings.Contains(res.Error, "sqs AccessDenied") {
		t.Errorf("failed probe %+v", res)
	}
}

// FuzzEventDetail: whatever the body, the Detail put on a bus is one JSON
// object, and a wrapped body reads back to the body's bytes.
func FuzzEventDetail(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1]`, `"s"`, "plain text", "\x00\xff", ` {"a": "\ufffe"}`, `{"a":1} x`, ""} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		d := eventbridgetarget.Detail(sender.Delivery{Body: body, ContentType: "application/octet-stream"})
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(d), &obj); err != nil {
			t.Fatalf("detail %q of %q is not a JSON object: %v", d, body, err)
		}
		if d == string(body) {
			return
		}
		var w eventbridgetarget.WrappedDetail
		if err := json.Unmarshal([]byte(d), &w); err != nil {
			t.Fatal(err)
		}
		got := []byte(w.Wrapped.Body)
		if w.Wrapped.Encoding == sender.EncodingBase64 {
			got, _ = base64.StdEncoding.DecodeString(w.Wrapped.Body)
		}
		if string(got) != string(body) {
			t.Errorf("wrapped %q reads back %q", body, got)
		}
	})
}

// TestTargetEnvContract: an AWS destination's type and target travel in
// the contract's destination; its function needs no signing secret, which
// the contract then does not render, while an https lane still requires
// one.
func TestTargetEnvContract(t *testing.T) {
	cfg := &config.Config{}
	d := config.Destination{Name: "orders", Type: config.TypeEventBridge, Target: "arn:aws:events:us-east-1:210987654321:event-bus/orders"}
	env := LaneEnv(cfg, d, LaneResources{Table: "table", QueueURL: testQueueURL, QueueARN: "arn:aws:sqs:us-east-1:123456789012:q"})
	vars := env.Render()
	if _, ok := vars[EnvSecretID]; ok {
		t.Errorf("rendered %s for an unsigned lane", EnvSecretID)
	}
	back, err := ReadEnv(func(k string) string { return vars[k] })
	if err != nil || back.Destination.Type != d.Type || back.Destination.Target != d.Target || back.SecretID != "" {
		t.Fatalf("read back %+v, %v", back.Destination, err)
	}
	queue := struct {
		*fakeSQS
		*MemoryTargets
	}{&fakeSQS{}, &MemoryTargets{}}
	if _, err := Assemble(back, Clients{Store: dedupe.NewMemory(), SQS: queue, Metrics: &captureSink{}, Target: &MemoryTargets{}}); err != nil {
		t.Errorf("assemble: %v", err)
	}
	if _, err := Assemble(back, Clients{Store: dedupe.NewMemory(), SQS: queue, Metrics: &captureSink{}}); err == nil || !strings.Contains(err.Error(), "no EventBridge client was given") {
		t.Errorf("assemble without the client: %v", err)
	}
	https := LaneEnv(cfg, config.Destination{Name: "web", URL: "https://h.example.com/"}, LaneResources{Table: "table", QueueURL: testQueueURL, QueueARN: "q"}).Render()
	if _, err := ReadEnv(func(k string) string { return https[k] }); err == nil || !strings.Contains(err.Error(), EnvSecretID) {
		t.Errorf("an https lane without its secret: %v", err)
	}
}
