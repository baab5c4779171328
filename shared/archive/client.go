package archive

import (
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// NewS3Client builds an S3 client for the archive that works against AWS
// and emulators: with an endpoint override (AWS_ENDPOINT_URL or
// AWS_ENDPOINT_URL_S3, an emulator on a loopback address) buckets are
// addressed by path, since bucket.127.0.0.1 names no host. (It lives here,
// not in shared/awsconfig, so the Lambda functions do not link S3.)
func NewS3Client(cfg aws.Config) *s3.Client {
	return s3.NewFromConfig(cfg, func(o *s3.Options) {
		// Objects are checked by gzip's CRC; emulators send no checksums.
		o.DisableLogOutputChecksumValidationSkipped = true
		if cfg.BaseEndpoint != nil || os.Getenv("AWS_ENDPOINT_URL_S3") != "" {
			o.UsePathStyle = true
		}
	})
}
