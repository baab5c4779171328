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

// ScanAPI is the DynamoDB call Scanner makes.
type ScanAPI interface {
	Scan(ctx context.Context, in *dynamodb.ScanInput, optFns ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error)
}

// DefaultScanSegments is how many parallel segments Scanner reads the
// table in when none is set.
const DefaultScanSegments = 4

// Scanner lists the delivery records first attempted since a time, for an
// operator's view of recent events. The table has no index by time (each
// record write would pay for one), so it reads the whole table: a Scan, in
// Segments parallel segments, filtered on first_attempt_at by DynamoDB. A
// filter saves the bytes returned, not the read units: every item read is
// paid for (docs/operations.md#recent-events gives the cost).
type Scanner struct {
	api      ScanAPI
	table    string
	Segments int
}

// NewScanner returns a scanner of table.
func NewScanner(api ScanAPI, table string) *Scanner {
	return &Scanner{api: api, table: table, Segments: DefaultScanSegments}
}

// Since calls visit with every delivery record first attempted at or
// after since. Records of other kinds the table keeps (lanes, replay
// guards) have no first attempt and are never visited. visit may be
// called from several goroutines at once.
func (s *Scanner) Since(ctx context.Context, since time.Time, visit func(Record) error) error {
	segments := max(s.Segments, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	for seg := range segments {
		wg.Go(func() {
			if err := s.segment(ctx, since, int32(seg), int32(segments), visit); err != nil {
				once.Do(func() { first = err; cancel() }) // the first failure, not the cancellations it causes
			}
		})
	}
	wg.Wait()
	return first
}

func (s *Scanner) segment(ctx context.Context, since time.Time, seg, total int32, visit func(Record) error) error {
	in := &dynamodb.ScanInput{
		TableName: aws.String(s.table),
		// RFC 3339 in UTC with milliseconds has one width, so the
		// strings sort as the times do.
		FilterExpression:          aws.String("#first >= :since"),
		ExpressionAttributeNames:  map[string]string{"#first": AttrFirstAttemptAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":since": ddbitem.S(since.UTC().Format(timeLayout))},
		Segment:                   aws.Int32(seg),
		TotalSegments:             aws.Int32(total),
	}
	for {
		out, err := s.api.Scan(ctx, in)
		if err != nil {
			return fmt.Errorf("scan %s (segment %d of %d): %w", s.table, seg+1, total, err)
		}
		for _, item := range out.Items {
			r, err := decodeRecord(item)
			if err != nil {
				return fmt.Errorf("scan %s: record %s: %w", s.table, r.PK, err)
			}
			if err := visit(r); err != nil {
				return err
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// Since calls visit with every record first attempted at or after since,
// as Scanner.Since does on a table.
func (m *Memory) Since(_ context.Context, since time.Time, visit func(Record) error) error {
	m.mu.Lock()
	var rs []Record
	for _, r := range m.records {
		if !r.FirstAttemptAt.IsZero() && !r.FirstAttemptAt.Before(since) {
			rs = append(rs, r)
		}
	}
	m.mu.Unlock()
	for _, r := range rs {
		if err := visit(r); err != nil {
			return err
		}
	}
	return nil
}
