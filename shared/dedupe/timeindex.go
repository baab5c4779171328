package dedupe

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// The time index (ddbitem.TimeIndex) lists the delivery records by their
// first attempt, so an operator's view of a window reads that window and
// not the table. A record's first write (the claim, or ModeCheck's one
// write) sets its bucket, TimeBucket(pk, first attempt), beside
// first_attempt_at, both with if_not_exists: later writes leave the two
// as they are, and the index keeps the keys only, so they write nothing
// to it. One index write per record, at its first attempt
// (docs/decisions.md#a-time-index-of-the-delivery-records).

// TimeShards is how many index partitions an hour's records are spread
// over, by a hash of their key: an index partition takes about 1,000
// writes a second, and a throttled index holds back the table's writes.
const TimeShards = 8

// bucketLayout is the hour of a bucket, in UTC.
const bucketLayout = "2006-01-02T15"

// TimeBucket is the time index's partition key of the record pk first
// attempted at first: its hour in UTC and its shard, "2026-12-03T14#5".
func TimeBucket(pk string, first time.Time) string {
	return bucket(first.UTC().Truncate(time.Hour), shard(pk))
}

func shard(pk string) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(pk)) // a hash never fails
	return int(h.Sum32() % TimeShards)
}

func bucket(hour time.Time, shard int) string {
	return hour.Format(bucketLayout) + "#" + strconv.Itoa(shard)
}

// IndexEntry is one record as the time index has it.
type IndexEntry struct {
	PK             string
	FirstAttemptAt time.Time
}

// IndexAPI is the DynamoDB calls TimeIndex makes.
type IndexAPI interface {
	Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error)
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// DefaultIndexParallel is how many index queries a TimeIndex has in
// flight at once when none is set.
const DefaultIndexParallel = 8

// maxBatchGet is the most keys one BatchGetItem takes.
const maxBatchGet = 100

// TimeIndex reads a table's time index and the records it names.
type TimeIndex struct {
	api      IndexAPI
	table    string
	Parallel int
}

// NewTimeIndex returns a reader of table's time index.
func NewTimeIndex(api IndexAPI, table string) *TimeIndex {
	return &TimeIndex{api: api, table: table, Parallel: DefaultIndexParallel}
}

// Window calls visit with every record first attempted in [since, until):
// one Query per hour and shard the window touches, each reading only the
// entries of the window (the sort key's range), eventually consistent.
// The order is none; visit may be called from several goroutines at once.
func (x *TimeIndex) Window(ctx context.Context, since, until time.Time, visit func(IndexEntry) error) error {
	if !since.Before(until) {
		return nil
	}
	var buckets []string
	for hour := since.UTC().Truncate(time.Hour); hour.Before(until); hour = hour.Add(time.Hour) {
		for s := range TimeShards {
			buckets = append(buckets, bucket(hour, s))
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var first error
	var once sync.Once
	var wg sync.WaitGroup
	next := make(chan string)
	for range min(max(x.Parallel, 1), len(buckets)) {
		wg.Go(func() {
			for b := range next {
				if err := x.query(ctx, b, since, until, visit); err != nil {
					once.Do(func() { first = err; cancel() }) // the first failure, not the cancellations it causes
				}
			}
		})
	}
feed:
	for _, b := range buckets {
		select {
		case next <- b:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// query reads one bucket's entries in [since, until), page by page.
func (x *TimeIndex) query(ctx context.Context, bucket string, since, until time.Time, visit func(IndexEntry) error) error {
	// The sort key has millisecond steps: [since, until) is since to
	// until's previous millisecond, both included.
	lo := since.UTC().Format(timeLayout)
	hi := until.UTC().Add(-time.Millisecond).Format(timeLayout)
	in := &dynamodb.QueryInput{
		TableName:                 aws.String(x.table),
		IndexName:                 aws.String(ddbitem.TimeIndex),
		KeyConditionExpression:    aws.String("#bucket = :bucket AND #first BETWEEN :lo AND :hi"),
		ExpressionAttributeNames:  map[string]string{"#bucket": AttrTimeBucket, "#first": AttrFirstAttemptAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":bucket": ddbitem.S(bucket), ":lo": ddbitem.S(lo), ":hi": ddbitem.S(hi)},
	}
	for {
		out, err := x.api.Query(ctx, in)
		var missing *types.ResourceNotFoundException
		switch {
		case errors.As(err, &missing):
			return fmt.Errorf("query %s index %s: %w; the table predates the index: deploy this version of the stack (or run make dev again)", x.table, ddbitem.TimeIndex, err)
		case err != nil:
			return fmt.Errorf("query %s index %s (%s): %w", x.table, ddbitem.TimeIndex, bucket, err)
		}
		for _, item := range out.Items {
			it := ddbitem.NewReader(item)
			e := IndexEntry{PK: it.String(ddbitem.PartitionKey), FirstAttemptAt: it.Time(AttrFirstAttemptAt)}
			if err := it.Err(); err != nil {
				return fmt.Errorf("query %s index %s: %s: %w", x.table, ddbitem.TimeIndex, e.PK, err)
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

// maxBatchRounds bounds how often Records asks again for the keys a
// BatchGetItem left unprocessed (DynamoDB's answer when it throttles).
const maxBatchRounds = 8

// Records reads the records of pks (eventually consistent, as the index
// is), by BatchGetItem, 100 keys a call; a key without a record is left
// out of the map.
func (x *TimeIndex) Records(ctx context.Context, pks []string) (map[string]Record, error) {
	return batchRecords(ctx, x.api, x.table, pks)
}

// batchGetAPI is the DynamoDB call batchRecords makes.
type batchGetAPI interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
}

// batchRecords reads the records of pks from table by BatchGetItem, 100
// keys a call, asking again for what DynamoDB left unprocessed.
func batchRecords(ctx context.Context, api batchGetAPI, table string, pks []string) (map[string]Record, error) {
	got := make(map[string]Record, len(pks))
	pks = slices.Compact(slices.Sorted(slices.Values(pks)))
	for chunk := range slices.Chunk(pks, maxBatchGet) {
		keys := make([]map[string]types.AttributeValue, len(chunk))
		for i, pk := range chunk {
			keys[i] = ddbitem.Key(pk)
		}
		request := map[string]types.KeysAndAttributes{table: {Keys: keys}}
		for round := 0; len(request) > 0; round++ {
			if round == maxBatchRounds {
				return nil, fmt.Errorf("read %s: %d key(s) still unprocessed after %d rounds (the table is throttling reads): try again", table, len(request[table].Keys), round)
			}
			if round > 0 {
				select { // back off before asking again, as the SDK does for a throttled call
				case <-time.After(time.Duration(25<<round) * time.Millisecond):
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			out, err := api.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: request})
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", table, err)
			}
			for _, item := range out.Responses[table] {
				r, err := decodeRecord(item)
				if err != nil {
					return nil, fmt.Errorf("read %s: record %s: %w", table, r.PK, err)
				}
				got[r.PK] = r
			}
			request = out.UnprocessedKeys
		}
	}
	return got, nil
}

// Window calls visit with every record in the time index first attempted
// in [since, until), as TimeIndex.Window does on a table: those an
// Unindexed view wrote are not there.
func (m *Memory) Window(_ context.Context, since, until time.Time, visit func(IndexEntry) error) error {
	m.mu.Lock()
	var es []IndexEntry
	for pk, r := range m.records {
		if r.TimeBucket != "" && !r.FirstAttemptAt.IsZero() && !r.FirstAttemptAt.Before(since) && r.FirstAttemptAt.Before(until) {
			es = append(es, IndexEntry{PK: pk, FirstAttemptAt: r.FirstAttemptAt})
		}
	}
	m.mu.Unlock()
	for _, e := range es {
		if err := visit(e); err != nil {
			return err
		}
	}
	return nil
}

// Records returns copies of the records of pks that exist, as
// TimeIndex.Records does on a table.
func (m *Memory) Records(_ context.Context, pks []string) (map[string]Record, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	got := make(map[string]Record, len(pks))
	for _, pk := range pks {
		if r, ok := m.records[pk]; ok {
			r.History, r.Replays = slices.Clone(r.History), slices.Clone(r.Replays)
			got[pk] = r
		}
	}
	return got, nil
}
