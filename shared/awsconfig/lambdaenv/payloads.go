//go:build !hookfan.nopayloads

package lambdaenv

import (
	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/payload"
)

// PayloadsLinked reports whether this binary links the S3 store of large
// bodies: it was built without NoPayloadsBuildTag.
const PayloadsLinked = true

// PayloadStore builds the S3 store of large bodies in bucket; with archive
// set (the archive on), Put also writes each body's copy there and Get
// reads it once the bucket's object is gone.
func PayloadStore(cfg aws.Config, bucket, archive string) (Payloads, error) {
	return &payload.S3{API: payload.NewS3Client(cfg), Bucket: bucket, Archive: archive}, nil
}
