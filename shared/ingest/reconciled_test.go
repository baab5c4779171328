package ingest_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/message"
)

// A reconciled event is published as the provider's delivery would have
// been: the same id and type, the same body, marked reconciled.
func TestPublishReconciledIsTheDeliveryMarked(t *testing.T) {
	r := newRig(t, testSources())
	req := signed(t, "stripe", "stripe", "payment_intent.succeeded", r.now)
	id := acceptedID(t, r.do(t, req))
	delivered := r.pub.calls[0]

	got, err := r.h.PublishReconciled(context.Background(), ingest.Reconciled{Source: "stripe", Body: []byte(req.Body), ContentType: "application/json"})
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != id || got.Type != attr(delivered, message.AttrType) {
		t.Errorf("published %+v; the delivery was %s of type %s", got, id, attr(delivered, message.AttrType))
	}
	in := r.pub.calls[1]
	if aws.ToString(in.Message) != req.Body || attr(in, message.AttrID) != id {
		t.Errorf("message %q id %s; want the delivery's body and id %s", aws.ToString(in.Message), attr(in, message.AttrID), id)
	}
	if attr(in, message.AttrReconciled) != message.ReconciledTrue || attr(delivered, message.AttrReconciled) != "" {
		t.Errorf("reconciled attribute %q (delivery's %q); want true on the reconciled message only", attr(in, message.AttrReconciled), attr(delivered, message.AttrReconciled))
	}
}

// An event that does not identify as the kind says is refused as the
// event's fault, and nothing is published.
func TestPublishReconciledRefusesBadEvents(t *testing.T) {
	r := newRig(t, testSources())
	tests := []struct {
		name   string
		rec    ingest.Reconciled
		target error
	}{
		{"unknown source", ingest.Reconciled{Source: "nope", Body: []byte(`{"id":"evt_1","type":"x"}`)}, ingest.ErrReconciledSource},
		{"empty", ingest.Reconciled{Source: "stripe"}, ingest.ErrReconciledEvent},
		{"not JSON", ingest.Reconciled{Source: "stripe", Body: []byte(`id=evt_1`)}, ingest.ErrReconciledEvent},
		{"duplicate id", ingest.Reconciled{Source: "stripe", Body: []byte(`{"id":"evt_1","id":"evt_2","type":"x"}`)}, ingest.ErrReconciledEvent},
		{"no type", ingest.Reconciled{Source: "stripe", Body: []byte(`{"id":"evt_1"}`)}, ingest.ErrReconciledEvent},
		{"control in type", ingest.Reconciled{Source: "stripe", Body: []byte(`{"id":"evt_1","type":"a\u0001b"}`)}, ingest.ErrReconciledEvent},
		{"too large", ingest.Reconciled{Source: "stripe", Body: []byte(`{"id":"evt_1","type":"x","pad":"` + strings.Repeat("a", 300<<10) + `"}`)}, ingest.ErrReconciledEvent},
		{"github without its headers", ingest.Reconciled{Source: "github", Body: []byte(`{}`), Header: http.Header{}}, ingest.ErrReconciledEvent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.h.PublishReconciled(context.Background(), tt.rec)
			if !errors.Is(err, tt.target) {
				t.Errorf("error %v; want %v", err, tt.target)
			}
		})
	}
	if len(r.pub.calls) != 0 {
		t.Errorf("%d messages published", len(r.pub.calls))
	}
}

// A failed publish is not the event's fault.
func TestPublishReconciledPublishFails(t *testing.T) {
	r := newRig(t, testSources())
	r.pub.err = errBoom
	_, err := r.h.PublishReconciled(context.Background(), ingest.Reconciled{Source: "stripe", Body: []byte(`{"id":"evt_1","type":"x"}`)})
	if err == nil || errors.Is(err, ingest.ErrReconciledEvent) || !errors.Is(err, errBoom) {
		t.Errorf("error %v; want the publish's", err)
	}
}
