package payload

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// S3API is the part of the S3 client the store uses.
type S3API interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// S3 stores bodies in one bucket (encrypted at rest by the bucket's
// default encryption) and, when Archive is set, a second copy of each in
// the archive bucket, which Get falls back to.
type S3 struct {
	API    S3API
	Bucket string
	// Archive is the archive bucket, where Put writes a copy of each body
	// under the same key (kept for the archive's retention); "": none.
	Archive string
}

// Put stores an event's body and returns its reference. S3 checks the
// body against its SHA-256 on arrival, so a damaged upload fails here,
// before anything is published. With Archive set both copies are written
// at once, and Put fails unless both are stored.
func (s *S3) Put(ctx context.Context, source, eventID string, body []byte) (Reference, error) {
	ref := NewReference(s.Bucket, source, eventID, body)
	if s.Archive == "" {
		return ref, s.put(ctx, s.Bucket, ref, body)
	}
	archived := make(chan error, 1)
	go func() { archived <- s.put(ctx, s.Archive, ref, body) }()
	err := s.put(ctx, s.Bucket, ref, body)
	return ref, errors.Join(err, <-archived)
}

// Restore writes body again as the object ref names in the payload
// bucket: a new object, whose lifecycle counts from now. An operator
// restores the body of each message it sends back to a queue.
func (s *S3) Restore(ctx context.Context, ref Reference, body []byte) error {
	if ref.Bucket != s.Bucket {
		return fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	if err := ref.Verify(body); err != nil {
		return fmt.Errorf("%s: %w", ref.Key, err)
	}
	return s.put(ctx, s.Bucket, ref, body)
}

func (s *S3) put(ctx context.Context, bucket string, ref Reference, body []byte) error {
	sum, _ := hex.DecodeString(ref.SHA256)
	_, err := s.API.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(bucket),
		Key:            aws.String(ref.Key),
		Body:           bytes.NewReader(body),
		ContentLength:  aws.Int64(int64(len(body))),
		ContentType:    aws.String("application/octet-stream"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
	})
	if err != nil {
		return fmt.Errorf("store payload s3://%s/%s: %w", bucket, ref.Key, err)
	}
	return nil
}

// Get reads the body a reference names, from this store's bucket only,
// and checks it against the reference. Once the bucket's lifecycle removed
// the object (a message redriven past it), the archive's copy is read, when
// Archive is set.
func (s *S3) Get(ctx context.Context, ref Reference) ([]byte, error) {
	if ref.Bucket != s.Bucket {
		return nil, fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	body, err := s.get(ctx, s.Bucket, ref)
	if errors.Is(err, ErrNotFound) && s.Archive != "" {
		if archived, aerr := s.get(ctx, s.Archive, ref); aerr == nil {
			return archived, nil
		}
	}
	return body, err
}

// GetArchived reads the archive's copy of the body a reference names, and
// checks it against the reference. It fails with ErrNotFound without an
// archive.
func (s *S3) GetArchived(ctx context.Context, ref Reference) ([]byte, error) {
	if ref.Bucket != s.Bucket {
		return nil, fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	if s.Archive == "" {
		return nil, fmt.Errorf("%s: no archive: %w", ref.Key, ErrNotFound)
	}
	return s.get(ctx, s.Archive, ref)
}

func (s *S3) get(ctx context.Context, bucket string, ref Reference) ([]byte, error) {
	out, err := s.API.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(ref.Key)})
	var noKey *types.NoSuchKey
	switch {
	case errors.As(err, &noKey):
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, ref.Key, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read payload s3://%s/%s: %w", bucket, ref.Key, err)
	}
	defer out.Body.Close()
	body := make([]byte, 0, ref.Size)
	buf := bytes.NewBuffer(body)
	// One byte past the size tells a larger object from the right one.
	if _, err := buf.ReadFrom(io.LimitReader(out.Body, int64(ref.Size)+1)); err != nil {
		return nil, fmt.Errorf("read payload s3://%s/%s: %w", bucket, ref.Key, err)
	}
	if err := ref.Verify(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("s3://%s/%s: %w", bucket, ref.Key, err)
	}
	return buf.Bytes(), nil
}

// NewS3Client builds an S3 client that works against AWS and emulators:
// with an endpoint override (an emulator on a loopback address) buckets
// are addressed by path, since bucket.127.0.0.1 names no host.
func NewS3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Bodies are checked against their reference's SHA-256; emulators
		// send no response checksums, which the SDK would log at each read.
		o.DisableLogOutputChecksumValidationSkipped = true
		if cfg.BaseEndpoint != nil {
			o.UsePathStyle = true
		}
	})
}
