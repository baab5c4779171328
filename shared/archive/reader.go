package archive

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// S3API is the part of the S3 client the reader uses.
type S3API interface {
	ListObjectsV2(ctx context.Context, in *s3.ListObjectsV2Input, optFns ...func(*s3.Options)) (*s3.ListObjectsV2Output, error)
	GetObject(ctx context.Context, in *s3.GetObjectInput, optFns ...func(*s3.Options)) (*s3.GetObjectOutput, error)
}

// Query selects archived events. Zero fields select everything.
type Query struct {
	// Since and Until bound received_at: Since ≤ received_at < Until.
	// Both are required by Scan.
	Since, Until time.Time
	// ID selects one event.
	ID string
	// Source is an exact source name.
	Source string
	// Type is an exact type, or a prefix written with a trailing "*"
	// ("invoice.*"), as in a destination's filter.
	Type string
}

// Match reports whether an event is selected.
func (q Query) Match(e Event) bool {
	if !q.Since.IsZero() && e.ReceivedAt.Before(q.Since) {
		return false
	}
	if !q.Until.IsZero() && !e.ReceivedAt.Before(q.Until) {
		return false
	}
	if q.ID != "" && e.ID != q.ID {
		return false
	}
	if q.Source != "" && e.Source != q.Source {
		return false
	}
	if q.Type != "" {
		if prefix, ok := strings.CutSuffix(q.Type, "*"); ok {
			return strings.HasPrefix(e.Type, prefix)
		}
		return e.Type == q.Type
	}
	return true
}

// Progress is how far a scan got. Hours counts the partitions listed.
type Progress struct {
	Hours, HoursTotal int
	Objects           int
	Records           int
	Matched           int
	Unreadable        int
}

// Options observe a scan.
type Options struct {
	// OnProgress is called after each partition.
	OnProgress func(Progress)
	// OnBadRecord is called for each record that could not be read (and is
	// skipped); the scan goes on.
	OnBadRecord func(BadRecord)
}

// ErrStop, returned by a visitor, ends a scan early without an error.
var ErrStop = errors.New("stop scanning")

// Reader reads the archive in an S3 bucket.
type Reader struct {
	api    S3API
	bucket string
}

// NewReader returns a reader of bucket.
func NewReader(api S3API, bucket string) *Reader { return &Reader{api: api, bucket: bucket} }

// Bucket is the bucket read.
func (r *Reader) Bucket() string { return r.bucket }

// Scan yields, in archive order, each event the query selects, once: a
// provider's retry or SNS's at-least-once delivery can archive one event
// several times, and only the first copy is yielded. It reads the hours
// from Since (less MaxBuffering) through Until (plus MaxBuffering).
func (r *Reader) Scan(ctx context.Context, q Query, visit func(Event) error, o Options) (Progress, error) {
	if q.Since.IsZero() || q.Until.IsZero() || !q.Since.Before(q.Until) {
		return Progress{}, fmt.Errorf("archive scan: want since before until, got %s and %s", q.Since.UTC().Format(time.RFC3339), q.Until.UTC().Format(time.RFC3339))
	}
	hours := HoursBetween(q.Since.Add(-MaxBuffering), q.Until.Add(MaxBuffering))
	seen := map[string]bool{}
	return r.scanHours(ctx, hours, func(e Event) error {
		if !q.Match(e) || seen[e.ID] {
			return nil
		}
		seen[e.ID] = true
		return visit(e)
	}, o)
}

// Find returns the archived event with id, searching the hours from
// latest back to earliest, newest first, and stopping at the first hour
// that holds it (its first copy there). ok is false when no hour does.
// latest is typically when the event was last attempted (it was received
// before), earliest when the archive's retention began.
func (r *Reader) Find(ctx context.Context, id string, earliest, latest time.Time, o Options) (ev Event, ok bool, p Progress, err error) {
	if id == "" {
		return Event{}, false, Progress{}, errors.New("archive find: no event id")
	}
	hours := HoursBetween(earliest.Add(-MaxBuffering), latest.Add(MaxBuffering))
	for i, j := 0, len(hours)-1; i < j; i, j = i+1, j-1 {
		hours[i], hours[j] = hours[j], hours[i]
	}
	p, err = r.scanHours(ctx, hours, func(e Event) error {
		if e.ID != id {
			return nil
		}
		ev, ok = e, true
		return ErrStop
	}, o)
	return ev, ok, p, err
}

// HoursBetween lists the UTC hours from the one holding from through the
// one holding to, in order.
func HoursBetween(from, to time.Time) []time.Time {
	var hours []time.Time
	for h := from.UTC().Truncate(time.Hour); !h.After(to); h = h.Add(time.Hour) {
		hours = append(hours, h)
	}
	return hours
}

func (r *Reader) scanHours(ctx context.Context, hours []time.Time, visit func(Event) error, o Options) (Progress, error) {
	p := Progress{HoursTotal: len(hours)}
	bad := func(b BadRecord) {
		p.Unreadable++
		if o.OnBadRecord != nil {
			o.OnBadRecord(b)
		}
	}
	counted := func(e Event) error {
		p.Records++
		return visit(e)
	}
	for _, h := range hours {
		keys, err := r.list(ctx, PartitionPrefix(h))
		if err != nil {
			return p, err
		}
		for _, key := range keys {
			p.Objects++
			if err := r.read(ctx, key, counted, bad); err != nil {
				if errors.Is(err, ErrStop) {
					return p, nil
				}
				return p, err
			}
		}
		p.Hours++
		if o.OnProgress != nil {
			o.OnProgress(p)
		}
	}
	return p, nil
}

// list returns the keys under prefix, in key order (time order within an hour).
func (r *Reader) list(ctx context.Context, prefix string) ([]string, error) {
	var keys []string
	in := &s3.ListObjectsV2Input{Bucket: &r.bucket, Prefix: &prefix}
	for {
		out, err := r.api.ListObjectsV2(ctx, in)
		if err != nil {
			return nil, fmt.Errorf("list s3://%s/%s: %w", r.bucket, prefix, err)
		}
		for _, o := range out.Contents {
			keys = append(keys, aws.ToString(o.Key))
		}
		if !aws.ToBool(out.IsTruncated) || out.NextContinuationToken == nil {
			return keys, nil
		}
		in.ContinuationToken = out.NextContinuationToken
	}
}

func (r *Reader) read(ctx context.Context, key string, visit func(Event) error, bad func(BadRecord)) error {
	out, err := r.api.GetObject(ctx, &s3.GetObjectInput{Bucket: &r.bucket, Key: &key})
	if err != nil {
		return fmt.Errorf("read s3://%s/%s: %w", r.bucket, key, err)
	}
	defer out.Body.Close()
	return readObject(key, out.Body, visit, bad)
}
