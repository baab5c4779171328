package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestBatchInvalid(t *testing.T) {
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"no maxEvents", `, "batch": {"windowSeconds": 1}`, []string{
			`destinations[0].batch.maxEvents: is not set; set the most events one POST carries, 1 to 10000 (e.g. {"maxEvents": 100, "windowSeconds": 1}), or remove batch`,
		}},
		{"negative maxEvents", `, "batch": {"maxEvents": -3}`, []string{
			`destinations[0].batch.maxEvents: -3 is out of range; use 1 to 10000 (the SQS event source mapping's batch size)`,
		}},
		{"maxEvents over the mapping's", `, "batch": {"maxEvents": 10001, "windowSeconds": 5}`, []string{
			`destinations[0].batch.maxEvents: 10001 is out of range; use 1 to 10000 (the SQS event source mapping's batch size)`,
		}},
		{"over 10 without a window", `, "batch": {"maxEvents": 11}`, []string{
			`destinations[0].batch.windowSeconds: is 0 with maxEvents 11; the event source mapping takes a batch size over 10 only with a window of at least 1 second: set windowSeconds to 1 or more, or maxEvents to 10 or fewer`,
		}},
		{"window too long", `, "batch": {"maxEvents": 5, "windowSeconds": 301}`, []string{
			`destinations[0].batch.windowSeconds: 301 is out of range; use 0 to 300 seconds`,
		}},
		{"negative window", `, "batch": {"maxEvents": 5, "windowSeconds": -1}`, []string{
			`destinations[0].batch.windowSeconds: -1 is out of range; use 0 to 300 seconds`,
		}},
		{"window past a Duration", `, "batch": {"maxEvents": 5, "windowSeconds": 1e300}`, []string{
			`destinations[0].batch.windowSeconds: 1e+09 is out of range; use 0 to 300 seconds`,
		}},
		{"fractional window", `, "batch": {"maxEvents": 5, "windowSeconds": 1.5}`, []string{
			`destinations[0].batch.windowSeconds: 1.5 is not a whole number of seconds; the event source mapping's window is whole seconds: use 2`,
		}},
		{"maxBytes too small", `, "batch": {"maxEvents": 5, "maxBytes": 100}`, []string{
			`destinations[0].batch.maxBytes: 100 is out of range; use 1024 to 6291456 (Lambda's 6 MB synchronous payload, what a receiver on Lambda accepts), or leave it out (default 1048576)`,
		}},
		{"maxBytes over Lambda's payload", `, "batch": {"maxEvents": 5, "maxBytes": 7000000}`, []string{
			`destinations[0].batch.maxBytes: 7000000 is out of range; use 1024 to 6291456 (Lambda's 6 MB synchronous payload, what a receiver on Lambda accepts), or leave it out (default 1048576)`,
		}},
		{"beside batchSize and batchWindowSeconds", `, "batchSize": 5, "batchWindowSeconds": 2, "batch": {"maxEvents": 5}`, []string{
			`destinations[0].batchSize: 5 is set beside batch; on a batched lane batch.maxEvents is the batch size: remove batchSize`,
			`destinations[0].batchWindowSeconds: 2 is set beside batch; on a batched lane batch.windowSeconds is the window: remove batchWindowSeconds`,
		}},
		{"unknown member", `, "batch": {"maxEvents": 5, "maxEvent": 5}`, []string{
			`destinations[0].batch.maxEvent: unknown field; did you mean maxEvents?`,
		}},
		{"window as a string", `, "batch": {"maxEvents": 5, "windowSeconds": "5s"}`, []string{
			`destinations[0].batch.windowSeconds: "5s" is a string; want a number`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(paused(tt.extra)))
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBatchInvalidByType(t *testing.T) {
	tests := []struct {
		name, dest string
		want       []string
	}{
		{"ordered lane over FIFO's 10", `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:customer"}, "batch": {"maxEvents": 11}}`, []string{
			`destinations[0].batch.maxEvents: 11 is more than an ordered lane's FIFO queue hands one invocation; use 1 to 10`,
		}},
		{"ordered lane with a window", `{"name": "d", "url": "https://d.example.com", "ordering": {"key": "body:customer"}, "batch": {"maxEvents": 10, "windowSeconds": 2}}`, []string{
			`destinations[0].batch.windowSeconds: is 2 on an ordered lane; the event source mapping of a FIFO queue takes no batching window: remove windowSeconds (an ordered lane's batch fills from what is waiting)`,
		}},
		{"lambda target over its payload", `{"name": "d", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:orders", "batch": {"maxEvents": 5, "maxBytes": 7000000}}`, []string{
			`destinations[0].batch.maxBytes: 7000000 is out of range; use 1024 to 6291456 (Lambda's 6 MB synchronous payload, what a receiver on Lambda accepts), or leave it out (default 6291456)`,
		}},
		{"sqs target over one request", `{"name": "d", "type": "sqs", "target": "arn:aws:sqs:us-east-1:123456789012:orders", "batch": {"maxEvents": 5, "maxBytes": 300000}}`, []string{
			`destinations[0].batch.maxBytes: 300000 is out of range; use 1024 to 262144 (what one SendMessageBatch request carries), or leave it out (default 262144)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "destinations": [` + tt.dest + `]}`
			_, err := Parse([]byte(doc))
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestBatchDefaultsAndRoundTrip(t *testing.T) {
	c, err := Parse([]byte(paused(`, "batch": {"maxEvents": 500, "windowSeconds": 2}`)))
	if err != nil {
		t.Fatal(err)
	}
	d := c.Destinations[0]
	b, ok := d.Batching()
	if want := (Batch{MaxEvents: 500, Window: 2 * time.Second, MaxBytes: DefaultBatchMaxBytes}); !ok || b != want {
		t.Errorf("Batching() = %+v, %v; want %+v, true", b, ok, want)
	}
	if d.ReceiveBatch() != 500 || d.BatchWindow() != 2*time.Second {
		t.Errorf("mapping batch %d window %s; want 500 and 2s", d.ReceiveBatch(), d.BatchWindow())
	}
	// The deliver function's environment: encoding/json out, the strict
	// decoder in.
	back, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(d))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d.Batch, back.Batch); diff != "" {
		t.Errorf("batch after the environment (-want +got):\n%s", diff)
	}
	if _, ok := (Destination{}).Batching(); ok {
		t.Error("a lane without batch is batched")
	}
	if !c.Batched() {
		t.Error("Batched() = false")
	}
}

// TestBatchOnALambdaTarget: a lambda destination takes a batch, one
// invocation with the envelope per batch, up to Lambda's payload.
func TestBatchOnALambdaTarget(t *testing.T) {
	doc := `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}], "destinations": [` +
		`{"name": "d", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:orders", "batch": {"maxEvents": 50, "windowSeconds": 2}}]}`
	cfg, err := Parse([]byte(doc))
	if err != nil {
		t.Fatalf("a batched lambda destination refused: %v", err)
	}
	if n := cfg.Destinations[0].ReceiveBatch(); n != 50 {
		t.Errorf("receive batch %d, want 50", n)
	}
}
