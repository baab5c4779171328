//go:build integration

package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"
)

// TestLargeBodyOutlivesItsObject: a body too large for SNS, held in the
// DLQ of a failing destination past its payload object's life (the object
// deleted as the bucket's lifecycle would, which moto does not run), is
// still delivered byte for byte, with a verifying signature, by ops redrive
// and then again by ops replay: each writes the body back from the
// archive, which holds the body itself, not only its reference.
func TestLargeBodyOutlivesItsObject(t *testing.T) {
	t.Parallel()
	var fixed atomic.Bool
	rc := newReceiver(t, func(int, *http.Request) int {
		if fixed.Load() {
			return http.StatusNoContent
		}
		return http.StatusInternalServerError
	})
	large := `[
	  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}, "maxBodyBytes": 4521984},
	  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"}}
	]`
	e := startEnvSources(t, large, []string{destJSON("d", rc, `"retry": {"schedule": ["1s"], "jitter": 0}`)}, map[string]*receiver{"d": rc})
	var body []byte
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_large_late", func(s *events.Sample) {
		padded(600<<10, 7000)(s)
		body = s.Body
	})
	lane, _ := e.stack.Topology.Lane("d")
	waitFor(t, 60*time.Second, "the event DEAD and in the DLQ", func() bool {
		r, _ := e.record("d", ev.id)
		return r.Status == dedupe.StatusDead && depth(t, lane.DLQURL) == 1
	})

	// The archive holds the body itself, under the reference's key.
	var archived archive.Event
	reader := archive.NewReader(clients.S3, e.stack.Topology.Archive.Bucket)
	waitFor(t, 30*time.Second, "the event in the archive", func() bool {
		_, err := reader.Scan(context.Background(), archive.Query{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Minute), ID: ev.id},
			func(a archive.Event) error { archived = a; return nil }, archive.Options{})
		return err == nil && archived.ID == ev.id
	})
	if archived.Attributes[message.AttrPayload].Value != message.PayloadS3 {
		t.Fatalf("archived attributes %v, want payload=s3", archived.Attributes)
	}
	ref, err := payload.ParseReference(archived.Message)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(ref.Key, payload.SourcePrefix("stripe")) {
		t.Errorf("key %s is not under the source's prefix", ref.Key)
	}
	if got := readObject(t, e.stack.Topology.Archive.Bucket, ref.Key); !bytes.Equal(got, body) {
		t.Fatalf("the archive's copy: %d bytes, want the %d of the body", len(got), len(body))
	}

	expire := func() {
		t.Helper()
		if _, err := clients.S3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &e.stack.Topology.PayloadBucket, Key: &ref.Key}); err != nil {
			t.Fatal(err)
		}
	}
	expire() // the payload bucket's lifecycle, while the message waits in the DLQ
	fixed.Store(true)
	out, errOut, code := e.ops("redrive", "d")
	if code != 0 || !strings.Contains(out, "moved 1 message(s) from its DLQ to its queue; 0 left in the DLQ") ||
		!strings.Contains(errOut, "each large body written again first") {
		t.Fatalf("redrive: exit %d\n%s%s", code, out, errOut)
	}
	delivered := func(n int) {
		t.Helper()
		waitFor(t, 30*time.Second, "the delivery", func() bool { return rc.accepted(ev.id) == n })
		got := rc.deliveries()
		last := got[len(got)-1]
		if !last.verified || !bytes.Equal(last.body, body) || last.header.Get("webhook-id") != ev.id {
			t.Errorf("delivery %d: verified %v, %d bytes (the body: %v), webhook-id %q", n, last.verified, len(last.body), bytes.Equal(last.body, body), last.header.Get("webhook-id"))
		}
	}
	delivered(1)
	if got := readObject(t, e.stack.Topology.PayloadBucket, ref.Key); !bytes.Equal(got, body) {
		t.Errorf("the payload object after the redrive: %d bytes, want the body written again", len(got))
	}

	// Past the object's life again, a replay writes it back from the archive.
	expire()
	out, _, code = e.ops("replay", "--destination", "d", "--event", "stripe:evt_large_late")
	if code != 0 || !strings.Contains(out, "replayed 1 event(s) to d") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	delivered(2)
	for _, d := range rc.deliveries() {
		if d.status == http.StatusNoContent && strings.Contains(string(d.body), `"bucket"`) && len(d.body) < 1024 {
			t.Errorf("a delivery carried the reference, not the body: %s", d.body)
		}
	}
}

func readObject(t *testing.T, bucket, key string) []byte {
	t.Helper()
	out, err := clients.S3.GetObject(context.Background(), &s3.GetObjectInput{Bucket: &bucket, Key: &key})
	if err != nil {
		t.Fatalf("s3://%s/%s: %v", bucket, key, err)
	}
	defer out.Body.Close()
	b, err := io.ReadAll(out.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
