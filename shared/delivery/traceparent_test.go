package delivery

import (
	"context"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/delivery/sender/https"
)

// TestDeliveryCarriesTraceParent: with tracing on, a message whose SQS
// record kept a trace header is POSTed with the traceparent derived from
// it; with tracing off, or without a header, no traceparent is sent.
func TestDeliveryCarriesTraceParent(t *testing.T) {
	const xray = "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"
	secret := newSecret(t)
	for _, tc := range []struct {
		name    string
		tracing bool
		header  string
		want    string
	}{
		{"on", true, xray, "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01"},
		{"on without a header", true, "", ""},
		{"off", false, xray, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sub := newSubscriber(t, secret, nil)
			hs := newHarness(t, sub.URL, secret, func(o *laneOptions) { o.Tracing = tc.tracing })
			rec := sqsRecord("evt-trace", 1)
			if tc.header != "" {
				rec.Attributes[sqsTraceHeader] = tc.header
			}
			resp, err := hs.h.Handle(context.Background(), events.SQSEvent{Records: []events.SQSMessage{rec}})
			if err != nil || len(resp.BatchItemFailures) != 0 {
				t.Fatalf("handle: %v %v", resp, err)
			}
			got := sub.requests()
			if len(got) != 1 {
				t.Fatalf("%d requests, want 1", len(got))
			}
			if v := got[0].header.Get(https.HeaderTraceParent); v != tc.want {
				t.Errorf("traceparent %q, want %q", v, tc.want)
			}
			if got[0].err != nil {
				t.Errorf("the signature no longer verifies: %v", got[0].err)
			}
		})
	}
}
