package replayguard

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// Attribute names of a replay record, besides the table's key and TTL
// attribute (ddbitem.PartitionKey, ddbitem.ExpiresAt). The status, lease,
// source and type share their names with the delivery records of the same
// table (shared/dedupe).
const (
	AttrStatus      = "status"
	AttrEventID     = "event_id"
	AttrType        = "type"
	AttrContentType = "content_type"
	AttrSource      = "source"
	AttrLeaseToken  = "lease_token"
	AttrLeaseUntil  = "lease_until"   // epoch milliseconds
	AttrFirstSeenAt = "first_seen_at" // RFC 3339, UTC, milliseconds
	AttrPublishedAt = "published_at"  // RFC 3339, UTC, milliseconds
)

// timeLayout is the layout of the audit timestamps.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// DynamoDBAPI is the part of the DynamoDB client the store uses. Ingest
// calls only UpdateItem (its role may do nothing else on these keys); Get
// is for tests and operators.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// DynamoDB is the store on a table with ddbitem's key schema: the
// delivery-record table, under keys that start with KeyPrefix.
type DynamoDB struct {
	api   DynamoDBAPI
	table string
}

// NewDynamoDB returns a store on table.
func NewDynamoDB(api DynamoDBAPI, table string) *DynamoDB {
	return &DynamoDB{api: api, table: table}
}

// Every attribute goes through a name placeholder (status, source and type
// are reserved words); each expression lists exactly the names it uses.
const (
	// A claim creates the record when it is missing or its window ended
	// (TTL deletes expired items days late).
	claimCondition = "attribute_not_exists(#pk) OR #expires <= :now_s"
	claimUpdate    = "SET #status = :pending, #event_id = :event_id, #type = :type, #content_type = :content_type, #source = :source, " +
		"#token = :token, #until = :until, #first = :now_text, #expires = :expires REMOVE #published"
	// A takeover: still the same PENDING record, its lease ended.
	takeoverCondition = "#status = :pending AND #token = :old_token AND #until < :now AND #expires > :now_s"
	takeoverUpdate    = "SET #token = :token, #until = :until"
	confirmCondition  = "#token = :token"
	confirmUpdate     = "SET #status = :published, #published = :at_text REMOVE #token, #until"
	releaseCondition  = "#token = :token AND #status = :pending"
	releaseUpdate     = "SET #until = :zero"
)

var (
	claimNames = map[string]string{
		"#pk": ddbitem.PartitionKey, "#status": AttrStatus, "#event_id": AttrEventID, "#type": AttrType, "#content_type": AttrContentType,
		"#source": AttrSource, "#token": AttrLeaseToken, "#until": AttrLeaseUntil, "#first": AttrFirstSeenAt,
		"#expires": ddbitem.ExpiresAt, "#published": AttrPublishedAt,
	}
	takeoverNames = map[string]string{"#status": AttrStatus, "#token": AttrLeaseToken, "#until": AttrLeaseUntil, "#expires": ddbitem.ExpiresAt}
	confirmNames  = map[string]string{"#status": AttrStatus, "#published": AttrPublishedAt, "#token": AttrLeaseToken, "#until": AttrLeaseUntil}
	releaseNames  = map[string]string{"#token": AttrLeaseToken, "#status": AttrStatus, "#until": AttrLeaseUntil}
)

// claimInput renders the conditional UpdateItem that creates a record.
func (d *DynamoDB) claimInput(in ClaimInput, token string) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      ddbitem.Key(in.Key),
		UpdateExpression:         aws.String(claimUpdate),
		ConditionExpression:      aws.String(claimCondition),
		ExpressionAttributeNames: claimNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending":      ddbitem.S(string(StatusPending)),
			":event_id":     ddbitem.S(in.Event.ID),
			":type":         ddbitem.S(in.Event.Type),
			":content_type": ddbitem.S(in.Event.ContentType),
			":source":       ddbitem.S(in.Source),
			":token":        ddbitem.S(token),
			":until":        ddbitem.N(in.LeaseUntil.UnixMilli()),
			":now_text":     ddbitem.S(in.Now.UTC().Format(timeLayout)),
			":now_s":        ddbitem.N(in.Now.Unix()),
			":expires":      ddbitem.N(in.ExpiresAt.Unix()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// takeoverInput renders the conditional UpdateItem that takes over a
// PENDING record whose lease ended, as it was read (old).
func (d *DynamoDB) takeoverInput(in ClaimInput, old Record, token string) *dynamodb.UpdateItemInput {
	return &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      ddbitem.Key(in.Key),
		UpdateExpression:         aws.String(takeoverUpdate),
		ConditionExpression:      aws.String(takeoverCondition),
		ExpressionAttributeNames: takeoverNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":pending":   ddbitem.S(string(StatusPending)),
			":old_token": ddbitem.S(old.LeaseToken),
			":now":       ddbitem.N(in.Now.UnixMilli()),
			":now_s":     ddbitem.N(in.Now.Unix()),
			":token":     ddbitem.S(token),
			":until":     ddbitem.N(in.LeaseUntil.UnixMilli()),
		},
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
}

// Claim records a request with one conditional UpdateItem. A refusal
// returns the record as it was (ALL_OLD): PUBLISHED or PENDING under a
// live lease is a *SeenError; PENDING under an ended lease is taken over
// with a second conditional write. An endpoint that refuses without the
// old record is an error (ingest's role may not read these records, and a
// refusal that cannot tell a replay from a failed publish must not be
// answered 202).
func (d *DynamoDB) Claim(ctx context.Context, in ClaimInput) (Lease, error) {
	token := newToken()
	_, err := d.api.UpdateItem(ctx, d.claimInput(in, token))
	if err == nil {
		return Lease{Key: in.Key, Token: token, Event: in.Event}, nil
	}
	old, err := refused(err)
	if err != nil {
		return Lease{}, fmt.Errorf("claim %s: %w", in.Key, err)
	}
	if !stale(old, in.Now) {
		return Lease{}, fmt.Errorf("claim %s: %w", in.Key, seen(old))
	}
	_, err = d.api.UpdateItem(ctx, d.takeoverInput(in, old, token))
	if err == nil {
		return Lease{Key: in.Key, Token: token, Event: old.Event, Takeover: true}, nil
	}
	now, err := refused(err)
	if err != nil {
		return Lease{}, fmt.Errorf("claim %s: take over: %w", in.Key, err)
	}
	// Another request moved the record first: it is publishing the event
	// (ErrInFlight), or has published it (ErrReplay).
	return Lease{}, fmt.Errorf("claim %s: %w", in.Key, seen(now))
}

// refused reads the record a conditional check failure returned; any other
// error, or a refusal without the record, is returned as an error.
func refused(err error) (Record, error) {
	var ccf *types.ConditionalCheckFailedException
	if !errors.As(err, &ccf) {
		return Record{}, err
	}
	if len(ccf.Item) == 0 {
		return Record{}, errors.New("refused without the record (ReturnValuesOnConditionCheckFailure unsupported?)")
	}
	r, derr := decodeRecord(ccf.Item)
	if derr != nil {
		return Record{}, fmt.Errorf("refused, and the record is unreadable: %w", derr)
	}
	return r, nil
}

// Confirm marks the record PUBLISHED with an UpdateItem conditional on the
// lease token; ErrLeaseLost when another request took it over.
func (d *DynamoDB) Confirm(ctx context.Context, l Lease, at time.Time) error {
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      ddbitem.Key(l.Key),
		UpdateExpression:         aws.String(confirmUpdate),
		ConditionExpression:      aws.String(confirmCondition),
		ExpressionAttributeNames: confirmNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":token":     ddbitem.S(l.Token),
			":published": ddbitem.S(string(StatusPublished)),
			":at_text":   ddbitem.S(at.UTC().Format(timeLayout)),
		},
	})
	return finishErr("confirm", l.Key, err)
}

// Release ends a PENDING record's lease at once, conditional on the lease
// token, so the provider's retry takes the record over and publishes.
func (d *DynamoDB) Release(ctx context.Context, l Lease) error {
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                aws.String(d.table),
		Key:                      ddbitem.Key(l.Key),
		UpdateExpression:         aws.String(releaseUpdate),
		ConditionExpression:      aws.String(releaseCondition),
		ExpressionAttributeNames: releaseNames,
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":token":   ddbitem.S(l.Token),
			":pending": ddbitem.S(string(StatusPending)),
			":zero":    ddbitem.N(0),
		},
	})
	return finishErr("release", l.Key, err)
}

func finishErr(op, key string, err error) error {
	var ccf *types.ConditionalCheckFailedException
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ccf):
		return fmt.Errorf("%s %s: %w", op, key, ErrLeaseLost)
	default:
		return fmt.Errorf("%s %s: %w", op, key, err)
	}
}

// Get reads a record (expired or not) with a strongly consistent read.
func (d *DynamoDB) Get(ctx context.Context, key string) (Record, bool, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: ddbitem.Key(key), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Record{}, false, fmt.Errorf("get %s: %w", key, err)
	}
	if len(out.Item) == 0 {
		return Record{}, false, nil
	}
	r, err := decodeRecord(out.Item)
	if err != nil {
		return Record{}, false, fmt.Errorf("get %s: %w", key, err)
	}
	return r, true, nil
}

// decodeRecord reads a stored item. Missing attributes stay zero; an
// attribute of the wrong type or an unparsable value is an error.
func decodeRecord(item map[string]types.AttributeValue) (Record, error) {
	it := ddbitem.NewReader(item)
	r := Record{
		Key:    it.String(ddbitem.PartitionKey),
		Status: Status(it.String(AttrStatus)),
		Event:  Event{ID: it.String(AttrEventID), Type: it.String(AttrType), ContentType: it.String(AttrContentType)},
		Source: it.String(AttrSource),

		LeaseToken:  it.String(AttrLeaseToken),
		FirstSeenAt: it.Time(AttrFirstSeenAt),
		PublishedAt: it.Time(AttrPublishedAt),
	}
	if ms := it.Int(AttrLeaseUntil); ms != 0 {
		r.LeaseUntil = time.UnixMilli(ms)
	}
	if s := it.Int(ddbitem.ExpiresAt); s != 0 {
		r.ExpiresAt = time.Unix(s, 0)
	}
	switch r.Status {
	case StatusPending, StatusPublished:
	default:
		it.Fail(fmt.Errorf("attribute %s: %q is not a replay record's status", AttrStatus, r.Status))
	}
	if r.Event.ID == "" {
		it.Fail(fmt.Errorf("attribute %s: missing", AttrEventID))
	}
	return r, it.Err()
}
