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
	"github.com/aws/aws-sdk-go-v2/service/sqs"

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
// archive, which holds the body itself, not only its reference. A redrive
// the stack cannot see (the console's move task) past the object's life
// is delivered too: the deliverer reads the archive's copy.
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
	  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}, "maxBodyBytes": 1000000},
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

	// A console redrive (a move task: the stack sees nothing) of an event
	// whose object is gone: the deliverer reads the archive's copy.
	fixed.Store(false)
	var second []byte
	ev2 := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_large_console", func(s *events.Sample) {
		padded(300<<10, 7001)(s)
		second = s.Body
	})
	waitFor(t, 60*time.Second, "the second event DEAD and in the DLQ", func() bool {
		r, _ := e.record("d", ev2.id)
		return r.Status == dedupe.StatusDead && depth(t, lane.DLQURL) == 1
	})
	ref2 := payload.NewReference(e.stack.Topology.PayloadBucket, "stripe", ev2.id, second)
	if _, err := clients.S3.DeleteObject(context.Background(), &s3.DeleteObjectInput{Bucket: &e.stack.Topology.PayloadBucket, Key: &ref2.Key}); err != nil {
		t.Fatal(err)
	}
	fixed.Store(true)
	moveLikeTheConsole(t, lane.DLQURL, lane.QueueURL)
	waitFor(t, 30*time.Second, "the console-redriven delivery", func() bool { return rc.accepted(ev2.id) == 1 })
	got := rc.deliveries()
	last := got[len(got)-1]
	if !last.verified || !bytes.Equal(last.body, second) || last.header.Get("webhook-id") != ev2.id {
		t.Errorf("console-redriven delivery: verified %v, %d bytes (the body: %v)", last.verified, len(last.body), bytes.Equal(last.body, second))
	}
	if _, err := clients.S3.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &e.stack.Topology.PayloadBucket, Key: &ref2.Key}); err == nil {
		t.Error("the payload object is back: the delivery did not come from the archive's copy")
	}
	for _, d := range rc.deliveries() {
		if d.status == http.StatusNoContent && strings.Contains(string(d.body), `"bucket"`) && len(d.body) < 1024 {
			t.Errorf("a delivery carried the reference, not the body: %s", d.body)
		}
	}
}

// moveLikeTheConsole moves every message of a DLQ to its queue unchanged,
// as a DLQ redrive's move task does (moto has none): receive, send with
// the same body and attributes, delete.
func moveLikeTheConsole(t *testing.T, dlq, queue string) {
	t.Helper()
	ctx := context.Background()
	for {
		out, err := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &dlq, MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 0 {
			return
		}
		for _, m := range out.Messages {
			if _, err := clients.SQS.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &queue, MessageBody: m.Body, MessageAttributes: m.MessageAttributes}); err != nil {
				t.Fatal(err)
			}
			if _, err := clients.SQS.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &dlq, ReceiptHandle: m.ReceiptHandle}); err != nil {
				t.Fatal(err)
			}
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
