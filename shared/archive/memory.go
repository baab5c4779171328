package archive

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// MemoryBucket is an in-memory S3 bucket with the calls the reader and the
// writer make (ListObjectsV2 in key order with pagination, GetObject,
// PutObject), for unit tests. It is safe for concurrent use.
type MemoryBucket struct {
	mu      sync.Mutex
	objects map[string][]byte
	// PageSize is ListObjectsV2's page size (default 1000, as S3's).
	PageSize int
}

// NewMemoryBucket returns an empty bucket.
func NewMemoryBucket() *MemoryBucket { return &MemoryBucket{objects: map[string][]byte{}} }

// PutObject stores an object.
func (m *MemoryBucket) PutObject(_ context.Context, in *s3.PutObjectInput, _ ...func(*s3.Options)) (*s3.PutObjectOutput, error) {
	body, err := io.ReadAll(in.Body)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[aws.ToString(in.Key)] = body
	return &s3.PutObjectOutput{}, nil
}

// GetObject returns an object, or S3's NoSuchKey.
func (m *MemoryBucket) GetObject(_ context.Context, in *s3.GetObjectInput, _ ...func(*s3.Options)) (*s3.GetObjectOutput, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	body, ok := m.objects[aws.ToString(in.Key)]
	if !ok {
		return nil, &types.NoSuchKey{Message: aws.String("no object " + aws.ToString(in.Key))}
	}
	return &s3.GetObjectOutput{Body: io.NopCloser(bytes.NewReader(body)), ContentLength: aws.Int64(int64(len(body)))}, nil
}

// ListObjectsV2 lists the keys under a prefix in order, a page at a time;
// the continuation token is the index of the next key.
func (m *MemoryBucket) ListObjectsV2(_ context.Context, in *s3.ListObjectsV2Input, _ ...func(*s3.Options)) (*s3.ListObjectsV2Output, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prefix := aws.ToString(in.Prefix)
	var keys []string
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	start := 0
	if in.ContinuationToken != nil {
		n, err := strconv.Atoi(*in.ContinuationToken)
		if err != nil || n < 0 || n > len(keys) {
			return nil, fmt.Errorf("bad continuation token %q", *in.ContinuationToken)
		}
		start = n
	}
	size := m.PageSize
	if size <= 0 {
		size = 1000
	}
	end := min(start+size, len(keys))
	out := &s3.ListObjectsV2Output{IsTruncated: aws.Bool(end < len(keys)), KeyCount: aws.Int32(int32(end - start))}
	for _, k := range keys[start:end] {
		out.Contents = append(out.Contents, types.Object{Key: aws.String(k), Size: aws.Int64(int64(len(m.objects[k])))})
	}
	if end < len(keys) {
		out.NextContinuationToken = aws.String(strconv.Itoa(end))
	}
	return out, nil
}

// Keys lists every key, in order.
func (m *MemoryBucket) Keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	keys := make([]string, 0, len(m.objects))
	for k := range m.objects {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
