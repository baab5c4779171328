package archive

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// TestS3ClientAddressesBucketsByPathOnAnEmulator: with an endpoint override
// the bucket is in the path (an emulator on 127.0.0.1 has no bucket
// subdomains); against AWS it stays in the host.
func TestS3ClientAddressesBucketsByPathOnAnEmulator(t *testing.T) {
	var gotHost, gotPath string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotHost, gotPath = r.Host, r.URL.Path
		w.Header().Set("Content-Type", "application/xml")
		_, _ = io.WriteString(w, `<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>`)
	}))
	defer srv.Close()
	cfg := aws.Config{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL), Credentials: aws.AnonymousCredentials{}}
	if _, err := NewS3Client(cfg).ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String("hookfan-dev-archive")}); err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse(srv.URL)
	if gotHost != u.Host || gotPath != "/hookfan-dev-archive" {
		t.Errorf("request to host %q path %q, want %q and /hookfan-dev-archive", gotHost, gotPath, u.Host)
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", "")
	if NewS3Client(aws.Config{Region: "us-east-1"}).Options().UsePathStyle {
		t.Error("path-style addressing against AWS")
	}
}
