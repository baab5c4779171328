package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/dedupe/dedupetest"
)

// TestTimeBucket: a record's bucket is the UTC hour of its first attempt
// and a shard its key chooses, the same every time, and an hour's records
// spread over every shard.
func TestTimeBucket(t *testing.T) {
	cest := time.FixedZone("CEST", 2*3600)
	at := time.Date(2026, 12, 3, 16, 59, 59, 999e6, cest)
	b := dedupe.TimeBucket("orders#evt_1", at)
	if !strings.HasPrefix(b, "2026-12-03T14#") || b != dedupe.TimeBucket("orders#evt_1", at.Add(-30*time.Minute)) {
		t.Errorf("bucket %q, want the UTC hour 2026-12-03T14 and one shard for the key within the hour", b)
	}
	shards := map[string]bool{}
	for i := range 1000 {
		b := dedupe.TimeBucket(fmt.Sprintf("orders#evt_%d", i), at)
		shards[b[strings.IndexByte(b, '#')+1:]] = true
	}
	if len(shards) != dedupe.TimeShards {
		t.Errorf("1000 keys fell in %d shards, want all %d", len(shards), dedupe.TimeShards)
	}
}

// indexWrites matches an update expression's assignment of an index key.
var indexWrites = regexp.MustCompile(`(#bucket|#first|#pk) = ([a-z_]+\([^)]*\)|:[a-z_]+)`)

// TestIndexKeysAreWrittenOnce: every write the store makes, in each mode
// and for each outcome, sets the time index's keys only if_not_exists, so
// the first write puts the record in the index and no later one writes
// the index again (its projection is the keys only).
func TestIndexKeysAreWrittenOnce(t *testing.T) {
	f := &fakeDynamo{update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{Attributes: item("pk", "orders#e1", "status", "IN_PROGRESS", "attempts", int64(1))}, nil
	}}
	ctx := context.Background()
	for _, mode := range []dedupe.Mode{dedupe.ModeLease, dedupe.ModeCheck} {
		s := dedupe.NewDynamoDB(f, "deliveries").InMode(mode)
		for _, status := range []dedupe.Status{dedupe.StatusDelivered, dedupe.StatusFailed, dedupe.StatusDead, dedupe.StatusGone} {
			lease, err := s.Claim(ctx, claimAt("orders#e1", t0, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(ctx, lease, dedupe.Outcome{Status: status, At: t0.Add(time.Second), NextAttemptAt: t0.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	bucket := 0
	for _, in := range f.updates {
		update := aws.ToString(in.UpdateExpression)
		for _, m := range indexWrites.FindAllStringSubmatch(update, -1) {
			if want := "if_not_exists(" + m[1] + ","; !strings.HasPrefix(m[2], want) {
				t.Errorf("%s is written as %s; want %s …) so that it is written once:\n%s", m[1], m[2], want, update)
			}
			if m[1] == "#bucket" {
				bucket++
				if in.ExpressionAttributeNames["#bucket"] != ddbitem.TimeBucket {
					t.Errorf("#bucket names %q", in.ExpressionAttributeNames["#bucket"])
				}
				v := in.ExpressionAttributeValues[":bucket"].(*types.AttributeValueMemberS).Value
				if want := dedupe.TimeBucket("orders#e1", t0); v != want {
					t.Errorf("bucket %q, want %q (the first attempt's hour)", v, want)
				}
			}
		}
	}
	// Each lease claim and each check finish sets the bucket; lease
	// finishes leave it alone.
	if bucket != 8 {
		t.Errorf("%d writes set the bucket, want 8 (4 lease claims, 4 check finishes)", bucket)
	}

	// A release of a record's first claim (a paced lane holding it back)
	// forgets its first attempt and its bucket together, so the next
	// claim files the record under its own hour.
	s := dedupe.NewDynamoDB(f, "deliveries")
	lease, err := s.Claim(ctx, claimAt("orders#e2", t0, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, lease); err != nil {
		t.Fatal(err)
	}
	release := f.updates[len(f.updates)-1]
	checkExpressions(t, release)
	if u := aws.ToString(release.UpdateExpression); !strings.Contains(u, "REMOVE") || !strings.Contains(u, "#first") || !strings.Contains(u, "#bucket") {
		t.Errorf("release of a first claim: %q, want first_attempt_at and time_bucket removed", u)
	}
}

// fakeIndex answers Query from entries by bucket, two per page, and
// BatchGetItem from records, leaving the first key of a first call
// unprocessed.
type fakeIndex struct {
	mu       sync.Mutex
	entries  map[string][]string // bucket → first attempt times; the pk is bucket/time
	queries  []*dynamodb.QueryInput
	batches  [][]string
	records  map[string]map[string]types.AttributeValue
	queryErr error
}

func (f *fakeIndex) Query(_ context.Context, in *dynamodb.QueryInput, _ ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, in)
	if f.queryErr != nil {
		return nil, f.queryErr
	}
	b := in.ExpressionAttributeValues[":bucket"].(*types.AttributeValueMemberS).Value
	lo := in.ExpressionAttributeValues[":lo"].(*types.AttributeValueMemberS).Value
	hi := in.ExpressionAttributeValues[":hi"].(*types.AttributeValueMemberS).Value
	var match []string
	for _, at := range f.entries[b] {
		if lo <= at && at <= hi {
			match = append(match, at)
		}
	}
	start := 0
	if in.ExclusiveStartKey != nil {
		start = 2
	}
	out := &dynamodb.QueryOutput{}
	for _, at := range match[min(start, len(match)):min(start+2, len(match))] {
		out.Items = append(out.Items, item("pk", b+"/"+at, ddbitem.FirstAttemptAt, at, ddbitem.TimeBucket, b))
	}
	if start == 0 && len(match) > 2 {
		out.LastEvaluatedKey = item("pk", "next")
	}
	return out, nil
}

func (f *fakeIndex) BatchGetItem(_ context.Context, in *dynamodb.BatchGetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	ka := in.RequestItems["records"]
	var keys []string
	out := &dynamodb.BatchGetItemOutput{Responses: map[string][]map[string]types.AttributeValue{}}
	for i, k := range ka.Keys {
		pk := k["pk"].(*types.AttributeValueMemberS).Value
		keys = append(keys, pk)
		if i == 0 && len(f.batches) == 0 {
			out.UnprocessedKeys = map[string]types.KeysAndAttributes{"records": {Keys: ka.Keys[:1]}}
			continue
		}
		if r, ok := f.records[pk]; ok {
			out.Responses["records"] = append(out.Responses["records"], r)
		}
	}
	f.batches = append(f.batches, keys)
	return out, nil
}

// TestTimeIndexWindowReadsOnlyItsHours: a window is one query per hour it
// touches and shard, each bounded by the window on the sort key, every
// page read; nothing of other hours is asked for.
func TestTimeIndexWindowReadsOnlyItsHours(t *testing.T) {
	f := &fakeIndex{entries: map[string][]string{
		"2026-05-01T10#3": {"2026-05-01T10:49:59.999Z", "2026-05-01T10:50:00.000Z", "2026-05-01T10:55:00.000Z", "2026-05-01T10:59:00.000Z"},
		"2026-05-01T11#0": {"2026-05-01T11:19:59.999Z", "2026-05-01T11:20:00.000Z"},
		"2026-05-01T09#0": {"2026-05-01T09:55:00.000Z"},
		"2026-05-01T12#0": {"2026-05-01T12:00:00.000Z"},
	}}
	x := dedupe.NewTimeIndex(f, "records")
	cest := time.FixedZone("CEST", 2*3600)
	since, until := time.Date(2026, 5, 1, 12, 50, 0, 0, cest), time.Date(2026, 5, 1, 13, 20, 0, 0, cest)
	var mu sync.Mutex
	var got []string
	err := x.Window(context.Background(), since, until, func(e dedupe.IndexEntry) error {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, e.PK+" "+e.FirstAttemptAt.Format(time.TimeOnly))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	want := []string{
		"2026-05-01T10#3/2026-05-01T10:50:00.000Z 10:50:00", "2026-05-01T10#3/2026-05-01T10:55:00.000Z 10:55:00",
		"2026-05-01T10#3/2026-05-01T10:59:00.000Z 10:59:00", "2026-05-01T11#0/2026-05-01T11:19:59.999Z 11:19:59",
	}
	if !slices.Equal(got, want) {
		t.Errorf("window:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// 2 hours × 8 shards, and a second page of 10#3.
	if len(f.queries) != 2*dedupe.TimeShards+1 {
		t.Errorf("%d queries, want %d", len(f.queries), 2*dedupe.TimeShards+1)
	}
	for _, in := range f.queries {
		b := in.ExpressionAttributeValues[":bucket"].(*types.AttributeValueMemberS).Value
		if aws.ToString(in.IndexName) != ddbitem.TimeIndex || !strings.HasPrefix(b, "2026-05-01T10#") && !strings.HasPrefix(b, "2026-05-01T11#") ||
			aws.ToString(in.KeyConditionExpression) != "#bucket = :bucket AND #first BETWEEN :lo AND :hi" {
			t.Errorf("query %s on %q: %q", b, aws.ToString(in.IndexName), aws.ToString(in.KeyConditionExpression))
		}
	}
	if err := x.Window(context.Background(), until, since, func(dedupe.IndexEntry) error { return nil }); err != nil || len(f.queries) != 2*dedupe.TimeShards+1 {
		t.Errorf("an empty window: %v after %d queries; want nothing asked", err, len(f.queries))
	}
}

// TestTimeIndexWindowErrors: a failed query, an entry whose time does not
// parse, and visit's own error each end the listing with that error.
func TestTimeIndexWindowErrors(t *testing.T) {
	ctx := context.Background()
	since := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	throttled := &types.ProvisionedThroughputExceededException{Message: aws.String("slow down")}
	f := &fakeIndex{queryErr: sdkError(throttled)}
	err := dedupe.NewTimeIndex(f, "records").Window(ctx, since, since.Add(time.Hour), func(dedupe.IndexEntry) error { return nil })
	if !errors.As(err, &throttled) || !strings.Contains(err.Error(), ddbitem.TimeIndex) {
		t.Errorf("a failed query: %v, want the SDK's error, naming the index", err)
	}
	missing := &types.ResourceNotFoundException{Message: aws.String("Invalid index")}
	f = &fakeIndex{queryErr: sdkError(missing)}
	err = dedupe.NewTimeIndex(f, "records").Window(ctx, since, since.Add(time.Hour), func(dedupe.IndexEntry) error { return nil })
	if !errors.As(err, &missing) || !strings.Contains(err.Error(), "the table predates the index: deploy this version") {
		t.Errorf("a table without the index: %v, want the fix named", err)
	}
	f = &fakeIndex{entries: map[string][]string{"2026-05-01T10#0": {"2026-05-01T10:00:00.000Z"}}}
	stop := errors.New("stop")
	err = dedupe.NewTimeIndex(f, "records").Window(ctx, since, since.Add(time.Hour), func(dedupe.IndexEntry) error { return stop })
	if !errors.Is(err, stop) {
		t.Errorf("visit's error: %v, want it returned", err)
	}
	bad := &badTimeIndex{}
	err = dedupe.NewTimeIndex(bad, "records").Window(ctx, since, since.Add(time.Hour), func(dedupe.IndexEntry) error { return nil })
	if err == nil || !strings.Contains(err.Error(), "not an RFC 3339 time") {
		t.Errorf("an unparsable entry: %v, want the attribute named", err)
	}
}

// badTimeIndex answers every query with an entry whose time is garbage.
type badTimeIndex struct{ fakeIndex }

func (b *badTimeIndex) Query(context.Context, *dynamodb.QueryInput, ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	return &dynamodb.QueryOutput{Items: []map[string]types.AttributeValue{item("pk", "d#e", ddbitem.FirstAttemptAt, "yesterday")}}, nil
}

// TestTimeIndexRecordsBatchesAndAsksAgain: records are read 100 keys a
// call, each key once, and keys DynamoDB left unprocessed are asked for
// again; keys without a record are left out.
func TestTimeIndexRecordsBatchesAndAsksAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeIndex{records: map[string]map[string]types.AttributeValue{}}
		var pks []string
		for i := range 250 {
			pk := fmt.Sprintf("d#e%03d", i)
			pks = append(pks, pk, pk)
			if i%2 == 0 {
				f.records[pk] = item("pk", pk, "status", "DELIVERED", "attempts", int64(1))
			}
		}
		got, err := dedupe.NewTimeIndex(f, "records").Records(context.Background(), pks)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 125 || got["d#e000"].Status != dedupe.StatusDelivered || got["d#e001"].PK != "" {
			t.Errorf("%d records (d#e000 %+v), want the 125 that exist", len(got), got["d#e000"])
		}
		var sizes []int
		for _, b := range f.batches {
			sizes = append(sizes, len(b))
		}
		if want := []int{100, 1, 100, 50}; !slices.Equal(sizes, want) {
			t.Errorf("batches of %v keys, want %v (the unprocessed key asked for again)", sizes, want)
		}
	})
}

// TestMemoryWindowIsHalfOpen: the memory twin lists [since, until), as
// the table's index does.
func TestMemoryWindowIsHalfOpen(t *testing.T) {
	m := dedupe.NewMemory()
	for i, pk := range []string{"d#before", "d#since", "d#inside", "d#until"} {
		if _, err := m.Claim(context.Background(), claimAt(pk, t0.Add(time.Duration(i-1)*time.Minute), time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	if err := m.Window(context.Background(), t0, t0.Add(2*time.Minute), func(e dedupe.IndexEntry) error { got = append(got, e.PK); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []string{"d#inside", "d#since"}; !slices.Equal(got, want) {
		t.Errorf("window: %v, want %v", got, want)
	}
	rs, err := m.Records(context.Background(), []string{"d#since", "d#none"})
	if err != nil || len(rs) != 1 || rs["d#since"].Attempts != 1 {
		t.Errorf("records: %v %v, want d#since alone", rs, err)
	}
}

// TestUnindexedWritesNoIndexKey: with dedupe.timeIndex false (Unindexed),
// no write of either mode sets time_bucket, and each expression still
// names exactly what it uses (DynamoDB refuses an unused placeholder);
// the first attempt's time is still written. The view keeps its mode,
// and a mode's view keeps its indexing.
func TestUnindexedWritesNoIndexKey(t *testing.T) {
	f := &fakeDynamo{update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{Attributes: item("pk", "orders#e1", "status", "IN_PROGRESS", "attempts", int64(1))}, nil
	}}
	ctx := context.Background()
	base := dedupe.NewDynamoDB(f, "deliveries")
	stores := []dedupe.Store{
		base.Unindexed(),
		base.Unindexed().(dedupe.Modal).InMode(dedupe.ModeCheck),
		base.InMode(dedupe.ModeCheck).(dedupe.Indexable).Unindexed(),
	}
	for _, s := range stores {
		for _, status := range []dedupe.Status{dedupe.StatusDelivered, dedupe.StatusFailed, dedupe.StatusDead, dedupe.StatusGone} {
			lease, err := s.Claim(ctx, claimAt("orders#e1", t0, time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Finish(ctx, lease, dedupe.Outcome{Status: status, At: t0.Add(time.Second), NextAttemptAt: t0.Add(time.Minute)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	first := 0
	for _, in := range f.updates {
		checkExpressions(t, in)
		update := aws.ToString(in.UpdateExpression)
		if strings.Contains(update, "#bucket") || in.ExpressionAttributeValues[":bucket"] != nil {
			t.Errorf("an unindexed store wrote the index key:\n%s", update)
		}
		if strings.Contains(update, "#first = if_not_exists(#first,") {
			first++
		}
	}
	// 4 lease claims, then 4 check finishes twice; the check claims read.
	if len(f.updates) != 16 || first != 12 {
		t.Errorf("%d updates, %d writing the first attempt; want 16 and 12 (4 lease claims, 8 check finishes)", len(f.updates), first)
	}
	// The indexed store's names are untouched by its unindexed view's.
	f.updates = nil
	if _, err := base.Claim(ctx, claimAt("orders#e1", t0, time.Minute)); err != nil {
		t.Fatal(err)
	}
	if u := aws.ToString(f.updates[0].UpdateExpression); !strings.Contains(u, "#bucket = if_not_exists(#bucket, :bucket)") {
		t.Errorf("the indexed store after its view: %s", u)
	}
	checkExpressions(t, f.updates[0])
}

// TestMemoryUnindexedConformance runs the protocol, in both modes, on
// an unindexed Memory view: no record gets a TimeBucket.
func TestMemoryUnindexedConformance(t *testing.T) {
	m := dedupe.NewMemory()
	dedupetest.Run(t, m.Unindexed().(dedupetest.Store), dedupetest.Options{Concurrent: true, Unindexed: true})
	dedupetest.Run(t, m.Unindexed().(dedupe.Modal).InMode(dedupe.ModeCheck).(dedupetest.Store), dedupetest.Options{Concurrent: true, Unindexed: true, Mode: dedupe.ModeCheck, Destination: "check"})
}

// TestMemoryIndexTurnedOn: a record first attempted while the index was
// off is filed under its first attempt's hour once attempted with it on,
// in both modes (before, under the later attempt's hour: in no window).
func TestMemoryIndexTurnedOn(t *testing.T) {
	m := dedupe.NewMemory()
	dedupetest.IndexTurnedOn(t, m, m.Unindexed().(dedupetest.Store), dedupe.ModeLease, "lease")
	c := m.InMode(dedupe.ModeCheck).(dedupe.Indexable)
	dedupetest.IndexTurnedOn(t, c.(dedupetest.Store), c.Unindexed().(dedupetest.Store), dedupe.ModeCheck, "check")
}

// TestMemoryWindowSkipsUnindexed: the memory twin's window lists only
// the records an indexed store wrote, as a table's index would.
func TestMemoryWindowSkipsUnindexed(t *testing.T) {
	m := dedupe.NewMemory()
	ctx := context.Background()
	if _, err := m.Claim(ctx, claimAt("d#indexed", t0, time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Unindexed().Claim(ctx, claimAt("d#unindexed", t0, time.Hour)); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := m.Window(ctx, t0.Add(-time.Hour), t0.Add(time.Hour), func(e dedupe.IndexEntry) error { got = append(got, e.PK); return nil }); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"d#indexed"}) {
		t.Errorf("window: %v, want d#indexed alone", got)
	}
}
