//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
)

// sqsAccepts is SQS's character set, from its documentation: #x9 | #xA |
// #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF. moto accepts any
// character, so the test checks what real SQS would refuse itself.
func sqsAccepts(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !(r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)) {
			return false
		}
	}
	return true
}

// tapTopic subscribes a queue the test owns to the topic, with raw message
// delivery as every destination queue has it, and returns the queue's URL.
func tapTopic(t *testing.T, topicARN, prefix string) string {
	t.Helper()
	ctx := context.Background()
	q, err := clients.SQS.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "-tap")})
	if err != nil {
		t.Fatal(err)
	}
	attrs, err := clients.SQS.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: q.QueueUrl,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameQueueArn}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = clients.SNS.Subscribe(ctx, &sns.SubscribeInput{TopicArn: &topicARN, Protocol: aws.String("sqs"),
		Endpoint:   aws.String(attrs.Attributes[string(sqstypes.QueueAttributeNameQueueArn)]),
		Attributes: map[string]string{"RawMessageDelivery": "true"}})
	if err != nil {
		t.Fatal(err)
	}
	return *q.QueueUrl
}

// drain receives (and deletes) want messages from a queue, or what came
// within timeout of the first (which is waited for with patience: on a
// loaded machine the emulator may take longer to hand it over).
func drain(t *testing.T, url string, want int, timeout time.Duration) []sqstypes.Message {
	t.Helper()
	var got []sqstypes.Message
	deadline := time.Now().Add(patience(t, timeout))
	for len(got) < want && time.Now().Before(deadline) {
		if len(got) > 0 && time.Until(deadline) > timeout {
			deadline = time.Now().Add(timeout)
		}
		out, err := clients.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			got = append(got, m)
			_, _ = clients.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
		}
	}
	return got
}

// idOf reads the event id of a 202 answer's body.
func idOf(body []byte) string {
	var out struct{ ID string }
	_ = json.Unmarshal(body, &out)
	return out.ID
}

// TestEveryAcceptedBodyIsDeliverable: bodies holding characters SQS
// refuses, or invalid UTF-8, sent through the gateway (which, as API
// Gateway with binary media types "*/*", passes them base64-encoded). Each
// is refused with 400, or published so that every body and attribute a
// raw SQS subscription of the topic receives is in SQS's set, and the
// subscriber receives the provider's exact bytes.
func TestEveryAcceptedBodyIsDeliverable(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("all", rc, "")}, map[string]*receiver{"all": rc})
	tap := tapTopic(t, e.stack.Topology.TopicARN, e.prefix)

	stripe := func(name, body string) events.Sample {
		s := events.MustLoad("stripe", "payment_intent.succeeded")
		s.Name, s.Body = name, []byte(body)
		return s
	}
	github := func(name, id, contentType string, body []byte) events.Sample {
		s := events.MustLoad("github", "push")
		s.Name, s.Body = name, body
		s.Header.Set("X-GitHub-Delivery", id)
		s.Header.Set("Content-Type", contentType)
		return s
	}
	protobuf := []byte{0x0a, 0x07, 'e', 'v', 't', '_', '1', '2', '3', 0x12, 0x06, 'o', 'r', 'd', 'e', 'r', 's', 0x18, 0x96, 0x01, 0x22, 0x00, 0xff}
	tests := []struct {
		source     string
		sample     events.Sample
		wantStatus int
	}{
		{"stripe", stripe("plain", `{"id":"evt_sqs_plain","type":"charge.succeeded","note":"café 😀"}`), 202},
		{"stripe", stripe("U+FFFF in a string", "{\"id\":\"evt_sqs_ffff\",\"type\":\"charge.succeeded\",\"note\":\"a\uFFFFb\"}"), 202},
		{"stripe", stripe("U+FFFE in a string", "{\"id\":\"evt_sqs_fffe\",\"type\":\"charge.succeeded\",\"note\":\"\uFFFE\"}"), 202},
		{"stripe", stripe("invalid UTF-8 in a string", "{\"id\":\"evt_sqs_utf8\",\"type\":\"charge.succeeded\",\"note\":\"\xff\xfe\"}"), 202},
		{"stripe", stripe("type ending in U+FFFF", "{\"id\":\"evt_sqs_type\",\"type\":\"charge.succeeded\uFFFF\"}"), 400},
		{"stripe", stripe("SOH after the document", `{"id":"evt_sqs_soh","type":"charge.succeeded"}`+"\x01"), 400},
		{"stripe", stripe("repeated type", `{"id":"evt_sqs_dup","type":"a","type":"b"}`), 400},
		{"github", github("NUL in a body", "d0000000-0000-4000-8000-000000000001", "application/octet-stream", []byte("payload\x00with a NUL")), 202},
		{"github", github("form feed in a form body", "d0000000-0000-4000-8000-000000000002", "application/x-www-form-urlencoded", []byte("payload=%7B%7D&note=page\fbreak")), 202},
		{"github", github("protobuf-like body", "d0000000-0000-4000-8000-000000000003", "application/x-protobuf", protobuf), 202},
	}
	sent := map[string][]byte{} // event id → the provider's bytes
	for _, tt := range tests {
		status, answer := e.post(tt.source, tt.sample, tt.sample.ContentType())
		id := idOf(answer)
		if status != tt.wantStatus {
			t.Errorf("%s: ingest answered %d, want %d", tt.sample.Name, status, tt.wantStatus)
			continue
		}
		if status == http.StatusAccepted {
			sent[id] = tt.sample.Body
		}
	}

	// What a raw SQS subscription receives: SQS's characters only.
	for _, m := range drain(t, tap, len(sent), 20*time.Second) {
		if !sqsAccepts(aws.ToString(m.Body)) {
			t.Errorf("published body %q holds a character SQS refuses", aws.ToString(m.Body))
		}
		for name, a := range m.MessageAttributes {
			if !sqsAccepts(aws.ToString(a.StringValue)) {
				t.Errorf("attribute %s = %q holds a character SQS refuses", name, aws.ToString(a.StringValue))
			}
		}
		if _, ok := sent[aws.ToString(m.MessageAttributes["id"].StringValue)]; !ok {
			t.Errorf("the topic carried a message ingest did not accept: %s", aws.ToString(m.MessageAttributes["id"].StringValue))
		}
	}

	// What the subscriber receives: the exact bytes, signed.
	waitFor(t, 30*time.Second, fmt.Sprintf("%d deliveries", len(sent)), func() bool { return len(rc.deliveries()) >= len(sent) })
	e.settled()
	got := map[string][]byte{}
	for _, d := range rc.deliveries() {
		if !d.verified {
			t.Errorf("delivery %s did not verify", d.header.Get("webhook-id"))
		}
		got[d.header.Get("webhook-id")] = d.body
	}
	if len(got) != len(sent) {
		t.Errorf("subscriber received %d events, want %d", len(got), len(sent))
	}
	for id, want := range sent {
		if !bytes.Equal(got[id], want) {
			t.Errorf("event %s: subscriber received %q, the provider sent %q", id, got[id], want)
		}
	}
}

// TestLogsShareKeyTypes: every line each function logs has its function's
// message and an outcome, and a key both functions log has one JSON type
// in both.
func TestLogsShareKeyTypes(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n == 1 {
			return http.StatusServiceUnavailable // a failed attempt, then a delivered one
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("logs", rc, `"retry": {"schedule": ["1s"]}`)}, map[string]*receiver{"logs": rc})
	e.send("stripe", "stripe", "payment_intent.succeeded", "evt_logs_1", nil)
	s := events.MustLoad("stripe", "payment_intent.succeeded")
	s.Body = []byte(`{"id":"evt_logs_2","type":"a","type":"b"}`)
	if status, _ := e.post("stripe", s, "application/json"); status != http.StatusBadRequest {
		t.Fatalf("repeated type: %d, want 400", status)
	}
	waitFor(t, 30*time.Second, "a delivery after a failed attempt", func() bool { return len(rc.deliveries()) >= 2 })
	time.Sleep(time.Second)

	types := map[string]map[string]string{} // function → key → JSON type
	for _, line := range strings.Split(e.logs.String(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		fn, _ := l["function"].(string)
		want := ""
		switch {
		case fn == "ingest":
			want = ingest.LogMessage
		case strings.HasPrefix(fn, "deliver-"):
			fn, want = "deliver", delivery.LogMessage
		default:
			continue // the local stack's own components
		}
		if l["msg"] != want || l["outcome"] == nil {
			t.Errorf("%s line without message %q and an outcome: %s", fn, want, line)
		}
		if types[fn] == nil {
			types[fn] = map[string]string{}
		}
		for k, v := range l {
			typ := fmt.Sprintf("%T", v)
			if prev, ok := types[fn][k]; ok && prev != typ {
				t.Errorf("%s logs %s as %s and as %s", fn, k, prev, typ)
			}
			types[fn][k] = typ
		}
	}
	for _, k := range []string{"source", "id", "type", "outcome", "status", "latency_ms"} {
		in, de := types["ingest"][k], types["deliver"][k]
		if in == "" || de == "" {
			t.Errorf("key %s: ingest logs it as %q, deliver as %q; want both", k, in, de)
		}
	}
	for k, in := range types["ingest"] {
		if de, ok := types["deliver"][k]; ok && de != in {
			t.Errorf("key %s: ingest logs a %s, deliver a %s", k, in, de)
		}
	}
}
