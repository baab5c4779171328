package dedupe

import (
	"context"
	"errors"
	"fmt"
	"maps"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// ModeCheck on DynamoDB: the claim is one strongly consistent GetItem (one
// read unit for a record under 4 KB), the finish one UpdateItem that writes
// the whole attempt on the claim's condition (one write unit for a record
// under 1 KB).

// checkRecord is the finish's part every outcome shares: the claim's
// fields, the first attempt's time when the record is new, the count and
// the lease a ModeLease claim may have left removed.
const checkRecord = "#source = :source, #type = :type, #expires = :expires, #first = if_not_exists(#first, :claimed_text)" + indexKeySet + ", #history = :history, #last_status = :code"

var (
	checkDelivered = "SET #status = :status, " + checkRecord + ", #delivered_at = :at_text, #replays = :replays ADD #attempts :one REMOVE #token, #until, #last_error, #next"
	checkRetry     = "SET #status = :status, " + checkRecord + ", #last_error = :error, #next = :next_text ADD #attempts :one REMOVE #token, #until"
	checkFailed    = "SET #status = :status, " + checkRecord + ", #last_error = :error, #replays = :replays ADD #attempts :one REMOVE #token, #until, #next"
)

// check is a ModeCheck claim: the record read, the claim's condition
// applied to it, nothing written.
func (d *DynamoDB) check(ctx context.Context, in ClaimInput) (Lease, error) {
	r, exists, err := d.Get(ctx, in.PK)
	if err != nil {
		return Lease{}, fmt.Errorf("claim %s: %w", in.PK, err)
	}
	if !claimable(r, exists, in) {
		return Lease{}, fmt.Errorf("claim %s: %w", in.PK, refusal(r, in))
	}
	return checked(r, in), nil
}

// checkedFinishInput renders a ModeCheck finish: the attempt's outcome
// and the claim's fields in one UpdateItem, on the claim's condition at
// the outcome's time.
func (d *DynamoDB) checkedFinishInput(lease Lease, out Outcome) *dynamodb.UpdateItemInput {
	history, replays := extended(lease, out)
	as := finishAsClaim(lease, out)
	values := map[string]types.AttributeValue{
		":status":       ddbitem.S(string(out.Status)),
		":code":         ddbitem.N(int64(out.HTTPStatus)),
		":history":      encodeHistory(history),
		":source":       ddbitem.S(lease.Source),
		":type":         ddbitem.S(lease.Type),
		":expires":      ddbitem.N(lease.ExpiresAt.Unix()),
		":claimed_text": ddbitem.S(lease.At.UTC().Format(timeLayout)),
		":bucket":       ddbitem.S(TimeBucket(lease.PK, firstOf(lease))),
		":one":          ddbitem.N(1),
		":now":          ddbitem.N(as.Now.UnixMilli()),
	}
	names := maps.Clone(claimNames)
	names["#history"], names["#last_status"] = AttrHistory, AttrLastStatus
	var update string
	switch out.Status {
	case StatusDelivered:
		update = checkDelivered
		names["#delivered_at"], names["#replays"], names["#last_error"], names["#next"] = AttrDeliveredAt, AttrReplays, AttrLastError, AttrNextAttemptAt
		values[":at_text"] = ddbitem.S(out.At.UTC().Format(timeLayout))
		values[":replays"] = encodeStrings(replays)
	case StatusFailed:
		update = checkRetry
		names["#last_error"], names["#next"] = AttrLastError, AttrNextAttemptAt
		values[":error"] = ddbitem.S(ShortError(out.Error))
		values[":next_text"] = ddbitem.S(out.NextAttemptAt.UTC().Format(timeLayout))
	default:
		update = checkFailed
		names["#last_error"], names["#replays"], names["#next"] = AttrLastError, AttrReplays, AttrNextAttemptAt
		values[":error"] = ddbitem.S(ShortError(out.Error))
		values[":replays"] = encodeStrings(replays)
	}
	condition := replayCondition
	if lease.Replay == "" {
		condition = claimCondition
		values[":delivered"] = ddbitem.S(string(StatusDelivered))
		values[":gone"] = ddbitem.S(string(StatusGone))
	} else {
		names["#replays"] = AttrReplays
		values[":replay"] = ddbitem.S(lease.Replay)
	}
	return d.unindex(&dynamodb.UpdateItemInput{
		TableName:                 aws.String(d.table),
		Key:                       ddbitem.Key(lease.PK),
		UpdateExpression:          aws.String(update),
		ConditionExpression:       aws.String(condition),
		ExpressionAttributeNames:  names,
		ExpressionAttributeValues: values,
	})
}

// finishChecked writes a ModeCheck attempt; ErrSettled when another
// attempt ended the event first.
func (d *DynamoDB) finishChecked(ctx context.Context, lease Lease, out Outcome) error {
	_, err := d.api.UpdateItem(ctx, d.checkedFinishInput(lease, out))
	var ccf *types.ConditionalCheckFailedException
	switch {
	case errors.As(err, &ccf):
		return fmt.Errorf("finish %s: %w", lease.PK, ErrSettled)
	case err != nil:
		return fmt.Errorf("finish %s: %w", lease.PK, err)
	}
	return nil
}
