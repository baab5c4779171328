package lambdaenv

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/payload"
)

// Payloads is the store of bodies larger than one SNS message, as the
// functions use it: ingest puts, deliver gets (payload.S3 in AWS).
type Payloads interface {
	Put(ctx context.Context, source, eventID string, body []byte) (payload.Reference, error)
	Get(ctx context.Context, ref payload.Reference) ([]byte, error)
}

// PayloadStore builds the S3 store of large bodies in bucket; with archive
// set (the archive on), Put also writes each body's copy there and Get
// reads it once the bucket's object is gone.
func PayloadStore(cfg aws.Config, bucket, archive string) Payloads {
	return &payload.S3{API: payload.NewS3Client(cfg), Bucket: bucket, Archive: archive}
}
