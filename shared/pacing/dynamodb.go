package pacing

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/pausing"
)

// Attribute names of the pacing state on a lane's item (pausing.Key).
// pace_tat is in epoch microseconds, the other times in epoch milliseconds.
const (
	AttrTAT           = "pace_tat"
	AttrLevel         = "pace_level"
	AttrAdjustedAt    = "pace_adjusted_at"
	AttrEpoch         = "pace_epoch"
	AttrOverrideN     = "pace_override_n"
	AttrOverridePer   = "pace_override_per_ms"
	AttrOverrideAt    = "pace_override_at"
	AttrOverrideUntil = "pace_override_until"
)

// maxTries bounds a take's conditional writes: a write is refused only
// when the lane changed under the state it was computed from (its rate,
// or its TAT crossing now or the burst), and each refusal returns the
// item as it is.
const maxTries = 4

// DynamoDBAPI is the part of the DynamoDB client the store uses.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// DynamoDB keeps the buckets on the lane items of the record table. A
// take is one conditional UpdateItem computed from the state the store
// last saw of the lane: it moves the TAT on (SET pace_tat = pace_tat + k×I)
// on condition that it is still within the burst, so concurrent takes
// from every instance succeed together without reading first. A take the
// last state says must wait writes nothing.
type DynamoDB struct {
	api   DynamoDBAPI
	table string

	mu   sync.Mutex
	seen map[string]State
}

// NewDynamoDB returns a store on the record table.
func NewDynamoDB(api DynamoDBAPI, table string) *DynamoDB {
	return &DynamoDB{api: api, table: table, seen: map[string]State{}}
}

func (d *DynamoDB) cached(dest string) State {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.seen[dest]; ok {
		return s
	}
	return State{Destination: dest}
}

func (d *DynamoDB) remember(s State) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.seen[s.Destination] = s
}

type expr struct {
	names  map[string]string
	values map[string]types.AttributeValue
}

func newExpr() *expr {
	return &expr{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

func (e *expr) n(attr string) string { e.names["#"+attr] = attr; return "#" + attr }

func (e *expr) v(key string, av types.AttributeValue) string {
	e.values[":"+key] = av
	return ":" + key
}

// epochIs conditions on the lane's pacing epoch.
func (e *expr) epochIs(epoch int64) string {
	if epoch == 0 {
		return "attribute_not_exists(" + e.n(AttrEpoch) + ")"
	}
	return e.n(AttrEpoch) + " = " + e.v("epoch", ddbitem.N(epoch))
}

func (d *DynamoDB) input(dest, update, cond string, e *expr) *dynamodb.UpdateItemInput {
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(d.table),
		Key:                                 ddbitem.Key(pausing.Key(dest)),
		UpdateExpression:                    aws.String(update),
		ExpressionAttributeNames:            e.names,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if len(e.values) > 0 {
		in.ExpressionAttributeValues = e.values
	}
	if cond != "" {
		in.ConditionExpression = aws.String(cond)
	}
	return in
}

// write sends an update; refused is true when its condition failed, and
// the state is then the item as it was.
func (d *DynamoDB) write(ctx context.Context, op, dest string, in *dynamodb.UpdateItemInput) (s State, refused bool, err error) {
	out, err := d.api.UpdateItem(ctx, in)
	item := map[string]types.AttributeValue(nil)
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) {
			return State{}, false, fmt.Errorf("%s lane %s: %w", op, dest, err)
		}
		refused, item = true, ccf.Item
	} else {
		item = out.Attributes
	}
	s, err = decodeState(dest, item)
	if err != nil {
		return State{}, refused, fmt.Errorf("%s lane %s: %w", op, dest, err)
	}
	d.remember(s)
	return s, refused, nil
}

// Take implements Store.
func (d *DynamoDB) Take(ctx context.Context, dest string, in TakeInput) (Grant, error) {
	s := d.cached(dest)
	for range maxTries {
		dc := decide(s, in)
		if dc.n == 0 {
			return Grant{Wait: dc.wait, State: s}, nil
		}
		e := newExpr()
		tat := e.n(AttrTAT)
		cond := e.epochIs(s.Epoch) + " AND "
		var update string
		if dc.fresh {
			// The TAT is behind now+hold: start the tokens from there.
			cond += "(attribute_not_exists(" + tat + ") OR " + tat + " < " + e.v("base", ddbitem.N(dc.base)) + ")"
			update = "SET " + tat + " = " + e.v("tat", ddbitem.N(dc.tat))
		} else {
			// The TAT is ahead: move it on by n intervals while n still fit.
			cond += tat + " >= " + e.v("floor", ddbitem.N(µs(in.Now)+dc.hold)) + " AND " + tat + " <= " +
				e.v("ceiling", ddbitem.N(µs(in.Now)+(dc.burst-int64(dc.n))*dc.interval))
			update = "SET " + tat + " = " + tat + " + " + e.v("step", ddbitem.N(int64(dc.n)*dc.interval))
		}
		got, refused, err := d.write(ctx, "pace", dest, d.input(dest, update, cond, e))
		if err != nil {
			return Grant{}, err
		}
		if !refused {
			return Grant{N: dc.n, State: got}, nil
		}
		s = got
	}
	// The lane kept changing under each try: come back in one interval.
	return Grant{Wait: s.Interval(in.Pace, in.Now), State: s}, nil
}

// Adjust implements Store.
func (d *DynamoDB) Adjust(ctx context.Context, dest string, in AdjustInput) (State, bool, error) {
	s := d.cached(dest)
	for range maxTries {
		level, due := adjust(s, in)
		if !due {
			return s, false, nil
		}
		e := newExpr()
		cond := e.epochIs(s.Epoch)
		update := "SET " + e.n(AttrLevel) + " = " + e.v("level", ddbitem.N(int64(level))) + ", " +
			e.n(AttrAdjustedAt) + " = " + e.v("at", ddbitem.N(in.Now.UnixMilli())) +
			" ADD " + e.n(AttrEpoch) + " " + e.v("one", ddbitem.N(1))
		got, refused, err := d.write(ctx, "adjust", dest, d.input(dest, update, cond, e))
		if err != nil {
			return State{}, false, err
		}
		if !refused {
			return got, true, nil
		}
		s = got
	}
	return s, false, nil
}

// SetOverride implements Store.
func (d *DynamoDB) SetOverride(ctx context.Context, dest string, o Override) (State, error) {
	if err := validOverride(o); err != nil {
		return State{}, err
	}
	e := newExpr()
	update := "SET " + strings.Join([]string{
		e.n(AttrOverrideN) + " = " + e.v("n", ddbitem.N(int64(o.N))),
		e.n(AttrOverridePer) + " = " + e.v("per", ddbitem.N(o.Per.Milliseconds())),
		e.n(AttrOverrideAt) + " = " + e.v("at", ddbitem.N(o.At.UnixMilli())),
		e.n(AttrOverrideUntil) + " = " + e.v("until", ddbitem.N(o.Until.UnixMilli())),
	}, ", ") + " ADD " + e.n(AttrEpoch) + " " + e.v("one", ddbitem.N(1))
	s, _, err := d.write(ctx, "override", dest, d.input(dest, update, "", e))
	return s, err
}

// ClearOverride implements Store.
func (d *DynamoDB) ClearOverride(ctx context.Context, dest string) (State, error) {
	e := newExpr()
	update := "REMOVE " + strings.Join([]string{e.n(AttrOverrideN), e.n(AttrOverridePer), e.n(AttrOverrideAt), e.n(AttrOverrideUntil)}, ", ") +
		" ADD " + e.n(AttrEpoch) + " " + e.v("one", ddbitem.N(1))
	s, _, err := d.write(ctx, "clear override", dest, d.input(dest, update, "", e))
	return s, err
}

// Get implements Store: a consistent read of the lane's item.
func (d *DynamoDB) Get(ctx context.Context, dest string) (State, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: ddbitem.Key(pausing.Key(dest)), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return State{}, fmt.Errorf("get lane %s: %w", dest, err)
	}
	s, err := decodeState(dest, out.Item)
	if err != nil {
		return State{}, fmt.Errorf("get lane %s: %w", dest, err)
	}
	d.remember(s)
	return s, nil
}

// decodeState reads the pacing attributes of a lane item; a missing item
// or attribute is the zero state.
func decodeState(dest string, item map[string]types.AttributeValue) (State, error) {
	it := ddbitem.NewReader(item)
	s := State{Destination: dest, Level: int(it.Int(AttrLevel)), Epoch: it.Int(AttrEpoch)}
	if t := it.Int(AttrTAT); t != 0 {
		s.TAT = time.UnixMicro(t)
	}
	if t := it.Int(AttrAdjustedAt); t != 0 {
		s.AdjustedAt = time.UnixMilli(t)
	}
	if n := it.Int(AttrOverrideN); n != 0 {
		s.Override = &Override{N: int(n), Per: time.Duration(it.Int(AttrOverridePer)) * time.Millisecond,
			At: time.UnixMilli(it.Int(AttrOverrideAt)), Until: time.UnixMilli(it.Int(AttrOverrideUntil))}
	}
	return s, it.Err()
}
