package pausing

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// Attribute names of a lane item. Times are epoch milliseconds.
const (
	AttrMode            = "lane_mode"
	AttrVersion         = "lane_version"
	AttrPausedAt        = "paused_at"
	AttrResumeBy        = "resume_by"
	AttrReason          = "pause_reason"
	AttrPausedBy        = "paused_by"
	AttrFailures        = "consecutive_failures"
	AttrPauses          = "pauses" // a list of {from, to}
	AttrProbes          = "probes"
	AttrProbeUntil      = "probe_until"
	AttrLastProbeAt     = "last_probe_at"
	AttrLastProbeStatus = "last_probe_status"
	AttrLastProbeError  = "last_probe_error"
	AttrResumedAt       = "resumed_at"
	AttrResumeReason    = "resume_reason"
	AttrResumedBy       = "resumed_by"
	AttrUpdatedAt       = "updated_at"
	// windowPrefix starts a failure-rate counter's name:
	// win_<index>_a (attempts) and win_<index>_f (failures).
	windowPrefix = "win_"
)

func windowAttr(idx int64, kind byte) string {
	return windowPrefix + strconv.FormatInt(idx, 10) + "_" + string(kind)
}

// DynamoDBAPI is the part of the DynamoDB client the store uses.
type DynamoDBAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// DynamoDB stores lane state as one item per lane (Key) in the
// delivery-record table; each call is one conditional UpdateItem or one
// consistent GetItem. The item has no TTL: it lives as long as the lane.
type DynamoDB struct {
	api   DynamoDBAPI
	table string
}

// NewDynamoDB returns a store on the record table.
func NewDynamoDB(api DynamoDBAPI, table string) *DynamoDB {
	return &DynamoDB{api: api, table: table}
}

// update builds one UpdateItem on a lane's item: each attribute is named
// through a placeholder, and each value through another.
type update struct {
	set, add, remove []string
	cond             string
	names            map[string]string
	values           map[string]types.AttributeValue
}

func newUpdate() *update {
	return &update{names: map[string]string{}, values: map[string]types.AttributeValue{}}
}

// name returns the placeholder of an attribute.
func (u *update) name(attr string) string {
	p := "#" + attr
	u.names[p] = attr
	return p
}

// value returns the placeholder of a value.
func (u *update) value(key string, v types.AttributeValue) string {
	p := ":" + key
	u.values[p] = v
	return p
}

func (u *update) input(table, dest string) *dynamodb.UpdateItemInput {
	var parts []string
	if len(u.set) > 0 {
		parts = append(parts, "SET "+strings.Join(u.set, ", "))
	}
	if len(u.add) > 0 {
		parts = append(parts, "ADD "+strings.Join(u.add, ", "))
	}
	if len(u.remove) > 0 {
		parts = append(parts, "REMOVE "+strings.Join(u.remove, ", "))
	}
	in := &dynamodb.UpdateItemInput{
		TableName:                           aws.String(table),
		Key:                                 key(dest),
		UpdateExpression:                    aws.String(strings.Join(parts, " ")),
		ExpressionAttributeNames:            u.names,
		ReturnValues:                        types.ReturnValueAllNew,
		ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld,
	}
	if len(u.values) > 0 {
		in.ExpressionAttributeValues = u.values
	}
	if u.cond != "" {
		in.ConditionExpression = aws.String(u.cond)
	}
	return in
}

func key(dest string) map[string]types.AttributeValue {
	return ddbitem.Key(Key(dest))
}

func ms(t time.Time) types.AttributeValue { return ddbitem.N(t.UnixMilli()) }

// run sends an update; a failed condition returns the item as it was,
// with ErrChanged (or what refused tells of it).
func (d *DynamoDB) run(ctx context.Context, op, dest string, u *update, refused func(State) error) (State, error) {
	out, err := d.api.UpdateItem(ctx, u.input(d.table, dest))
	if err != nil {
		var ccf *types.ConditionalCheckFailedException
		if !errors.As(err, &ccf) || refused == nil {
			return State{}, fmt.Errorf("%s lane %s: %w", op, dest, err)
		}
		old, derr := decodeState(dest, ccf.Item)
		if len(ccf.Item) == 0 {
			old, derr = d.Get(ctx, dest)
		}
		if derr != nil {
			return State{}, fmt.Errorf("%s lane %s: refused, and the lane is unreadable: %w", op, dest, derr)
		}
		return old, fmt.Errorf("%s lane %s: %w", op, dest, refused(old))
	}
	s, err := decodeState(dest, out.Attributes)
	if err != nil {
		return State{}, fmt.Errorf("%s lane %s: %w", op, dest, err)
	}
	return s, nil
}

func changed(State) error { return ErrChanged }

// Get reads a lane's state with a consistent read; a lane never written
// is active.
func (d *DynamoDB) Get(ctx context.Context, dest string) (State, error) {
	out, err := d.api.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(d.table), Key: key(dest), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return State{}, fmt.Errorf("get lane %s: %w", dest, err)
	}
	s, err := decodeState(dest, out.Item)
	if err != nil {
		return State{}, fmt.Errorf("get lane %s: %w", dest, err)
	}
	return s, nil
}

// Count adds a batch's attempts to the lane's counters in one UpdateItem
// (atomic counters): consecutive failures, and with width > 0 the current
// failure-rate window's, dropping the window before the previous one.
func (d *DynamoDB) Count(ctx context.Context, dest string, t Tally, at time.Time, width time.Duration) (State, error) {
	u := newUpdate()
	now := u.value("now", ms(at))
	u.set = append(u.set, u.name(AttrUpdatedAt)+" = "+now)
	failures := func() string { return u.value("f", ddbitem.N(int64(t.Failures))) }
	if t.Succeeded {
		u.set = append(u.set, u.name(AttrFailures)+" = "+u.value("trailing", ddbitem.N(int64(t.Trailing))))
	} else {
		u.add = append(u.add, u.name(AttrFailures)+" "+failures())
	}
	if width > 0 {
		idx := WindowIndex(at, width)
		u.add = append(u.add, u.name(windowAttr(idx, 'a'))+" "+u.value("a", ddbitem.N(int64(t.Attempts))), u.name(windowAttr(idx, 'f'))+" "+failures())
		u.remove = append(u.remove, u.name(windowAttr(idx-2, 'a')), u.name(windowAttr(idx-2, 'f')))
	}
	return d.run(ctx, "count", dest, u, nil)
}

// versionIs conditions an update on the lane's version (a lane never
// written is at version 0).
func (u *update) versionIs(v int64) string {
	if v == 0 {
		return "attribute_not_exists(" + u.name(AttrVersion) + ")"
	}
	return u.name(AttrVersion) + " = " + u.value("version", ddbitem.N(v))
}

// Pause records a pause if the lane is still at in.Version.
func (d *DynamoDB) Pause(ctx context.Context, dest string, in PauseInput) (State, error) {
	u := newUpdate()
	u.cond = u.versionIs(in.Version)
	at := u.value("at", ms(in.At))
	u.set = append(u.set,
		u.name(AttrMode)+" = "+u.value("paused", ddbitem.S(string(Paused))),
		u.name(AttrVersion)+" = "+u.value("next", ddbitem.N(in.Version+1)),
		u.name(AttrPausedAt)+" = "+at,
		u.name(AttrResumeBy)+" = "+u.value("resume_by", ms(in.ResumeBy)),
		u.name(AttrReason)+" = "+u.value("reason", ddbitem.S(in.Reason)),
		u.name(AttrPausedBy)+" = "+u.value("by", ddbitem.S(string(in.By))),
		u.name(AttrUpdatedAt)+" = "+at,
	)
	if !in.Takeover {
		u.set = append(u.set, u.name(AttrProbes)+" = "+u.value("zero", ddbitem.N(0)))
		u.remove = append(u.remove, u.name(AttrProbeUntil), u.name(AttrLastProbeAt), u.name(AttrLastProbeStatus), u.name(AttrLastProbeError))
	}
	return d.run(ctx, "pause", dest, u, changed)
}

// Resume records a resume if the lane is still paused at in.Version.
func (d *DynamoDB) Resume(ctx context.Context, dest string, in ResumeInput) (State, error) {
	u := newUpdate()
	u.cond = u.versionIs(in.Version) + " AND " + u.name(AttrMode) + " = " + u.value("paused", ddbitem.S(string(Paused)))
	at := u.value("at", ms(in.At))
	pauses := make([]types.AttributeValue, len(in.Pauses))
	for i, iv := range in.Pauses {
		pauses[i] = &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"from": ms(iv.From), "to": ms(iv.To)}}
	}
	u.set = append(u.set,
		u.name(AttrMode)+" = "+u.value("active", ddbitem.S(string(Active))),
		u.name(AttrVersion)+" = "+u.value("next", ddbitem.N(in.Version+1)),
		u.name(AttrFailures)+" = "+u.value("zero", ddbitem.N(0)),
		u.name(AttrResumedAt)+" = "+at,
		u.name(AttrResumeReason)+" = "+u.value("reason", ddbitem.S(in.Reason)),
		u.name(AttrResumedBy)+" = "+u.value("by", ddbitem.S(string(in.By))),
		u.name(AttrPauses)+" = "+u.value("pauses", &types.AttributeValueMemberL{Value: pauses}),
		u.name(AttrUpdatedAt)+" = "+at,
	)
	u.remove = append(u.remove, u.name(AttrResumeBy), u.name(AttrProbeUntil))
	for _, idx := range in.Clear {
		u.remove = append(u.remove, u.name(windowAttr(idx, 'a')), u.name(windowAttr(idx, 'f')))
	}
	return d.run(ctx, "resume", dest, u, changed)
}

// StartProbe marks a probe of a paused lane running until until, unless
// one already is.
func (d *DynamoDB) StartProbe(ctx context.Context, dest string, at, until time.Time) (State, error) {
	u := newUpdate()
	probeUntil := u.name(AttrProbeUntil)
	now := u.value("at", ms(at))
	u.cond = u.name(AttrMode) + " = " + u.value("paused", ddbitem.S(string(Paused))) +
		" AND (attribute_not_exists(" + probeUntil + ") OR " + probeUntil + " <= " + now + ")"
	u.set = append(u.set, probeUntil+" = "+u.value("until", ms(until)), u.name(AttrUpdatedAt)+" = "+now)
	u.add = append(u.add, u.name(AttrProbes)+" "+u.value("one", ddbitem.N(1)))
	return d.run(ctx, "probe", dest, u, func(s State) error {
		if s.IsPaused() {
			return ErrProbeBusy
		}
		return ErrChanged
	})
}

// FinishProbe records a probe's result on a paused lane.
func (d *DynamoDB) FinishProbe(ctx context.Context, dest string, r ProbeResult) error {
	u := newUpdate()
	u.cond = u.name(AttrMode) + " = " + u.value("paused", ddbitem.S(string(Paused)))
	at := u.value("at", ms(r.At))
	u.set = append(u.set,
		u.name(AttrLastProbeAt)+" = "+at,
		u.name(AttrLastProbeStatus)+" = "+u.value("status", ddbitem.N(int64(r.Status))),
		u.name(AttrLastProbeError)+" = "+u.value("error", ddbitem.S(dedupe.ShortError(r.Error))),
		u.name(AttrUpdatedAt)+" = "+at,
	)
	u.remove = append(u.remove, u.name(AttrProbeUntil))
	_, err := d.run(ctx, "probe", dest, u, changed)
	return err
}

// decodeState reads a lane item; a missing item is an active lane.
// Missing attributes stay zero; one of the wrong type is an error.
func decodeState(dest string, item map[string]types.AttributeValue) (State, error) {
	s := State{Destination: dest, Mode: Active}
	it := ddbitem.NewReader(item)
	getT := func(name string) time.Time {
		if n := it.Int(name); n != 0 {
			return time.UnixMilli(n)
		}
		return time.Time{}
	}
	if m := it.String(AttrMode); m != "" {
		s.Mode = Mode(m)
	}
	if s.Mode != Active && s.Mode != Paused {
		it.Fail(fmt.Errorf("attribute %s: %q is neither %s nor %s", AttrMode, s.Mode, Active, Paused))
	}
	s.Version = it.Int(AttrVersion)
	s.PausedAt, s.ResumeBy = getT(AttrPausedAt), getT(AttrResumeBy)
	s.Reason, s.By = it.String(AttrReason), By(it.String(AttrPausedBy))
	s.Failures = int(it.Int(AttrFailures))
	s.Probes = int(it.Int(AttrProbes))
	s.ProbeUntil, s.LastProbeAt = getT(AttrProbeUntil), getT(AttrLastProbeAt)
	s.LastProbeStatus, s.LastProbeError = int(it.Int(AttrLastProbeStatus)), it.String(AttrLastProbeError)
	s.ResumedAt, s.ResumeReason, s.ResumedBy = getT(AttrResumedAt), it.String(AttrResumeReason), By(it.String(AttrResumedBy))
	s.UpdatedAt = getT(AttrUpdatedAt)
	switch v := item[AttrPauses].(type) {
	case nil:
	case *types.AttributeValueMemberL:
		for _, e := range v.Value {
			m, ok := e.(*types.AttributeValueMemberM)
			if !ok {
				it.Fail(fmt.Errorf("attribute %s: want a list of maps", AttrPauses))
				continue
			}
			s.Pauses = append(s.Pauses, Interval{From: time.UnixMilli(it.Number(AttrPauses+".from", m.Value["from"])), To: time.UnixMilli(it.Number(AttrPauses+".to", m.Value["to"]))})
		}
	default:
		it.Fail(fmt.Errorf("attribute %s: want a list", AttrPauses))
	}
	windows := map[int64]*Window{}
	for name, av := range item {
		rest, ok := strings.CutPrefix(name, windowPrefix)
		if !ok || len(rest) < 3 || rest[len(rest)-2] != '_' {
			continue
		}
		idx, err := strconv.ParseInt(rest[:len(rest)-2], 10, 64)
		if err != nil {
			continue
		}
		w := windows[idx]
		if w == nil {
			w = &Window{Index: idx}
			windows[idx] = w
		}
		switch rest[len(rest)-1] {
		case 'a':
			w.Attempts = int(it.Number(name, av))
		case 'f':
			w.Failures = int(it.Number(name, av))
		}
	}
	for _, w := range windows {
		s.Windows = append(s.Windows, *w)
	}
	sortWindows(s.Windows)
	return s, it.Err()
}
