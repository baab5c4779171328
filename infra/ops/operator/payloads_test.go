package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"
)

// countingStore counts the bodies written again.
type countingStore struct {
	*payload.Memory
	restored []string
}

func (c *countingStore) Restore(ctx context.Context, ref payload.Reference, body []byte) error {
	c.restored = append(c.restored, ref.Key)
	return c.Memory.Restore(ctx, ref, body)
}

// addLarge puts a message whose body is a payload reference into url.
func (f *fakeQueues) addLarge(url, id string, ref payload.Reference, received time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	str := func(v string) sqstypes.MessageAttributeValue {
		return sqstypes.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	f.msgs[url] = append(f.msgs[url], &fakeMsg{id: "m-" + id, body: ref.JSON(), attrs: map[string]sqstypes.MessageAttributeValue{
		message.AttrID: str(id), message.AttrPayload: str(message.PayloadS3), message.AttrReceivedAt: str(received.UTC().Format(message.ReceivedAtLayout))}})
}

func largeStore(t *testing.T) *countingStore {
	t.Helper()
	m := payload.NewMemory("hookfan-payloads")
	m.Archive = "hookfan-archive"
	return &countingStore{Memory: m}
}

// TestRedriveRestoresLargeBodies: a redrive writes every large body again
// before its message goes back to the queue — from the payload bucket, or
// from the archive's copy once the bucket's lifecycle removed it — so a
// message redriven late still finds its body; one whose body exists nowhere
// stays in the DLQ, and the redrive fails naming its age and the fix.
func TestRedriveRestoresLargeBodies(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	store := largeStore(t)
	received := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	bodies := map[string][]byte{}
	refs := map[string]payload.Reference{}
	for _, id := range []string{"fresh", "expired", "gone"} {
		bodies[id] = bytes.Repeat([]byte(id), 100000)
		ref, err := store.Put(ctx, "stripe", id, bodies[id])
		if err != nil {
			t.Fatal(err)
		}
		refs[id] = ref
		q.addLarge("dlq", id, ref, received)
	}
	q.add("dlq", "small")
	store.Delete(refs["expired"].Key) // the payload bucket's lifecycle
	store.Delete(refs["gone"].Key)
	store.DeleteArchived(refs["gone"].Key) // and the archive's

	op, out := testOperator(q, c)
	op.Payloads = store
	op.Resources.ArchiveBucket, op.Resources.ArchiveDays, op.Resources.PayloadDays = "hookfan-archive", 30, 17
	res, err := op.Redrive(ctx, "d", RedriveOptions{Wait: time.Hour})
	if !errors.Is(err, errBodyLost) {
		t.Fatalf("redrive: %v, want errBodyLost for one message\n%s", err, out)
	}
	for _, want := range []string{"1 message(s) left in the DLQ of d", "event gone (received 2026-05-01T00:00:00.000Z, 19 days ago)",
		"expired from the payload bucket (objects are kept 17 days", "the archive keeps its copy 30 days", "stays in the DLQ of d", "Fix: ask the provider to send the event again"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
	if !strings.Contains(out.String(), "copying the messages one by one, each large body written again first") {
		t.Errorf("the redrive does not say why it copies:\n%s", out)
	}
	if diff := cmp.Diff([]string{"expired", "fresh", "small"}, sortedCopy(q.ids("q"))); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"gone"}, q.ids("dlq")); diff != "" {
		t.Errorf("DLQ (-want +got):\n%s", diff)
	}
	if res.Moved != 3 || len(res.Lost) != 1 {
		t.Errorf("result %+v", res)
	}
	// Both surviving bodies written again (a fresh lifecycle), the expired
	// one from the archive's copy, byte for byte.
	if diff := cmp.Diff([]string{refs["fresh"].Key, refs["expired"].Key}, store.restored, cmp.Transformer("sort", sortedCopy)); diff != "" {
		t.Errorf("bodies written again (-want +got):\n%s", diff)
	}
	for _, id := range []string{"fresh", "expired"} {
		if got, err := store.Get(ctx, refs[id]); err != nil || !bytes.Equal(got, bodies[id]) {
			t.Errorf("%s after the redrive: %d bytes, %v", id, len(got), err)
		}
	}
}

// TestRedriveWithoutPayloadBucketRefusesAReference: a reference in a DLQ
// of a stack whose index names no payload bucket is not sent blind.
func TestRedriveWithoutPayloadBucketRefusesAReference(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 20, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	q.addLarge("dlq", "e1", payload.NewReference("hookfan-payloads", "stripe", "e1", []byte("x")), c.t)
	op, _ := testOperator(q, c)
	if _, err := op.Redrive(context.Background(), "d", RedriveOptions{}); err == nil || !strings.Contains(err.Error(), "names no payload bucket") {
		t.Fatalf("got %v", err)
	}
	if len(q.ids("q")) != 0 || len(q.ids("dlq")) != 1 {
		t.Errorf("queue %v, DLQ %v; want the message kept in the DLQ", q.ids("q"), q.ids("dlq"))
	}
}

// archivedLarge archives an event whose body went through S3.
func archivedLarge(t *testing.T, bucket *archive.MemoryBucket, id string, ref payload.Reference, received time.Time) {
	t.Helper()
	str := func(v string) archive.Attribute { return archive.Attribute{Type: "String", Value: v} }
	ev := archive.Event{ID: id, Message: ref.JSON(), SNSMessageID: "sns-" + id, PublishedAt: received, Attributes: map[string]archive.Attribute{
		message.AttrID: str(id), message.AttrSource: str("stripe"), message.AttrType: str("invoice.paid"),
		message.AttrReceivedAt: str(received.UTC().Format(message.ReceivedAtLayout)), message.AttrContentType: str("application/json"),
		message.AttrPayload: str(message.PayloadS3)}}
	rec, err := json.Marshal(ev.Envelope())
	if err != nil {
		t.Fatal(err)
	}
	obj, err := archive.EncodeObject([][]byte{rec})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bucket.PutObject(context.Background(), &s3.PutObjectInput{Key: aws.String(archive.ObjectKey("test", received, id)), Body: bytes.NewReader(obj)}); err != nil {
		t.Fatal(err)
	}
}

// TestReplayRestoresLargeBody: replaying an event whose body the payload
// bucket's lifecycle removed writes it again from the archive's copy
// before sending the reference; one whose archive copy is gone too is not
// sent, and the replay fails naming it.
func TestReplayRestoresLargeBody(t *testing.T) {
	ctx := context.Background()
	c := &clock{t: time.Date(2026, 5, 29, 0, 0, 0, 0, time.UTC)}
	q := newFakeQueues(c.now)
	store := largeStore(t)
	bucket := archive.NewMemoryBucket()
	received := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	body := bytes.Repeat([]byte(`{"k":"v"}`), 40000)
	refs := map[string]payload.Reference{}
	for _, id := range []string{"evt_kept", "evt_gone"} {
		ref, err := store.Put(ctx, "stripe", id, body)
		if err != nil {
			t.Fatal(err)
		}
		refs[id] = ref
		store.Delete(ref.Key) // the payload bucket's lifecycle
		archivedLarge(t, bucket, id, ref, received)
	}
	store.DeleteArchived(refs["evt_gone"].Key)

	op, out := testOperator(q, c)
	op.Payloads, op.Archive = store, archive.NewReader(bucket, "hookfan-archive")
	op.Resources.ArchiveBucket, op.Resources.ArchiveDays, op.Resources.PayloadDays = "hookfan-archive", 30, 17
	res, err := op.Replay(ctx, ReplayOptions{Destination: "d", Since: received.Add(-time.Hour), Until: received.Add(time.Hour)})
	if !errors.Is(err, errBodyLost) || !strings.Contains(err.Error(), "event evt_gone (received 2026-05-01T10:00:00.000Z, 27 days ago)") || !strings.Contains(err.Error(), "it is not replayed") {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if diff := cmp.Diff([]string{"evt_kept"}, q.ids("q")); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	if got, err := store.Get(ctx, refs["evt_kept"]); err != nil || !bytes.Equal(got, body) {
		t.Errorf("the replayed event's body in the payload bucket: %d bytes, %v", len(got), err)
	}
	if len(res.Events) != 1 || len(res.NotSent) != 1 {
		t.Errorf("result %+v", res)
	}

	// With --ignore-filter, a large body of a source the lane's function
	// may not read (its grant is its filter's sources') is not sent.
	op.Resources.Lanes[0].Filter.Sources = []string{"github"}
	before := len(q.ids("q"))
	_, err = op.Replay(ctx, ReplayOptions{Destination: "d", Event: "evt_kept", IgnoreFilter: true, Since: received.Add(-time.Hour), Until: received.Add(time.Hour)})
	if err == nil || !strings.Contains(err.Error(), "event evt_kept of source stripe: its body is in S3 under payloads/stripe/, which d's function may not read") ||
		!strings.Contains(err.Error(), "Fix: add stripe to d's filter.sources") || len(q.ids("q")) != before {
		t.Errorf("replay to a lane that cannot read the body: %v; queue %v", err, q.ids("q"))
	}
}
