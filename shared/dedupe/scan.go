package dedupe

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// ScanAPI is the DynamoDB calls TableScan makes.
type ScanAPI interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// DefaultScanSegments is how many parallel segments a TableScan reads the
// table in when none is set.
const DefaultScanSegments = 16

// TableScan is TimeIndex's stand-in on a table without the time index
// (dedupe.timeIndex false): a window is found by reading the whole table,
// a Scan in Segments parallel segments, filtered on first_attempt_at by
// DynamoDB. The filter saves the bytes returned, not the read units:
// every item of the table is paid for, whatever the window
// (docs/decisions.md#a-time-index-of-the-delivery-records).
type TableScan struct {
	api      ScanAPI
	table    string
	Segments int
}

// NewTableScan returns a scanning reader of table.
func NewTableScan(api ScanAPI, table string) *TableScan {
	return &TableScan{api: api, table: table, Segments: DefaultScanSegments}
}

// Window calls visit with every record first attempted in [since, until),
// as TimeIndex.Window does, from a Scan of the whole table. Items of other
// kinds the table keeps (lanes, replay guards) have no first attempt and
// are never visited. visit may be called from several goroutines at once.
func (s *TableScan) Window(ctx context.Context, since, until time.Time, visit func(IndexEntry) error) error {
	if !since.Before(until) {
		return nil
	}
	segments := max(s.Segments, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for seg := range segments {
		wg.Go(func() {
			if err := s.segment(ctx, since, until, int32(seg), int32(segments), visit); err != nil {
				once.Do(func() { first = err; cancel() }) // the first failure, not the cancellations it causes
			}
		})
	}
	wg.Wait()
	return first
}

func (s *TableScan) segment(ctx context.Context, since, until time.Time, seg, total int32, visit func(IndexEntry) error) error {
	in := &dynamodb.ScanInput{
		TableName: aws.String(s.table),
		// RFC 3339 in UTC with milliseconds has one width, so the strings
		// sort as the times do; [since, until) as TimeIndex.query reads it.
		FilterExpression:         aws.String("#first BETWEEN :lo AND :hi"),
		ProjectionExpression:     aws.String("#pk, #first"),
		ExpressionAttributeNames: map[string]string{"#pk": ddbitem.PartitionKey, "#first": AttrFirstAttemptAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":lo": ddbitem.S(since.UTC().Format(timeLayout)),
			":hi": ddbitem.S(until.UTC().Add(-time.Millisecond).Format(timeLayout)),
		},
		Segment:       aws.Int32(seg),
		TotalSegments: aws.Int32(total),
	}
	for {
		out, err := s.api.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scan %s (segment %d of %d; the table has no time index, dedupe.timeIndex false): %w", s.table, seg+1, total, err)
		}
		for _, item := range out.Items {
			it := ddbitem.NewReader(item)
			e := IndexEntry{PK: it.String(ddbitem.PartitionKey), FirstAttemptAt: it.Time(AttrFirstAttemptAt)}
			if err := it.Err(); err != nil {
				return fmt.Errorf("scan %s: %s: %w", s.table, e.PK, err)
			}
			if err := visit(e); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Records reads the records of pks as TimeIndex.Records does.
func (s *TableScan) Records(ctx context.Context, pks []string) (map[string]Record, error) {
	return batchRecords(ctx, s.api, s.table, pks)
}

// MemoryScan is the memory twin of a TableScan: every record first
// attempted in the window, whether or not the time index has it.
type MemoryScan struct{ m *Memory }

// Scan returns the twin of a TableScan of m's records.
func (m *Memory) Scan() *MemoryScan { return &MemoryScan{m: m} }

// Window calls visit with every record first attempted in [since, until),
// as TableScan.Window does.
func (s *MemoryScan) Window(_ context.Context, since, until time.Time, visit func(IndexEntry) error) error {
	s.m.mu.Lock()
	var es []IndexEntry
	for pk, r := range s.m.records {
		if !r.FirstAttemptAt.IsZero() && !r.FirstAttemptAt.Before(since) && r.FirstAttemptAt.Before(until) {
			es = append(es, IndexEntry{PK: pk, FirstAttemptAt: r.FirstAttemptAt})
		}
	}
	s.m.mu.Unlock()
	for _, e := range es {
		if err := visit(e); err != nil {
			return err
		}
	}
	return nil
}

// Records returns copies of the records of pks that exist.
func (s *MemoryScan) Records(ctx context.Context, pks []string) (map[string]Record, error) {
	return s.m.Records(ctx, pks)
}
