// Package ddbitem writes and reads the attribute values of the DynamoDB
// items Hookfan's stores keep (the delivery records, the replay records,
// the lanes): strings, whole numbers and RFC 3339 times. A Reader reads an
// item the way each store decodes it: a missing attribute is the zero
// value; one of the wrong type, or a number or time that does not parse,
// is an error naming it, and every such error is kept. It owns the table's
// key schema: the partition key and the TTL attribute every store's items
// carry, and that the stack and the local stack create the table with.
package ddbitem

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// The record table's schema. The delivery records (shared/dedupe), the
// replay records (shared/replayguard) and the lanes share one table, told
// apart by their keys; the stack (infra/stack) and the local stack create
// it with these names.
const (
	// PartitionKey is the table's only key attribute, a string.
	PartitionKey = "pk"
	// ExpiresAt is the table's TTL attribute, in epoch seconds.
	ExpiresAt = "expires_at"
	// TimeIndex is the table's one global secondary index: the delivery
	// records by the hour of their first attempt (shared/dedupe's
	// TimeIndex reads it). It is sparse (only items carrying TimeBucket
	// are in it) and keeps the keys only.
	TimeIndex = "by_first_attempt"
	// TimeBucket is TimeIndex's partition key, a string: the hour of the
	// first attempt and a shard, "2026-12-03T14#5".
	TimeBucket = "time_bucket"
	// FirstAttemptAt is TimeIndex's sort key, a string: RFC 3339 in UTC
	// with milliseconds, whose one width sorts as time does.
	FirstAttemptAt = "first_attempt_at"
)

// Key is the key of the item whose partition key is pk.
func Key(pk string) map[string]types.AttributeValue {
	return map[string]types.AttributeValue{PartitionKey: S(pk)}
}

// KeySchema is the table's key as CreateTable takes it.
func KeySchema() ([]types.AttributeDefinition, []types.KeySchemaElement) {
	name := PartitionKey
	return []types.AttributeDefinition{{AttributeName: &name, AttributeType: types.ScalarAttributeTypeS}},
		[]types.KeySchemaElement{{AttributeName: &name, KeyType: types.KeyTypeHash}}
}

// CreateTableInput creates the table named name as the stack does: on
// demand, keyed by PartitionKey, with TimeIndex.
func CreateTableInput(name string) *dynamodb.CreateTableInput {
	attrs, key := KeySchema()
	bucket, first := TimeBucket, FirstAttemptAt
	attrs = append(attrs,
		types.AttributeDefinition{AttributeName: &bucket, AttributeType: types.ScalarAttributeTypeS},
		types.AttributeDefinition{AttributeName: &first, AttributeType: types.ScalarAttributeTypeS})
	index := TimeIndex
	return &dynamodb.CreateTableInput{
		TableName:            &name,
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: attrs,
		KeySchema:            key,
		GlobalSecondaryIndexes: []types.GlobalSecondaryIndex{{
			IndexName: &index,
			KeySchema: []types.KeySchemaElement{
				{AttributeName: &bucket, KeyType: types.KeyTypeHash},
				{AttributeName: &first, KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}},
	}
}

// UnindexedTableInput creates the table named name without TimeIndex, as
// the stack does with dedupe.timeIndex false.
func UnindexedTableInput(name string) *dynamodb.CreateTableInput {
	attrs, key := KeySchema()
	return &dynamodb.CreateTableInput{TableName: &name, BillingMode: types.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key}
}

// S is a string attribute value.
func S(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

// N is a whole-number attribute value.
func N(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// Reader reads the attributes of one item, or of one map within it,
// collecting what is wrong.
type Reader struct {
	values map[string]types.AttributeValue
	prefix string // before a name in an error: "attribute " for an item's
	errs   []error
}

// NewReader reads an item; its errors name "attribute <name>".
func NewReader(item map[string]types.AttributeValue) *Reader {
	return &Reader{values: item, prefix: "attribute "}
}

// NewMapReader reads a map nested in an item; its errors name the key
// alone (the caller says where the map stands).
func NewMapReader(m map[string]types.AttributeValue) *Reader {
	return &Reader{values: m}
}

// String is the string attribute name, "" when missing.
func (r *Reader) String(name string) string {
	switch v := r.values[name].(type) {
	case nil:
	case *types.AttributeValueMemberS:
		return v.Value
	default:
		r.Fail(fmt.Errorf("%s%s: want a string", r.prefix, name))
	}
	return ""
}

// Int is the whole-number attribute name, 0 when missing.
func (r *Reader) Int(name string) int64 { return r.Number(name, r.values[name]) }

// Number reads av, a whole number named name in errors, 0 when nil; for
// numbers that are not attributes of the item itself (in a list, say).
func (r *Reader) Number(name string, av types.AttributeValue) int64 {
	switch v := av.(type) {
	case nil:
	case *types.AttributeValueMemberN:
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			r.Fail(fmt.Errorf("%s%s: %q is not a whole number", r.prefix, name, v.Value))
		}
		return n
	default:
		r.Fail(fmt.Errorf("%s%s: want a number", r.prefix, name))
	}
	return 0
}

// Time is the RFC 3339 string attribute name, the zero time when missing.
func (r *Reader) Time(name string) time.Time {
	s := r.String(name)
	if s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		r.Fail(fmt.Errorf("%s%s: %q is not an RFC 3339 time", r.prefix, name, s))
	}
	return t
}

// Fail keeps an error found while reading.
func (r *Reader) Fail(err error) { r.errs = append(r.errs, err) }

// Err is every error found, joined; nil when none.
func (r *Reader) Err() error { return errors.Join(r.errs...) }
