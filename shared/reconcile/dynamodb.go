package reconcile

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// WatermarkPrefix starts every watermark's key in the delivery-record
// table: "reconcile:<source>". It holds ':', which no destination name
// holds, so no deliver role's "<destination>#*" key condition matches it,
// and the item has no first attempt, so ops events never lists it.
const WatermarkPrefix = "reconcile:"

// WatermarkKey is the key of source's watermark.
func WatermarkKey(source string) string { return WatermarkPrefix + source }

// Attributes of a watermark item.
const (
	attrWatermark = "watermark_ms" // the window's end, Unix milliseconds
	attrSavedAt   = "saved_at_ms"  // when it was saved
)

// batchGetMax is DynamoDB's limit of keys in one BatchGetItem.
const batchGetMax = 100

// maxUnprocessedRounds bounds the retries of keys DynamoDB left
// unprocessed (throttling); past them the read fails.
const maxUnprocessedRounds = 8

// DynamoDBAPI is the part of the DynamoDB client the stores use.
type DynamoDBAPI interface {
	BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
}

// DynamoDBRecords reads which delivery records exist: BatchGetItem, 100
// keys a call, the key alone projected, eventually consistent (half a
// read unit per record of up to 4 KB; a record written a moment ago may
// be missed, and the event then brought in again, which its destinations
// deduplicate).
type DynamoDBRecords struct {
	API   DynamoDBAPI
	Table string
	// Backoff waits between rounds of unprocessed keys (default: 50 ms
	// doubling); tests set it to return at once.
	Backoff func(ctx context.Context, round int) error
}

// Present reports which of keys have a record.
func (d *DynamoDBRecords) Present(ctx context.Context, keys []string) (map[string]bool, error) {
	out := make(map[string]bool, len(keys))
	for start := 0; start < len(keys); start += batchGetMax {
		chunk := keys[start:min(start+batchGetMax, len(keys))]
		if err := d.present(ctx, chunk, out); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func (d *DynamoDBRecords) present(ctx context.Context, keys []string, out map[string]bool) error {
	seen := map[string]bool{}
	items := make([]map[string]types.AttributeValue, 0, len(keys))
	for _, k := range keys {
		if !seen[k] {
			seen[k] = true
			items = append(items, ddbitem.Key(k))
		}
	}
	req := map[string]types.KeysAndAttributes{d.Table: {
		Keys: items, ProjectionExpression: aws.String("#pk"),
		ExpressionAttributeNames: map[string]string{"#pk": ddbitem.PartitionKey},
	}}
	for round := 0; len(req) > 0; round++ {
		if round > 0 {
			if round > maxUnprocessedRounds {
				return fmt.Errorf("read delivery records: %d keys still unprocessed after %d rounds", len(req[d.Table].Keys), maxUnprocessedRounds)
			}
			if err := d.backoff(ctx, round); err != nil {
				return err
			}
		}
		res, err := d.API.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: req})
		if err != nil {
			return fmt.Errorf("read delivery records: %w", err)
		}
		for _, item := range res.Responses[d.Table] {
			if v, ok := item[ddbitem.PartitionKey].(*types.AttributeValueMemberS); ok {
				out[v.Value] = true
			}
		}
		req = res.UnprocessedKeys
	}
	return nil
}

func (d *DynamoDBRecords) backoff(ctx context.Context, round int) error {
	if d.Backoff != nil {
		return d.Backoff(ctx, round)
	}
	t := time.NewTimer(50 * time.Millisecond << min(round-1, 5))
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// DynamoDBWatermarks keeps the watermarks in the delivery-record table
// under WatermarkKey. A save only moves a watermark forward (a
// conditional write), so a slow run finishing after a later one never
// moves it back.
type DynamoDBWatermarks struct {
	API   DynamoDBAPI
	Table string
}

// Load returns the source's watermark, zero when none was saved.
func (d *DynamoDBWatermarks) Load(ctx context.Context, source string) (time.Time, error) {
	out, err := d.API.GetItem(ctx, &dynamodb.GetItemInput{
		TableName: aws.String(d.Table), Key: ddbitem.Key(WatermarkKey(source)), ConsistentRead: aws.Bool(true),
	})
	if err != nil {
		return time.Time{}, fmt.Errorf("read the watermark of %s: %w", source, err)
	}
	if out.Item == nil {
		return time.Time{}, nil
	}
	v, ok := out.Item[attrWatermark].(*types.AttributeValueMemberN)
	if !ok {
		return time.Time{}, fmt.Errorf("the watermark of %s has no number %s", source, attrWatermark)
	}
	ms, err := strconv.ParseInt(v.Value, 10, 64)
	if err != nil || ms <= 0 {
		return time.Time{}, fmt.Errorf("the watermark of %s is %q, not Unix milliseconds", source, truncate(v.Value, 32))
	}
	return time.UnixMilli(ms), nil
}

// Save moves the source's watermark to at, unless it is already there or
// further.
func (d *DynamoDBWatermarks) Save(ctx context.Context, source string, at time.Time) error {
	_, err := d.API.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.Table),
		Key:                       ddbitem.Key(WatermarkKey(source)),
		UpdateExpression:          aws.String("SET #w = :w, #s = :s"),
		ConditionExpression:       aws.String("attribute_not_exists(#w) OR #w < :w"),
		ExpressionAttributeNames:  map[string]string{"#w": attrWatermark, "#s": attrSavedAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{":w": ddbitem.N(at.UnixMilli()), ":s": ddbitem.N(time.Now().UnixMilli())},
	})
	var cf *types.ConditionalCheckFailedException
	if errors.As(err, &cf) {
		return nil // already at or past at
	}
	if err != nil {
		return fmt.Errorf("save the watermark of %s: %w", source, err)
	}
	return nil
}

// MemoryWatermarks keeps watermarks in memory, for tests.
type MemoryWatermarks struct {
	mu sync.Mutex
	at map[string]time.Time
}

// Load returns the source's watermark, zero when none was saved.
func (m *MemoryWatermarks) Load(_ context.Context, source string) (time.Time, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.at[source], nil
}

// Save moves the source's watermark forward to at.
func (m *MemoryWatermarks) Save(_ context.Context, source string, at time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.at == nil {
		m.at = map[string]time.Time{}
	}
	if at.After(m.at[source]) {
		m.at[source] = at
	}
	return nil
}

// Snapshot returns the saved watermarks.
func (m *MemoryWatermarks) Snapshot() map[string]time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.at)
}

// RecordGetter reads one delivery record: *dedupe.Memory, *dedupe.DynamoDB.
type RecordGetter interface {
	Get(ctx context.Context, pk string) (dedupe.Record, bool, error)
}

// GetRecords is Records over a RecordGetter, one read a key: for tests
// and the local stack's memory store.
type GetRecords struct{ Store RecordGetter }

// Present reports which of keys have a record.
func (g GetRecords) Present(ctx context.Context, keys []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, k := range keys {
		_, ok, err := g.Store.Get(ctx, k)
		if err != nil {
			return nil, err
		}
		out[k] = ok
	}
	return out, nil
}
