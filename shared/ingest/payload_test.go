package ingest_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
)

// largeRig is a rig whose "hmac-plain" source takes bodies up to the REST
// ceiling, with a memory payload store.
func largeRig(t *testing.T) (*rig, *payload.Memory) {
	t.Helper()
	return largeRigOf(t, "hmac-plain")
}

// largeRigOf is a rig whose source large takes bodies up to the REST
// ceiling (the others keep the default), with a memory payload store.
func largeRigOf(t *testing.T, large string) (*rig, *payload.Memory) {
	t.Helper()
	sources := testSources()
	for i := range sources {
		if sources[i].Name == large {
			sources[i].MaxBodyBytes = config.MaxBodyBytesREST
		}
	}
	r := newRig(t, sources)
	r.sources = sources
	store := payload.NewMemory("hookfan-payloads")
	h, err := ingest.New(ingest.Options{
		Sources: sources, TopicARN: topicARN, Publisher: r.pub, Secrets: r.sec, Replay: r.rep,
		Metrics: metrics.NewRecorder(r.met), Logger: slog.New(slog.NewJSONHandler(r.log, nil)),
		Now: func() time.Time { return r.now }, Payloads: store,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r, store
}

func bigBody(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }

// TestLargeBodyStoredThenReferenced: a body over one SNS message is stored
// under its event id before the reference is published; the message holds
// the reference and payload=s3, the object the exact bytes.
func TestLargeBodyStoredThenReferenced(t *testing.T) {
	r, store := largeRig(t)
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"2 MiB of text", bigBody(2<<20, 'a')},
		{"the ceiling", bigBody(config.MaxBodyBytesREST, 'z')},
		// Under the inline limit, but its base64 is not: it goes to S3 too.
		{"200 KiB binary", bigBody(200<<10, 0xff)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := events.Sample{Kind: "hmac", Name: "big", Body: tc.body, Header: http.Header{"Content-Type": {"application/octet-stream"}}}
			id := acceptedID(t, r.do(t, signSample(t, "hmac-plain", s, r.now)))
			calls := r.pub.published()
			in := calls[len(calls)-1]
			if attr(in, "payload") != "s3" || attr(in, "encoding") != "" || attr(in, "id") != id {
				t.Errorf("attributes %v, want payload=s3, no encoding, id %s", in.MessageAttributes, id)
			}
			ref, err := payload.ParseReference(aws.ToString(in.Message))
			if err != nil {
				t.Fatalf("published body %q: %v", aws.ToString(in.Message), err)
			}
			got, err := store.Get(context.Background(), ref)
			if err != nil || !bytes.Equal(got, tc.body) {
				t.Fatalf("stored object: %d bytes, %v; want the %d bytes sent", len(got), err, len(tc.body))
			}
			if ref.Key != payload.Key("hmac-plain", id, sha(tc.body)) {
				t.Errorf("key %s is not derived from the source and the event id %s", ref.Key, id)
			}
		})
	}
	// A provider's retry of one event overwrites its object: one key.
	before := len(store.Keys())
	s := events.Sample{Kind: "hmac", Name: "big", Body: bigBody(300<<10, 'q'), Header: http.Header{}}
	acceptedID(t, r.do(t, signSample(t, "hmac-plain", s, r.now)))
	acceptedID(t, r.do(t, signSample(t, "hmac-plain", s, r.now.Add(time.Second))))
	if got := len(store.Keys()); got != before+1 {
		t.Errorf("%d objects after one event sent twice, want %d", got, before+1)
	}
}

// TestLargeBodyStoreFailure: when the body cannot be stored nothing is
// published and the provider gets 503 to retry.
func TestLargeBodyStoreFailure(t *testing.T) {
	r, store := largeRig(t)
	store.Err = errors.New("s3: service unavailable")
	s := events.Sample{Kind: "hmac", Name: "big", Body: bigBody(1<<20, 'a'), Header: http.Header{}}
	resp := r.do(t, signSample(t, "hmac-plain", s, r.now))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != "payload_store_failed" {
		t.Errorf("answer %d %s, want 503 payload_store_failed", resp.StatusCode, resp.Body)
	}
	if n := len(r.pub.published()); n != 0 {
		t.Errorf("%d messages published without their body stored", n)
	}
	// Over the source's limit: 413, nothing stored.
	store.Err = nil
	s.Body = bigBody(config.MaxBodyBytesREST+1, 'a')
	resp = r.do(t, signSample(t, "hmac-plain", s, r.now))
	if resp.StatusCode != http.StatusRequestEntityTooLarge || len(store.Keys()) != 0 {
		t.Errorf("answer %d with %d objects stored, want 413 and none", resp.StatusCode, len(store.Keys()))
	}
}

// TestNoStoreKeeps413: without a payload store (no source takes large
// bodies) a message over SNS's limit is still refused.
func TestNoStoreKeeps413(t *testing.T) {
	r := newRig(t, testSources())
	s := events.Sample{Kind: "hmac", Name: "big", Body: bigBody(200<<10, 0xff), Header: http.Header{}}
	resp := r.do(t, signSample(t, "hmac-plain", s, r.now))
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("answer %d, want 413", resp.StatusCode)
	}
}

func sha(b []byte) [32]byte { return sha256.Sum256(b) }

// countingPayloads counts the bodies stored.
type countingPayloads struct {
	next *payload.Memory
	puts int
}

func (c *countingPayloads) Put(ctx context.Context, source, eventID string, body []byte) (payload.Reference, error) {
	c.puts++
	return c.next.Put(ctx, source, eventID, body)
}

// TestLargeBodyCopyStoresNothing: with replay protection the claim comes
// before the message is built, so a copy of a published large request —
// under a new event id — stores no second body, and is answered as the
// original.
func TestLargeBodyCopyStoresNothing(t *testing.T) {
	src := config.Source{Name: "acme", Verify: config.Verify{Kind: "hmac", SecretName: "hookfan/sources/acme", Header: "X-Signature"},
		Event: config.EventFields{IDHeader: "X-Acme-Id"}, MaxBodyBytes: config.MaxBodyBytesREST}
	r := newRig(t, []config.Source{src})
	store := &countingPayloads{next: payload.NewMemory("hookfan-payloads")}
	h, err := ingest.New(ingest.Options{
		Sources: []config.Source{src}, TopicARN: topicARN, Publisher: r.pub, Secrets: r.sec, Replay: r.rep,
		Metrics: metrics.NewRecorder(r.met), Logger: slog.New(slog.NewJSONHandler(r.log, nil)),
		Now: func() time.Time { return r.now }, Payloads: store,
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	s := events.Sample{Kind: "hmac", Name: "big", Body: bigBody(1<<20, 'a'), Header: http.Header{"X-Acme-Id": {"first"}}}
	hdr, err := events.Sign(src.Verify, s, r.now, secretOf(src.Name))
	if err != nil {
		t.Fatal(err)
	}
	original := acceptedID(t, r.do(t, events.ProxyRequest(src.Name, hdr, s.Body)))
	copyHdr := hdr.Clone()
	copyHdr.Set("X-Acme-Id", "second")
	if id := acceptedID(t, r.do(t, events.ProxyRequest(src.Name, copyHdr, s.Body))); id != original {
		t.Errorf("the copy answered %s, want the original's %s", id, original)
	}
	if store.puts != 1 || len(r.pub.published()) != 1 {
		t.Errorf("%d bodies stored and %d published, want the original's one each", store.puts, len(r.pub.published()))
	}
}

// TestStoreFailureIsAServerErrorCode: the payload store is the
// deployment's, so a source at the default limit beside one taking large
// bodies stores a binary body whose base64 does not fit one SNS message
// too, and answers 503 payload_store_failed when S3 fails: a code its
// ServerErrorCodes (the codes its IngestFailed alarm counts) must list.
func TestStoreFailureIsAServerErrorCode(t *testing.T) {
	r, store := largeRigOf(t, "stripe")
	store.Err = errors.New("s3: service unavailable")
	plain := sourceConfig(t, "hmac-plain")
	if plain.BodyLimit() != config.MaxBodyBytesCeiling {
		t.Fatalf("hmac-plain's limit is %d, want the default", plain.BodyLimit())
	}
	s := events.Sample{Kind: "hmac", Name: "binary", Body: bigBody(200<<10, 0xff), Header: http.Header{}}
	resp := r.do(t, signSample(t, "hmac-plain", s, r.now))
	if resp.StatusCode != http.StatusServiceUnavailable || errorCode(t, resp.Body) != ingest.CodePayloadStoreFailed {
		t.Fatalf("answer %d %s, want 503 payload_store_failed", resp.StatusCode, resp.Body)
	}
	cfg := &config.Config{Sources: r.sources}
	if got := ingest.ServerErrorCodes(cfg, plain); !slices.Contains(got, ingest.CodePayloadStoreFailed) {
		t.Errorf("ServerErrorCodes(hmac-plain) = %v leaves out payload_store_failed, which it was just answered", got)
	}
}
