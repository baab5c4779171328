package dedupe_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// pagedScan answers each segment's Scan in two pages and records the inputs.
type pagedScan struct {
	mu     sync.Mutex
	inputs []dynamodb.ScanInput
}

func (p *pagedScan) Scan(_ context.Context, in *dynamodb.ScanInput, _ ...func(*dynamodb.Options)) (*dynamodb.ScanOutput, error) {
	p.mu.Lock()
	p.inputs = append(p.inputs, *in)
	p.mu.Unlock()
	seg := *in.Segment
	item := func(page string) map[string]types.AttributeValue {
		return map[string]types.AttributeValue{
			ddbitem.PartitionKey:      &types.AttributeValueMemberS{Value: "d#evt_" + string('a'+rune(seg)) + page},
			dedupe.AttrStatus:         &types.AttributeValueMemberS{Value: "DELIVERED"},
			dedupe.AttrFirstAttemptAt: &types.AttributeValueMemberS{Value: "2026-05-01T13:00:00.000Z"},
		}
	}
	if in.ExclusiveStartKey == nil {
		return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{item("1")},
			LastEvaluatedKey: map[string]types.AttributeValue{ddbitem.PartitionKey: &types.AttributeValueMemberS{Value: "next"}}}, nil
	}
	return &dynamodb.ScanOutput{Items: []map[string]types.AttributeValue{item("2")}}, nil
}

func TestScannerReadsEverySegmentAndPage(t *testing.T) {
	api := &pagedScan{}
	s := dedupe.NewScanner(api, "records")
	s.Segments = 3
	since := time.Date(2026, 5, 1, 12, 50, 0, 0, time.FixedZone("CEST", 2*3600))
	var mu sync.Mutex
	var got []string
	err := s.Since(context.Background(), since, func(r dedupe.Record) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, r.PK)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{"d#evt_a1", "d#evt_a2", "d#evt_b1", "d#evt_b2", "d#evt_c1", "d#evt_c2"}
	if !slices.Equal(got, want) {
		t.Errorf("visited %v, want %v", got, want)
	}
	if len(api.inputs) != 6 {
		t.Fatalf("%d Scan calls, want 2 pages × 3 segments", len(api.inputs))
	}
	for _, in := range api.inputs {
		since := in.ExpressionAttributeValues[":since"].(*types.AttributeValueMemberS).Value
		if *in.FilterExpression != "#first >= :since" || in.ExpressionAttributeNames["#first"] != dedupe.AttrFirstAttemptAt ||
			since != "2026-05-01T10:50:00.000Z" || *in.TotalSegments != 3 {
			t.Errorf("scan input: filter %q names %v since %q segments %d; want the first attempt filtered from 10:50 UTC in 3 segments",
				*in.FilterExpression, in.ExpressionAttributeNames, since, *in.TotalSegments)
		}
	}
}

func TestMemorySinceListsRecordsFirstAttemptedFromTheTime(t *testing.T) {
	m := dedupe.NewMemory()
	t0 := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	for i, pk := range []string{"d#old", "d#edge", "d#new"} {
		if _, err := m.Claim(context.Background(), dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "x",
			Now: t0.Add(time.Duration(i-1) * time.Minute), LeaseUntil: t0.Add(time.Hour), ExpiresAt: t0.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := m.Since(context.Background(), t0, func(r dedupe.Record) error { got = append(got, r.PK); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"d#edge", "d#new"}; !slices.Equal(got, want) {
		t.Errorf("since %s: %v, want %v", t0, got, want)
	}
}
