package delivery

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// TestHostileTransformIsDeadAndBatchMatesDeliver: an event on which the
// transform passes its memory bound (a string of 400 MB) ends DEAD with
// the bound as its reason, and the other events of its batch are
// delivered (issue #31).
func TestHostileTransformIsDeadAndBatchMatesDeliver(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, withTransform(`{text: ("x" * (.n // 1))}`), func(o *laneOptions) { o.MemoryMB = 128 })
	bad := sqsRecord("evt_big", 1)
	bad.Body = `{"n": 4e8}`
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_a", 1), bad, sqsRecord("evt_b", 1)))
	if f := failures(resp); len(f) != 1 || len(sub.requests()) != 2 {
		t.Fatalf("failures %v, %d requests; want the hostile one released and two delivered", f, len(sub.requests()))
	}
	r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_big"))
	if r.Status != dedupe.StatusDead || !strings.Contains(r.LastError, "past the memory bound") {
		t.Errorf("record %s, %q; want DEAD past the memory bound", r.Status, r.LastError)
	}
	for _, id := range []string{"evt_a", "evt_b"} {
		if r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", id)); r.Status != dedupe.StatusDelivered {
			t.Errorf("%s: %s, want DELIVERED", id, r.Status)
		}
	}
}

// TestTransformErrorsNeverCopyTheBody: a transform's error keeps its kind
// in the record, its history and the warning, and the value it failed on
// (a token the provider put in the body) appears only at DEBUG.
func TestTransformErrorsNeverCopyTheBody(t *testing.T) {
	const token = "sk_live_51SECRETtokenVALUE"
	body := `{"id":"evt_s","a":"` + token + `","n":"` + token + `","list":[1]}`
	for _, tt := range []struct{ expr, kind string }{
		{`error(.a)`, "raised an error (error) with a string value"},
		{`.a.b`, "expected an object but got: string"},
		{`.a[]`, "cannot iterate over: string"},
		{`.n | tonumber`, "tonumber"},
		{`.a + 1`, "cannot add: string and number"},
		{`{x: .a} | keys | .[0] | error`, "raised an error"},
	} {
		t.Run(tt.expr, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, nil)
			h := newHarness(t, sub.URL, secret, withTransform(tt.expr))
			rec := sqsRecord("evt_s", 1)
			rec.Body = body
			h.h.Handle(context.Background(), batch(rec))
			r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_s"))
			if r.Status != dedupe.StatusDead || !strings.Contains(r.LastError, tt.kind) {
				t.Errorf("record %s, %q; want DEAD with %q", r.Status, r.LastError, tt.kind)
			}
			if strings.Contains(r.LastError, "SECRET") {
				t.Errorf("last_error quotes the body: %q", r.LastError)
			}
			for _, e := range r.History {
				if strings.Contains(e.Error, "SECRET") {
					t.Errorf("history quotes the body: %q", e.Error)
				}
			}
			for _, line := range strings.Split(h.logs.b.String(), "\n") {
				if strings.Contains(line, "SECRET") && !strings.Contains(line, `"level":"DEBUG"`) {
					t.Errorf("a non-DEBUG line quotes the body: %s", line)
				}
			}
		})
	}
}

// TestTransformInterruptedIsNotTheEventsFault: when the invocation ends
// while the body is reshaped, the event is not given up (no DEAD record,
// no DeliveryDead): it is released unsent and backed off for a fresh
// invocation. It was recorded DEAD, "ran longer than", before.
func TestTransformInterruptedIsNotTheEventsFault(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, withTransform(`{a: .id}`))
	msg := Message{ID: "evt_cut", Source: "stripe", Type: "charge.succeeded", Body: []byte(`{"id":"evt_cut"}`), Attempt: 1}
	now := h.clock.Now()
	lease, err := h.store.Claim(context.Background(), dedupe.ClaimInput{PK: dedupe.Key("orders", msg.ID), Source: msg.Source, Type: msg.Type,
		Now: now, LeaseUntil: now.Add(time.Minute), ExpiresAt: now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the invocation's deadline came first
	p := prepared{msg: msg, rec: &events.SQSMessage{}, log: h.h.log, started: now, now: now}
	d, ok := h.h.reshape(ctx, &p, lease)
	if ok || d.dead || !d.release {
		t.Fatalf("decision %+v, ok %v; want the message released, not given up", d, ok)
	}
	r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", msg.ID))
	if r.Status == dedupe.StatusDead {
		t.Errorf("record DEAD (%q); an interrupted transform is not the event's fault", r.LastError)
	}
}
