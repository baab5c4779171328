package ingest_test

import (
	"bytes"
	"encoding/base64"
	"net/http"
	"testing"
	"unicode/utf8"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/delivery"
)

// sqsText is SQS's character set, written from its documentation as the
// oracle: #x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF.
func sqsText(s string) bool {
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

// deliverable checks what SQS would take from one publish, and what the
// deliver function makes of it: the body and every attribute value in
// SQS's set, and the body decoded by delivery.ParseMessage equal to the
// provider's bytes.
func deliverable(t *testing.T, in *sns.PublishInput, want []byte) {
	t.Helper()
	if !sqsText(*in.Message) {
		t.Errorf("published body %q holds a character SQS refuses", truncateForLog(*in.Message))
	}
	rec := lambdaevents.SQSMessage{MessageId: "m1", Body: *in.Message, Attributes: map[string]string{"ApproximateReceiveCount": "1"},
		MessageAttributes: map[string]lambdaevents.SQSMessageAttribute{}}
	for name, v := range in.MessageAttributes {
		if !sqsText(*v.StringValue) {
			t.Errorf("attribute %s = %q holds a character SQS refuses", name, *v.StringValue)
		}
		rec.MessageAttributes[name] = lambdaevents.SQSMessageAttribute{DataType: *v.DataType, StringValue: v.StringValue}
	}
	m, err := delivery.ParseMessage(rec)
	if err != nil {
		t.Fatalf("deliver cannot read the message: %v", err)
	}
	if !bytes.Equal(m.Body, want) {
		t.Errorf("deliver reads body %q, want the provider's %q", truncateForLog(string(m.Body)), truncateForLog(string(want)))
	}
}

func truncateForLog(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}

// TestEveryAcceptedBodyIsDeliverable: bodies holding characters SQS
// refuses, or invalid UTF-8, are either refused (when the kind reads them
// as JSON and they are not one document) or published SQS-safe and
// delivered byte for byte, whether API Gateway passes them as text or
// base64.
func TestEveryAcceptedBodyIsDeliverable(t *testing.T) {
	protobuf := []byte{0x0a, 0x07, 'e', 'v', 't', '_', '1', '2', '3', 0x12, 0x0d, 'o', 'r', 'd', 'e', 'r', '.', 'c', 'r', 'e', 'a', 't', 'e', 'd', 0x18, 0x96, 0x01, 0x22, 0x00}
	tests := []struct {
		name, source, kind string
		body               string
		header             http.Header
		wantCode           string // "" when accepted
		wantBase64         bool
	}{
		{"NUL in a generic body", "hmac-plain", "hmac", "payload\x00with a NUL", nil, "", true},
		{"SOH after a Stripe document", "stripe", "stripe", `{"id":"evt_1","type":"a"}` + "\x01", nil, "body_not_json", false},
		{"NUL after a Stripe document", "stripe", "stripe", `{"id":"evt_1","type":"a"}` + "\x00", nil, "body_not_json", false},
		{"form feed in a form body", "github", "github", "payload=%7B%7D&note=page\fbreak",
			http.Header{"X-Github-Delivery": {"d-ff"}, "X-Github-Event": {"push"}, "Content-Type": {"application/x-www-form-urlencoded"}}, "", true},
		{"U+FFFE in a Stripe string", "stripe", "stripe", "{\"id\":\"evt_2\",\"type\":\"a\",\"note\":\"\uFFFE\"}", nil, "", true},
		{"U+FFFF in a Stripe string", "stripe", "stripe", "{\"id\":\"evt_3\",\"type\":\"a\",\"note\":\"x\uFFFF\"}", nil, "", true},
		{"U+FFFF ending the type", "stripe", "stripe", "{\"id\":\"evt_4\",\"type\":\"a\uFFFF\"}", nil, "event_type_invalid", false},
		{"invalid UTF-8 in a Stripe string", "stripe", "stripe", "{\"id\":\"evt_5\",\"type\":\"a\",\"note\":\"\xff\xfe\"}", nil, "", true},
		{"invalid UTF-8 generic body", "hmac-plain", "hmac", "\xff\xfe\xfd", nil, "", true},
		{"protobuf-like binary body", "hmac-plain", "hmac", string(protobuf), nil, "", true},
		{"escaped NUL in a Stripe string stays text", "stripe", "stripe", `{"id":"evt_6","type":"a","note":"\u0000"}`, nil, "", false},
		{"DEL and C1 controls are in SQS's set", "hmac-plain", "hmac", "del\x7f c1\u0085", nil, "", false},
		{"emoji and CJK", "stripe", "stripe", `{"id":"evt_7","type":"a","note":"😀 世界"}`, nil, "", false},
	}
	for _, tt := range tests {
		for _, asBase64 := range []bool{false, true} {
			name := tt.name + "/text"
			if asBase64 {
				name = tt.name + "/base64"
			}
			t.Run(name, func(t *testing.T) {
				r := newRig(t, testSources())
				h := tt.header
				if h == nil {
					h = http.Header{"Content-Type": {"application/octet-stream"}}
				}
				req := signSample(t, tt.source, events.Sample{Kind: tt.kind, Name: "sqs", Body: []byte(tt.body), Header: h}, r.now)
				if asBase64 {
					req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(tt.body)), true
				}
				resp := r.do(t, req)
				if tt.wantCode != "" {
					if resp.StatusCode != http.StatusBadRequest || errorCode(t, resp.Body) != tt.wantCode {
						t.Fatalf("answer %d %s, want 400 %s", resp.StatusCode, resp.Body, tt.wantCode)
					}
					if len(r.pub.calls) != 0 {
						t.Fatal("a refused request was published")
					}
					return
				}
				acceptedID(t, resp)
				in := r.pub.published()[0]
				if got := attr(in, "encoding") == "base64"; got != tt.wantBase64 {
					t.Errorf("published base64: %v, want %v", got, tt.wantBase64)
				}
				deliverable(t, in, []byte(tt.body))
			})
		}
	}
}
