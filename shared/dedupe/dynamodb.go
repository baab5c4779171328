package dedupe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// Attribute names of a delivery record, besides the table's key and TTL
// attribute (ddbitem.PartitionKey, ddbitem.ExpiresAt).
const (
	AttrStatus         = "status"
	AttrLeaseToken     = "lease_token"
	AttrLeaseUntil     = "lease_until" // epoch milliseconds
	AttrAttempts       = "attempts"
	AttrLastStatus     = "last_status"
	AttrLastError      = "last_error"
	AttrFirstAttemptAt = ddbitem.FirstAttemptAt // RFC 3339, UTC, milliseconds; the time index's sort key
	AttrTimeBucket     = ddbitem.TimeBucket     // the time index's partition key, written with the first attempt (TimeBucket)
	AttrDeliveredAt    = "delivered_at"         // RFC 3339, UTC, milliseconds
	AttrSource         = "source"
	AttrType           = "type"
	AttrNextAttemptAt  = "next_attempt_at" // RFC 3339, UTC, milliseconds; while FAILED
	AttrHistory        = "history"         // list of maps, the last MaxHistory attempts
	AttrReplays        = "replays"         // list of strings, the last MaxReplays finished replays
)

// Keys of a history entry (a map).
const (
	histAt        = "at" // RFC 3339, UTC, milliseconds
	histOutcome   = "outcome"
	histStatus    = "status"
	histLatencyMS = "latency_ms"
	histError     = "error"
	histBy        = "by"
	histReplay    = "replay"
	histPaced     = "paced"
	histBatch     = "batch"
	histAnswer    = "answer" // binary, the receiver's first bytes
)

// timeLayout is the layout of the audit timestamps.
const timeLayout = "2006-01-02T15:04:05.000Z07:00"

// DynamoDBAPI is the part of the DynamoDB client the store uses.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// DynamoDB is the Store on a DynamoDB table with ddbitem's key schema.
type DynamoDB struct {
	api   DynamoDBAPI
	table string
	mode  Mode
	// unindexed writes no time index key (dedupe.timeIndex false).
	unindexed bool
}

// NewDynamoDB returns a store on table in ModeLease.
func NewDynamoDB(api DynamoDBAPI, table string) *DynamoDB {
	return &DynamoDB{api: api, table: table}
}

// InMode returns the store on the same table in mode.
func (d *DynamoDB) InMode(mode Mode) Store {
	return &DynamoDB{api: d.api, table: d.table, mode: mode, unindexed: d.unindexed}
}

// Unindexed returns the store on the same table, in the same mode, whose
// writes set no time index key (time_bucket): for a table without the
// index (dedupe.timeIndex false), whose records are then in no index. The
// first attempt's time is still written.
func (d *DynamoDB) Unindexed() Store {
	return &DynamoDB{api: d.api, table: d.table, mode: d.mode, unindexed: true}
}

// unindex takes the time index's key out of a first write rendered with
// it (indexKeySet, :bucket and #bucket), for an unindexed store.
func (d *DynamoDB) unindex(in *dynamodb.UpdateItemInput) *dynamodb.UpdateItemInput {
	if !d.unindexed {
		return in
	}
	in.UpdateExpression = aws.String(strings.Replace(aws.ToString(in.UpdateExpression), indexKeySet, "", 1))
	in.ExpressionAttributeNames = maps.Clone(in.ExpressionAttributeNames) // the names may be a shared map
	delete(in.ExpressionAttributeNames, "#bucket")
	delete(in.ExpressionAttributeValues, ":bucket")
	return in
}

// Every attribute goes through a name placeholder: status, source and type
// are DynamoDB reserved words, and one rule is simpler than a list. Each
// expression lists exactly the names it uses, as DynamoDB requires.
const (
	claimCondition = "attribute_not_exists(#pk) OR (#status <> :delivered AND #status <> :gone AND (attribute_not_exists(#until) OR #until < :now))"
	// replayCondition takes a final record too, unless this replay already
	// ended there; a live lease refuses.
	replayCondition = "attribute_not_exists(#pk) OR ((attribute_not_exists(#until) OR #until < :now) AND NOT contains(#replays, :replay))"
	// indexKeySet writes the time index's partition key with a record's
	// first write (the claim, or ModeCheck's finish); an unindexed store
	// leaves it out (unindex).
	indexKeySet = ", #bucket = if_not_exists(#bucket, :bucket)"
	claimUpdate = "SET #status = :in_progress, #token = :token, #until = :until, #source = :source, #type = :type, " +
		"#expires = :expires, #first = if_not_exists(#first, :now_text)" + indexKeySet + " ADD #attempts :one"
	finishCondition = "#token = :token"
	// releaseUpdate gives a lease back unused (Release); releaseFirstUpdate
	// also forgets the first attempt's time when the claim made it, and
	// with it the time index's bucket, so that the next claim writes both
	// for its own time.
	releaseUpdate      = "SET #status = :status ADD #attempts :minus_one REMOVE #token, #until"
	releaseFirstUpdate = releaseUpdate + ", #first, #bucket"
	finishDelivered    = "SET #status = :status, #last_status = :code, #delivered_at = :at_text, #history = :history, #replays = :replays REMOVE #token, #until, #last_error, #next"
	finishRetry        = "SET #status = :status, #last_status = :code, #last_error = :error, #history = :history, #next = :next_text REMOVE #token, #until"
	finishFailed       = "SET #status = :status, #last_status = :code, #last_error = :error, #history = :history, #replays = :replays REMOVE #token, #until, #next"
)

var (
	claimNames = map[string]string{
		"#pk": ddbitem.PartitionKey, "#status": AttrStatus, "#token": AttrLeaseToken, "#until": AttrLeaseUntil,
		"#source": AttrSource, "#type": AttrType, "#expires": ddbitem.ExpiresAt, "#first": AttrFirstAttemptAt,
		"#attempts": AttrAttempts, "#bucket": AttrTimeBucket,
	}
	finishDeliveredNames = map[string]string{
		"#status": AttrStatus, "#last_status": AttrLastStatus, "#delivered_at": AttrDeliveredAt,
		"#token": AttrLeaseToken, "#until": AttrLeaseUntil, "#last_error": AttrLastError,
		"#history": AttrHistory, "#replays": AttrReplays, "#next": AttrNextAttemptAt,
	}
	finishRetryNames = map[string]string{
		"#status": AttrStatus, "#last_status": AttrLastStatus, "#last_error": AttrLastError,
		"#token": AttrLeaseToken, "#until": AttrLeaseUntil, "#history": AttrHistory, "#next": AttrNextAttemptAt,
	}
	finishFailedNames = map[string]string{
		"#status": AttrStatus, "#last_status": AttrLastStatus, "#last_error": AttrLastError,
		"#token": AttrLeaseToken, "#until": AttrLeaseUntil, "#history": AttrHistory, "#replays": AttrReplays, "#next": AttrNextAttemptAt,
	}
	replayClaimNames = func() map[string]string {
		m := map[string]string{"#replays": AttrReplays}
		for k, v := range claimNames {
			m[k] = v
		}
		return m
	}()
)

// claimInput renders the conditional UpdateItem of a claim.
func (d *DynamoDB) claimInput(in ClaimInput, token string) *dynamodb.UpdateItemInput {
	values := map[string]types.AttributeValue{
		":in_progress": ddbitem.S(string(StatusInProgress)),
		":now":         ddbitem.N(in.Now.UnixMilli()),
		":now_text":    ddbitem.S(in.Now.UTC().Format(timeLayout)),
		":bucket":      ddbitem.S(TimeBucket(in.PK, in.Now)),
		":token":       ddbitem.S(token),
		":until":       ddbitem.N(in.LeaseUntil.UnixMilli()),
		":source":      ddbitem.S(in.Source),
		":type":        ddbitem.S(in.Type),
		":expires":     ddbitem.N(in.ExpiresAt.Unix()),
		":one":         ddbitem.N(1),
	}
	condition, names := replayCondition, replayClaimNames
	if in.Replay == "" {
		condition, names = claimCondition, claimNames
		values[":delivered"] = ddbitem.S(string(StatusDelivered))
		values[":gone"] = ddbitem.S(string(StatusGone))
	} else {
		values[":replay"] = ddbitem.S(in.Replay)
	}
	return d.unindex(&dynamodb.UpdateItemInput{
		TableName:                           aws.String(d.table),
		Key:                                 ddbitem.Key(in.PK),
		UpdateExpression:                    aws.String(claimUpdate),
		ConditionExpression:                 aws.String(condition),
		ExpressionAttributeNames:            names,
		ExpressionAttributeValues:           values,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	})
}

// Claim takes a lease with one conditional UpdateItem that creates the
// record when missing. A refusal is a *RefusedError built from the record
// DynamoDB returns with the failed condition (ALL_OLD); should an endpoint
// not return it, one consistent read tells why instead.
func (d *DynamoDB) Claim(ctx context.Context, in ClaimInput) (Lease, error) {
	if d.mode == ModeCheck {
		return d.check(ctx, in)
	}
	token := newToken()
	out, err := d.api.UpdateItem(ctx, d.claimInput(in, token))
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return Lease{}, fmt.Errorf("claim %s: %w", in.PK, err)
		}
		old, derr := decodeRecord(ccf.Item)
		if len(ccf.Item) == 0 {
			old, _, derr = d.Get(ctx, in.PK)
		}
		if derr != nil {
			return Lease{}, fmt.Errorf("claim %s: refused, and the record is unreadable: %w", in.PK, derr)
		}
		return Lease{}, fmt.Errorf("claim %s: %w", in.PK, refusal(old, in))
	}
	r, err := decodeRecord(out.Attributes)
	if err != nil {
		return Lease{}, fmt.Errorf("claim %s: %w", in.PK, err)
	}
	d.refile(ctx, in.PK, r)
	return Lease{PK: in.PK, Token: token, Until: in.LeaseUntil, Attempts: r.Attempts,
		At: in.Now, Replay: in.Replay, ClaimedBy: in.ClaimedBy, History: r.History, Replays: r.Replays}, nil
}

// refile files a record the claim just put in the time index under the
// hour of its first attempt, when the claim's if_not_exists filed it under
// its own: a record first attempted while the index was off
// (dedupe.timeIndex false) had a first attempt and no bucket, and the
// claim, which cannot read the first attempt's time in its one write,
// wrote this hour's. One conditional write, only then; should it fail, the
// record's next claim files it again, and the claim stands.
func (d *DynamoDB) refile(ctx context.Context, pk string, r Record) {
	if d.unindexed || r.FirstAttemptAt.IsZero() || r.TimeBucket == "" {
		return
	}
	right := TimeBucket(pk, r.FirstAttemptAt)
	if r.TimeBucket == right {
		return
	}
	_, _ = d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       ddbitem.Key(pk),
		UpdateExpression:          aws.String("SET #bucket = :right"),
		ConditionExpression:       aws.String("#bucket = :wrong"),
		ExpressionAttributeNames:  map[string]string{"#bucket": AttrTimeBucket},
		ExpressionAttributeValues: map[string]types.AttributeValue{":right": ddbitem.S(right), ":wrong": ddbitem.S(r.TimeBucket)},
	})
}

// finishInput renders the finish: the outcome, the history with this
// attempt appended and, for a replay that ended the event, the replays
// with it remembered (both computed from what the claim read; the lease
// token makes the write safe). A FAILED outcome sets when the next attempt
// is due, any other clears it.
func (d *DynamoDB) finishInput(lease Lease, out Outcome) *dynamodb.UpdateItemInput {
	history, replays := extended(lease, out)
	values := map[string]types.AttributeValue{
		":token":   ddbitem.S(lease.Token),
		":status":  ddbitem.S(string(out.Status)),
		":code":    ddbitem.N(int64(out.HTTPStatus)),
		":history": encodeHistory(history),
	}
	var update string
	var names map[string]string
	switch out.Status {
	case StatusDelivered:
		update, names = finishDelivered, finishDeliveredNames
		values[":at_text"] = ddbitem.S(out.At.UTC().Format(timeLayout))
		values[":replays"] = encodeStrings(replays)
	case StatusFailed:
		update, names = finishRetry, finishRetryNames
		values[":error"] = ddbitem.S(ShortError(out.Error))
		values[":next_text"] = ddbitem.S(out.NextAttemptAt.UTC().Format(timeLayout))
	default:
		update, names = finishFailed, finishFailedNames
		values[":error"] = ddbitem.S(ShortError(out.Error))
		values[":replays"] = encodeStrings(replays)
	}
	return &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       ddbitem.Key(lease.PK),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(finishCondition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	}
}

// Finish records the outcome with an UpdateItem conditional on the lease
// token; ErrLeaseLost when another claim took the record.
func (d *DynamoDB) Finish(ctx context.Context, lease Lease, out Outcome) error {
	if err := validOutcome(out); err != nil {
		return err
	}
	if lease.Token == "" {
		return d.finishChecked(ctx, lease, out)
	}
	_, err := d.api.UpdateItem(ctx, d.finishInput(lease, out))
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("finish %s: %w", lease.PK, ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("finish %s: %w", lease.PK, err)
	}
	return nil
}

// Release gives back a lease no attempt used, with an UpdateItem
// conditional on its token: the claim's attempt is uncounted and the
// record's state is what the claim found (released); ErrLeaseLost when
// another claim took the record. A ModeCheck lease wrote nothing, so
// nothing is given back.
func (d *DynamoDB) Release(ctx context.Context, lease Lease) error {
	if lease.Token == "" {
		return nil
	}
	update, names := releaseUpdate, map[string]string{"#status": AttrStatus, "#attempts": AttrAttempts, "#token": AttrLeaseToken, "#until": AttrLeaseUntil}
	if lease.Attempts <= 1 {
		update = releaseFirstUpdate
		names["#first"], names["#bucket"] = AttrFirstAttemptAt, AttrTimeBucket
	}
	_, err := d.api.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       ddbitem.Key(lease.PK),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(finishCondition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: map[string]types.AttributeValue{":token": ddbitem.S(lease.Token), ":status": ddbitem.S(string(released(lease))), ":minus_one": ddbitem.N(-1)},
	})
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("release %s: %w", lease.PK, ErrLeaseLost)
	case err != nil:
		return fmt.Errorf("release %s: %w", lease.PK, err)
	}
	return nil
}

// Get reads a record with a strongly consistent read.
func (d *DynamoDB) Get(ctx context.Context, pk string) (Record, bool, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: ddbitem.Key(pk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return Record{}, false, fmt.Errorf("get %s: %w", pk, err)
	}
	if len(out.Item) == 0 {
		return Record{}, false, nil
	}
	r, err := decodeRecord(out.Item)
	if err != nil {
		return Record{}, false, fmt.Errorf("get %s: %w", pk, err)
	}
	return r, true, nil
}

// decodeRecord reads a stored item. Missing attributes stay zero; an
// attribute of the wrong type or an unparsable number is an error.
func decodeRecord(item map[string]types.AttributeValue) (Record, error) {
	var r Record
	it := ddbitem.NewReader(item)
	r.PK = it.String(ddbitem.PartitionKey)
	r.Status = Status(it.String(AttrStatus))
	r.LeaseToken = it.String(AttrLeaseToken)
	if ms := it.Int(AttrLeaseUntil); ms != 0 {
		r.LeaseUntil = time.UnixMilli(ms)
	}
	r.Attempts = int(it.Int(AttrAttempts))
	r.LastStatus = int(it.Int(AttrLastStatus))
	r.LastError = it.String(AttrLastError)
	r.FirstAttemptAt = it.Time(AttrFirstAttemptAt)
	r.TimeBucket = it.String(AttrTimeBucket)
	r.DeliveredAt = it.Time(AttrDeliveredAt)
	r.Source = it.String(AttrSource)
	r.Type = it.String(AttrType)
	if s := it.Int(ddbitem.ExpiresAt); s != 0 {
		r.ExpiresAt = time.Unix(s, 0)
	}
	r.NextAttemptAt = it.Time(AttrNextAttemptAt)
	switch v := item[AttrHistory].(type) {
	case nil:
	case *types.AttributeValueMemberL:
		for i, e := range v.Value {
			a, err := decodeAttempt(e)
			if err != nil {
				it.Fail(fmt.Errorf("attribute %s[%d]: %w", AttrHistory, i, err))
				continue
			}
			r.History = append(r.History, a)
		}
	default:
		it.Fail(fmt.Errorf("attribute %s: want a list", AttrHistory))
	}
	switch v := item[AttrReplays].(type) {
	case nil:
	case *types.AttributeValueMemberL:
		for i, e := range v.Value {
			s, ok := e.(*types.AttributeValueMemberS)
			if !ok {
				it.Fail(fmt.Errorf("attribute %s[%d]: want a string", AttrReplays, i))
				continue
			}
			r.Replays = append(r.Replays, s.Value)
		}
	default:
		it.Fail(fmt.Errorf("attribute %s: want a list", AttrReplays))
	}
	return r, it.Err()
}

// encodeHistory renders the history as a list of maps; empty optional
// fields are left out.
func encodeHistory(history []Attempt) types.AttributeValue {
	list := make([]types.AttributeValue, len(history))
	for i, a := range history {
		m := map[string]types.AttributeValue{
			histAt:        ddbitem.S(a.At.UTC().Format(timeLayout)),
			histOutcome:   ddbitem.S(string(a.Outcome)),
			histStatus:    ddbitem.N(int64(a.HTTPStatus)),
			histLatencyMS: ddbitem.N(a.Latency.Milliseconds()),
		}
		if a.Paced > 0 {
			m[histPaced] = ddbitem.N(int64(a.Paced))
		}
		if len(a.Answer) > 0 {
			m[histAnswer] = &types.AttributeValueMemberB{Value: a.Answer}
		}
		for k, v := range map[string]string{histError: a.Error, histBy: a.ClaimedBy, histReplay: a.Replay, histBatch: a.Batch} {
			if v != "" {
				m[k] = ddbitem.S(v)
			}
		}
		list[i] = &types.AttributeValueMemberM{Value: m}
	}
	return &types.AttributeValueMemberL{Value: list}
}

func encodeStrings(values []string) types.AttributeValue {
	list := make([]types.AttributeValue, len(values))
	for i, v := range values {
		list[i] = ddbitem.S(v)
	}
	return &types.AttributeValueMemberL{Value: list}
}

// decodeAttempt reads one history entry.
func decodeAttempt(v types.AttributeValue) (Attempt, error) {
	m, ok := v.(*types.AttributeValueMemberM)
	if !ok {
		return Attempt{}, errors.New("want a map")
	}
	it := ddbitem.NewMapReader(m.Value)
	a := Attempt{Outcome: Status(it.String(histOutcome)), HTTPStatus: int(it.Int(histStatus)), Latency: time.Duration(it.Int(histLatencyMS)) * time.Millisecond,
		Error: it.String(histError), ClaimedBy: it.String(histBy), Replay: it.String(histReplay), Paced: int(it.Int(histPaced)), Batch: it.String(histBatch)}
	a.At = it.Time(histAt)
	switch v := m.Value[histAnswer].(type) {
	case nil:
	case *types.AttributeValueMemberB:
		a.Answer = v.Value
	default:
		it.Fail(fmt.Errorf("%s: want binary", histAnswer))
	}
	return a, it.Err()
}
