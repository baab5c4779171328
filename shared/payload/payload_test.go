package payload

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/hookfan/hookfan/shared/config"
)

func TestMaxSizeIsTheLargestBody(t *testing.T) {
	if MaxSize != config.MaxBodyBytesREST || MaxSize < config.MaxBodyBytesHTTP {
		t.Errorf("MaxSize %d, want config.MaxBodyBytesREST %d", MaxSize, config.MaxBodyBytesREST)
	}
}

func TestKeyFromSourceAndEventID(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	a := NewReference("bucket", "stripe", "evt_abc", body)
	b := NewReference("bucket", "stripe", "evt_abc", slicesClone(body))
	if a != b {
		t.Errorf("a provider's retry (same id, same bytes) got another reference: %+v vs %+v", a, b)
	}
	// The source's prefix first: a lane's grant is scoped to its sources'.
	if want := "payloads/stripe/evt_abc/"; !strings.HasPrefix(a.Key, want) || !strings.HasPrefix(a.Key, SourcePrefix("stripe")) || len(a.Key) != len(want)+64 {
		t.Errorf("key %q, want %s<sha256 hex>", a.Key, want)
	}
	if c := NewReference("bucket", "stripe", "evt_abc", []byte(`{"id":"evt_2"}`)); c.Key == a.Key {
		t.Error("another body under the same id got the same key")
	}
	if c := NewReference("bucket", "github", "evt_abc", body); strings.HasPrefix(c.Key, SourcePrefix("stripe")) {
		t.Errorf("another source's key %q is under stripe's prefix", c.Key)
	}
	got, err := ParseReference(a.JSON())
	if err != nil || got != a {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, a)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func TestParseReferenceInvalid(t *testing.T) {
	good := NewReference("my-bucket", "stripe", "evt_1", []byte("x"))
	tests := map[string]string{
		"not JSON":      `payloads/evt_1`,
		"unknown field": `{"bucket":"my-bucket","key":"payloads/x","size":1,"sha256":"` + good.SHA256 + `","extra":1}`,
		"trailing data": good.JSON() + `{}`,
		"bad bucket":    `{"bucket":"My_Bucket","key":"payloads/x","size":1,"sha256":"` + good.SHA256 + `"}`,
		"key elsewhere": `{"bucket":"my-bucket","key":"other/x","size":1,"sha256":"` + good.SHA256 + `"}`,
		"zero size":     `{"bucket":"my-bucket","key":"payloads/x","size":0,"sha256":"` + good.SHA256 + `"}`,
		"too large":     `{"bucket":"my-bucket","key":"payloads/x","size":4521985,"sha256":"` + good.SHA256 + `"}`,
		"short sha":     `{"bucket":"my-bucket","key":"payloads/x","size":1,"sha256":"abc"}`,
		"upper sha":     `{"bucket":"my-bucket","key":"payloads/x","size":1,"sha256":"` + strings.ToUpper(good.SHA256) + `"}`,
	}
	for name, body := range tests {
		if _, err := ParseReference(body); !errors.Is(err, ErrReference) {
			t.Errorf("%s: %v, want ErrReference", name, err)
		}
	}
}

func TestMemory(t *testing.T) {
	ctx := context.Background()
	m := NewMemory("bucket")
	body := bytes.Repeat([]byte{0, 1, 2, 0xff}, 1000)
	ref, err := m.Put(ctx, "stripe", "evt_1", body)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.Get(ctx, ref)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Get: %d bytes, %v", len(got), err)
	}
	m.Replace(ref.Key, append(slicesClone(body[:len(body)-1]), 0))
	if _, err := m.Get(ctx, ref); !errors.Is(err, ErrMismatch) {
		t.Errorf("damaged object: %v, want ErrMismatch", err)
	}
	m.Delete(ref.Key)
	if _, err := m.Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired object: %v, want ErrNotFound", err)
	}
	other := ref
	other.Bucket = "someone-elses"
	if _, err := m.Get(ctx, other); !errors.Is(err, ErrReference) {
		t.Errorf("another bucket: %v, want ErrReference", err)
	}
}

// fakeS3 is an S3 stand-in keeping objects by bucket and key, checking
// the checksum S3 would check. It is safe for concurrent use (Put writes
// the archive's copy beside the payload's).
type fakeS3 struct {
	mu      sync.Mutex
	objects map[string][]byte // "bucket/key"
	puts    []*s3.PutObjectInput
	err     error
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	b, _ := io.ReadAll(in.Body)
	sum := sha256.Sum256(b)
	if aws.ToString(in.ChecksumSHA256) != base64.StdEncoding.EncodeToString(sum[:]) {
		return nil, errors.New("BadDigest")
	}
	f.puts = append(f.puts, in)
	f.objects[aws.ToString(in.Bucket)+"/"+*in.Key] = b
	return &s3.PutObjectOutput{}, nil
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return nil, f.err
	}
	b, ok := f.objects[aws.ToString(in.Bucket)+"/"+*in.Key]
	if !ok {
		return nil, &types.NoSuchKey{Message: aws.String("The specified key does not exist.")}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(b))}, nil
}

func TestS3(t *testing.T) {
	ctx := context.Background()
	api := &fakeS3{objects: map[string][]byte{}}
	s := &S3{API: api, Bucket: "payloads-bucket"}
	body := bytes.Repeat([]byte("0123456789abcdef"), 20000)
	ref, err := s.Put(ctx, "stripe", "evt_big", body)
	if err != nil {
		t.Fatal(err)
	}
	if len(api.puts) != 1 {
		t.Fatalf("%d puts without an archive, want 1", len(api.puts))
	}
	in := api.puts[0]
	// base64 of SHA-256 is 44 characters; S3 verifies the upload against it.
	if aws.ToString(in.Bucket) != "payloads-bucket" || aws.ToString(in.Key) != ref.Key || len(aws.ToString(in.ChecksumSHA256)) != 44 || aws.ToInt64(in.ContentLength) != int64(len(body)) {
		t.Errorf("PutObject %+v", in)
	}
	got, err := s.Get(ctx, ref)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Get: %d bytes, %v", len(got), err)
	}
	key := "payloads-bucket/" + ref.Key
	api.objects[key] = append(slicesClone(body), 'x')
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrMismatch) {
		t.Errorf("a longer object: %v, want ErrMismatch", err)
	}
	delete(api.objects, key)
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
	ref.Bucket = "another"
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrReference) {
		t.Errorf("another bucket: %v, want ErrReference", err)
	}
	api.err = errors.New("connection reset")
	if _, err := s.Put(ctx, "stripe", "evt_x", body); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Put during an outage: %v", err)
	}
}

// TestS3Archive: with an archive bucket, Put stores the body in both
// buckets under one key, and fails unless both hold it; after the payload
// bucket's lifecycle removed the object, the archive's copy is read, and
// Restore writes the payload object again, checked against its reference.
func TestS3Archive(t *testing.T) {
	ctx := context.Background()
	api := &fakeS3{objects: map[string][]byte{}}
	s := &S3{API: api, Bucket: "payloads-bucket", Archive: "archive-bucket"}
	body := bytes.Repeat([]byte("large body "), 30000)
	ref, err := s.Put(ctx, "stripe", "evt_big", body)
	if err != nil {
		t.Fatal(err)
	}
	for _, bucket := range []string{"payloads-bucket", "archive-bucket"} {
		if got := api.objects[bucket+"/"+ref.Key]; !bytes.Equal(got, body) {
			t.Errorf("%s holds %d bytes under %s, want the body", bucket, len(got), ref.Key)
		}
	}
	delete(api.objects, "payloads-bucket/"+ref.Key) // the lifecycle
	// A message redriven past the object's life still gets its body: the
	// archive's copy.
	if got, err := s.Get(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("expired object: %d bytes, %v; want the archive's copy", len(got), err)
	}
	if _, err := (&S3{API: api, Bucket: "payloads-bucket"}).Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired object without an archive: %v, want ErrNotFound", err)
	}
	got, err := s.GetArchived(ctx, ref)
	if err != nil || !bytes.Equal(got, body) {
		t.Fatalf("archived copy: %d bytes, %v", len(got), err)
	}
	if err := s.Restore(ctx, ref, got); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Errorf("restored object: %d bytes, %v", len(got), err)
	}
	if err := s.Restore(ctx, ref, body[1:]); !errors.Is(err, ErrMismatch) {
		t.Errorf("restoring another body: %v, want ErrMismatch", err)
	}
	other := ref
	other.Bucket = "someone-elses"
	if err := s.Restore(ctx, other, body); !errors.Is(err, ErrReference) {
		t.Errorf("restoring into another bucket: %v, want ErrReference", err)
	}
	if _, err := (&S3{API: api, Bucket: "payloads-bucket"}).GetArchived(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("no archive: %v, want ErrNotFound", err)
	}
	// The archive's copy failing fails the put: nothing is published that
	// a replay could not find.
	failing := &archiveFails{fakeS3: api}
	if _, err := (&S3{API: failing, Bucket: "payloads-bucket", Archive: "archive-bucket"}).Put(ctx, "stripe", "evt_2", body); err == nil {
		t.Error("Put succeeded though the archive's copy failed")
	}
}

// archiveFails fails every put into the archive bucket.
type archiveFails struct{ *fakeS3 }

func (a *archiveFails) PutObject(ctx context.Context, in *s3.PutObjectInput, o ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if aws.ToString(in.Bucket) == "archive-bucket" {
		return nil, errors.New("AccessDenied")
	}
	return a.fakeS3.PutObject(ctx, in, o...)
}

// TestMemoryArchive: the twin keeps the archive's copies apart, as S3 does.
func TestMemoryArchive(t *testing.T) {
	ctx := context.Background()
	m := NewMemory("bucket")
	m.Archive = "archive"
	body := []byte("a body too large for SNS")
	ref, err := m.Put(ctx, "stripe", "evt_1", body)
	if err != nil {
		t.Fatal(err)
	}
	m.Delete(ref.Key)
	if got, err := m.GetArchived(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("archived copy: %q, %v", got, err)
	}
	if got, err := m.Get(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Fatalf("Get past the lifecycle: %q, %v; want the archive's copy", got, err)
	}
	if err := m.Restore(ctx, ref, body); err != nil {
		t.Fatal(err)
	}
	if got, err := m.Get(ctx, ref); err != nil || !bytes.Equal(got, body) {
		t.Errorf("restored: %q, %v", got, err)
	}
	m.DeleteArchived(ref.Key)
	if _, err := m.GetArchived(ctx, ref); !IsGone(err) {
		t.Errorf("expired archive copy: %v, want gone", err)
	}
	m.Delete(ref.Key)
	if _, err := m.Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("both gone: %v, want ErrNotFound", err)
	}
}
