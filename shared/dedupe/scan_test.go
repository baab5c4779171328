package dedupe_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// fakeScan answers each segment's Scan from items by segment, one item a
// page, applying the filter's range as DynamoDB would.
type fakeScan struct {
	fakeIndex
	mu    sync.Mutex
	items map[int32][]map[string]types.AttributeValue
	scans []*dynamodb.ScanInput
	err   error
}

func (f *fakeScan) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scans = append(f.scans, in)
	if f.err != nil {
		return nil, f.err
	}
	seg := aws.ToInt32(in.Segment)
	start := 0
	if in.ExclusiveStartKey != nil {
		start = 1
	}
	items := f.items[seg]
	out := &dynamodb.ScanOutput{}
	if start < len(items) {
		lo := in.ExpressionAttributeValues[":lo"].(*types.AttributeValueMemberS).Value
		hi := in.ExpressionAttributeValues[":hi"].(*types.AttributeValueMemberS).Value
		if v, ok := items[start][ddbitem.FirstAttemptAt].(*types.AttributeValueMemberS); ok && lo <= v.Value && v.Value <= hi {
			out.Items = items[start : start+1]
		}
		if start+1 < len(items) {
			out.LastEvaluatedKey = item("pk", "next")
		}
	}
	return out, nil
}

// TestTableScanWindow: without the time index a window is one Scan of
// the whole table in 16 parallel segments, each filtered on the first
// attempt's [since, until) and projecting the keys, every page read;
// items without a first attempt (lanes, replay guards) are never visited;
// a failure names the table and the missing index.
func TestTableScanWindow(t *testing.T) {
	at := func(d time.Duration) string { return t0.Add(d).UTC().Format("2006-01-02T15:04:05.000Z07:00") }
	f := &fakeScan{items: map[int32][]map[string]types.AttributeValue{
		0:  {item("pk", "a#e1", ddbitem.FirstAttemptAt, at(time.Minute)), item("pk", "a#e2", ddbitem.FirstAttemptAt, at(2*time.Hour))},
		7:  {item("pk", "lane#a"), item("pk", "b#e1", ddbitem.FirstAttemptAt, at(59*time.Minute))},
		15: {item("pk", "b#e3", ddbitem.FirstAttemptAt, at(time.Hour))}, // until is excluded
	}}
	s := dedupe.NewTableScan(f, "records")
	var mu sync.Mutex
	var got []string
	err := s.Window(context.Background(), t0, t0.Add(time.Hour), func(e dedupe.IndexEntry) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.PK)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"a#e1", "b#e1"}; !slices.Equal(got, want) {
		t.Errorf("window: %v, want %v", got, want)
	}
	segments := map[int32]int{}
	for _, in := range f.scans {
		segments[aws.ToInt32(in.Segment)]++
		if aws.ToInt32(in.TotalSegments) != dedupe.DefaultScanSegments || aws.ToString(in.TableName) != "records" || in.IndexName != nil ||
			aws.ToString(in.FilterExpression) != "#first BETWEEN :lo AND :hi" || aws.ToString(in.ProjectionExpression) != "#pk, #first" {
			t.Errorf("scan %+v, want the table in %d segments, filtered and projected", in, dedupe.DefaultScanSegments)
		}
		if lo, hi := in.ExpressionAttributeValues[":lo"], in.ExpressionAttributeValues[":hi"]; lo.(*types.AttributeValueMemberS).Value != at(0) || hi.(*types.AttributeValueMemberS).Value != at(time.Hour-time.Millisecond) {
			t.Errorf("range %v to %v, want [since, until)", lo, hi)
		}
	}
	if len(segments) != dedupe.DefaultScanSegments || segments[0] != 2 || segments[7] != 2 || segments[1] != 1 {
		t.Errorf("calls by segment %v, want all %d, the paged ones twice", segments, dedupe.DefaultScanSegments)
	}

	f.err = errors.New("AccessDeniedException")
	err = s.Window(context.Background(), t0, t0.Add(time.Hour), func(dedupe.IndexEntry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "scan records") || !strings.Contains(err.Error(), "dedupe.timeIndex false") || !strings.Contains(err.Error(), "AccessDeniedException") {
		t.Errorf("error %v, want the table, the reason it scans and the cause", err)
	}
}

// TestMemoryScanListsUnindexed: the memory twin of the scan lists every
// record of the window, those an unindexed store wrote included, and
// reads their records.
func TestMemoryScanListsUnindexed(t *testing.T) {
	m := dedupe.NewMemory()
	ctx := context.Background()
	if _, err := m.Unindexed().Claim(ctx, claimAt("d#unindexed", t0, time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Claim(ctx, claimAt("d#indexed", t0.Add(time.Minute), time.Hour)); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := m.Scan().Window(ctx, t0, t0.Add(time.Hour), func(e dedupe.IndexEntry) error { got = append(got, e.PK); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"d#indexed", "d#unindexed"}; !slices.Equal(got, want) {
		t.Errorf("window: %v, want %v", got, want)
	}
	if rs, err := m.Scan().Records(ctx, got); err != nil || len(rs) != 2 {
		t.Errorf("records %v, %v; want both", rs, err)
	}
}
