package operator

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/message"
)

// TestReplayStopsAtItsCap: a replay with Max sends at most Max events and
// says it stopped there; a dry run with a cap counts up to it.
func TestReplayStopsAtItsCap(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	op, out := testOperator(q, c)
	bucket := archive.NewMemoryBucket()
	w := archive.NewWriter(bucket, "b", "test")
	for i, id := range []string{"evt_a", "evt_b", "evt_c"} {
		at := c.t.Add(-time.Duration(30-i) * time.Minute)
		body, attrs := message.Event{ID: id, Source: "stripe", Type: "charge.refunded", ReceivedAt: at, ContentType: "application/json", Body: `{}`}.Encode()
		rec, err := json.Marshal(archive.Event{ID: id, Message: body, Attributes: attrs, SNSMessageID: "m" + id, PublishedAt: at}.Envelope())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(context.Background(), [][]byte{rec}, at); err != nil {
			t.Fatal(err)
		}
	}
	op.Archive, op.Resources.ArchiveBucket, op.Resources.ArchiveDays = archive.NewReader(bucket, "b"), "b", 30
	since := c.t.Add(-time.Hour)
	for _, dry := range []bool{true, false} {
		res, err := op.Replay(context.Background(), ReplayOptions{Destination: "d", Since: since, Max: 2, DryRun: dry})
		if err != nil || len(res.Events) != 2 || !res.Capped {
			t.Errorf("dry %v: %d events, capped %v, error %v; want 2, capped", dry, len(res.Events), res.Capped, err)
		}
	}
	if got := q.ids("q"); len(got) != 2 {
		t.Errorf("the queue got %v, want 2 events", got)
	}
	if !strings.Contains(out.String(), "stopped at the cap of 2") {
		t.Errorf("the replay does not say it stopped at its cap:\n%s", out)
	}
	res, err := op.Replay(context.Background(), ReplayOptions{Destination: "d", Since: since, Max: 3, DryRun: true})
	if err != nil || len(res.Events) != 3 || res.Capped {
		t.Errorf("a cap of all 3: %d events, capped %v, %v", len(res.Events), res.Capped, err)
	}
	if _, err := op.Replay(context.Background(), ReplayOptions{Destination: "d", Since: since, Max: -1}); err == nil {
		t.Error("a negative cap was accepted")
	}
}
