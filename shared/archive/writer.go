package archive

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// PutAPI is the part of the S3 client the writer uses.
type PutAPI interface {
	PutObject(ctx context.Context, in *s3.PutObjectInput, optFns ...func(*s3.Options)) (*s3.PutObjectOutput, error)
}

// Writer writes archive objects the way the deployed Firehose stream does,
// for the local stack (Firehose to S3 is not emulated).
type Writer struct {
	api    PutAPI
	bucket string
	name   string
}

// NewWriter returns a writer into bucket whose objects are named after name.
func NewWriter(api PutAPI, bucket, name string) *Writer {
	return &Writer{api: api, bucket: bucket, name: name}
}

// Write stores records (SNS notification envelopes, JSON) as one object in
// the partition of arrived, the arrival of the oldest record, and returns
// its key. It writes nothing for no records.
func (w *Writer) Write(ctx context.Context, records [][]byte, arrived time.Time) (string, error) {
	if len(records) == 0 {
		return "", nil
	}
	body, err := EncodeObject(records)
	if err != nil {
		return "", fmt.Errorf("archive object: %w", err)
	}
	id := make([]byte, 8)
	_, _ = rand.Read(id) // never fails (crypto/rand panics on an unusable source)
	key := ObjectKey(w.name, arrived, hex.EncodeToString(id))
	_, err = w.api.PutObject(ctx, &s3.PutObjectInput{
		Bucket:        &w.bucket,
		Key:           &key,
		Body:          bytes.NewReader(body),
		ContentLength: aws.Int64(int64(len(body))),
		ContentType:   aws.String("application/gzip"),
	})
	if err != nil {
		return "", fmt.Errorf("put s3://%s/%s: %w", w.bucket, key, err)
	}
	return key, nil
}
