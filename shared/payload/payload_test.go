package payload

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
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

func TestKeyFromEventID(t *testing.T) {
	body := []byte(`{"id":"evt_1"}`)
	a := NewReference("bucket", "evt_abc", body)
	b := NewReference("bucket", "evt_abc", slicesClone(body))
	if a != b {
		t.Errorf("a provider's retry (same id, same bytes) got another reference: %+v vs %+v", a, b)
	}
	if !strings.HasPrefix(a.Key, Prefix+"evt_abc/") || len(a.Key) != len(Prefix)+len("evt_abc/")+64 {
		t.Errorf("key %q, want %sevt_abc/<sha256 hex>", a.Key, Prefix)
	}
	if c := NewReference("bucket", "evt_abc", []byte(`{"id":"evt_2"}`)); c.Key == a.Key {
		t.Error("another body under the same id got the same key")
	}
	got, err := ParseReference(a.JSON())
	if err != nil || got != a {
		t.Errorf("round trip: %+v, %v; want %+v", got, err, a)
	}
}

func slicesClone(b []byte) []byte { return append([]byte(nil), b...) }

func TestParseReferenceInvalid(t *testing.T) {
	good := NewReference("my-bucket", "evt_1", []byte("x"))
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
	ref, err := m.Put(ctx, "evt_1", body)
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

// fakeS3 is an S3 stand-in keeping objects by key, checking the checksum
// S3 would check.
type fakeS3 struct {
	objects map[string][]byte
	puts    []*s3.PutObjectInput
	err     error
}

func (f *fakeS3) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	b, _ := io.ReadAll(in.Body)
	f.puts = append(f.puts, in)
	f.objects[*in.Key] = b
	return &s3.PutObjectOutput{}, nil
}

func (f *fakeS3) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	if f.err != nil {
		return nil, f.err
	}
	b, ok := f.objects[*in.Key]
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
	ref, err := s.Put(ctx, "evt_big", body)
	if err != nil {
		t.Fatal(err)
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
	api.objects[ref.Key] = append(slicesClone(body), 'x')
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrMismatch) {
		t.Errorf("a longer object: %v, want ErrMismatch", err)
	}
	delete(api.objects, ref.Key)
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing object: %v, want ErrNotFound", err)
	}
	ref.Bucket = "another"
	if _, err := s.Get(ctx, ref); !errors.Is(err, ErrReference) {
		t.Errorf("another bucket: %v, want ErrReference", err)
	}
	api.err = errors.New("connection reset")
	if _, err := s.Put(ctx, "evt_x", body); err == nil || errors.Is(err, ErrNotFound) {
		t.Errorf("Put during an outage: %v", err)
	}
}
