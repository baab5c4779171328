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
// default encryption).
type S3 struct {
	API    S3API
	Bucket string
}

// Put stores an event's body and returns its reference. S3 checks the
// body against its SHA-256 on arrival, so a damaged upload fails here,
// before anything is published.
func (s *S3) Put(ctx context.Context, eventID string, body []byte) (Reference, error) {
	ref := NewReference(s.Bucket, eventID, body)
	sum, _ := hex.DecodeString(ref.SHA256)
	_, err := s.API.PutObject(ctx, &s3.PutObjectInput{
		Bucket:         aws.String(s.Bucket),
		Key:            aws.String(ref.Key),
		Body:           bytes.NewReader(body),
		ContentLength:  aws.Int64(int64(len(body))),
		ContentType:    aws.String("application/octet-stream"),
		ChecksumSHA256: aws.String(base64.StdEncoding.EncodeToString(sum)),
	})
	if err != nil {
		return Reference{}, fmt.Errorf("store payload %s: %w", ref.Key, err)
	}
	return ref, nil
}

// Get reads the body a reference names, from this store's bucket only,
// and checks it against the reference.
func (s *S3) Get(ctx context.Context, ref Reference) ([]byte, error) {
	if ref.Bucket != s.Bucket {
		return nil, fmt.Errorf("%w: bucket %q is not this deployment's", ErrReference, ref.Bucket)
	}
	out, err := s.API.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(ref.Bucket), Key: aws.String(ref.Key)})
	var noKey *types.NoSuchKey
	switch {
	case errors.As(err, &noKey):
		return nil, fmt.Errorf("%s: %w", ref.Key, ErrNotFound)
	case err != nil:
		return nil, fmt.Errorf("read payload %s: %w", ref.Key, err)
	}
	defer out.Body.Close()
	body := make([]byte, 0, ref.Size)
	buf := bytes.NewBuffer(body)
	// One byte past the size tells a larger object from the right one.
	if _, err := buf.ReadFrom(io.LimitReader(out.Body, int64(ref.Size)+1)); err != nil {
		return nil, fmt.Errorf("read payload %s: %w", ref.Key, err)
	}
	if err := ref.Verify(buf.Bytes()); err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Key, err)
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
