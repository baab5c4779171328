package delivery

import (
	"context"
	"net/http"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/message"
)

// An event a reconciliation run brought in reaches the subscriber with
// hookfan-reconciled: true; any other event without the header.
func TestReconciledHeader(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusOK} })
	hs := newHarness(t, sub.URL, secret)
	reconciled := sqsRecord("evt_r", 1)
	v := message.ReconciledTrue
	reconciled.MessageAttributes[message.AttrReconciled] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	resp, _ := hs.h.Handle(context.Background(), batch(reconciled, sqsRecord("evt_i", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := map[string]string{}
	for _, r := range sub.requests() {
		got[r.header.Get(https.HeaderID)] = r.header.Get(https.HeaderReconciled)
	}
	if got["evt_r"] != "true" || got["evt_i"] != "" || len(got) != 2 {
		t.Errorf("hookfan-reconciled by id %v; want evt_r true, evt_i absent", got)
	}
}
