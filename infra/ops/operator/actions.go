package operator

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
)

// Action is one thing an operator did to the stack through the console
// or the command line: who (their AWS identity), when, what, and how it
// ended.
type Action struct {
	At time.Time
	// Identity is the operator's AWS identity (STS GetCallerIdentity's ARN).
	Identity string
	// Kind is "replay", "replay-many", "redrive", "pause" or "resume"
	// (the console's), or the command line's command ("pace", "reconcile"
	// besides those).
	Kind        string
	Destination string
	// Detail is what was asked (the event, the filter, the reason) and
	// Result what came of it; Failed marks an action that ended in error.
	Detail, Result string
	Failed         bool
}

// Bounds of an action as the log keeps it.
const (
	maxActionText = 400
	// ActionDays is how long the log keeps an action (the items' TTL).
	ActionDays = 90
)

// ActionLog keeps the operators' actions.
type ActionLog interface {
	Record(ctx context.Context, a Action) error
	// Since lists the actions recorded from since, newest first.
	Since(ctx context.Context, since time.Time) ([]Action, error)
}

// ActionItemAPI is the part of the DynamoDB client the action log uses.
type ActionItemAPI interface {
	UpdateItem(ctx context.Context, in *dynamodb.UpdateItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error)
	GetItem(ctx context.Context, in *dynamodb.GetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error)
}

// ActionTable keeps the actions in the record table, one item a UTC day
// (".actions#2026-12-03": no destination's key starts with "."), each
// action appended to its list, kept ActionDays.
type ActionTable struct {
	API   ActionItemAPI
	Table string
}

// ActionKey is the partition key of day's actions.
func ActionKey(day time.Time) string { return ".actions#" + day.UTC().Format("2006-01-02") }

const actionLayout = "2006-01-02T15:04:05.000Z07:00"

// Record appends a to its day's item.
func (t ActionTable) Record(ctx context.Context, a Action) error {
	failed := "0"
	if a.Failed {
		failed = "1"
	}
	entry := &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{
		"at": ddbitem.S(a.At.UTC().Format(actionLayout)), "identity": ddbitem.S(clip(a.Identity)), "kind": ddbitem.S(a.Kind),
		"destination": ddbitem.S(a.Destination), "detail": ddbitem.S(clip(a.Detail)), "result": ddbitem.S(clip(a.Result)),
		"failed": &types.AttributeValueMemberN{Value: failed},
	}}
	_, err := t.API.UpdateItem(ctx, &dynamodb.UpdateItemInput{
		TableName:                &t.Table,
		Key:                      ddbitem.Key(ActionKey(a.At)),
		UpdateExpression:         aws.String("SET #actions = list_append(if_not_exists(#actions, :empty), :a), #exp = :exp"),
		ExpressionAttributeNames: map[string]string{"#actions": "actions", "#exp": ddbitem.ExpiresAt},
		ExpressionAttributeValues: map[string]types.AttributeValue{
			":a": &types.AttributeValueMemberL{Value: []types.AttributeValue{entry}}, ":empty": &types.AttributeValueMemberL{},
			":exp": ddbitem.N(a.At.Add(ActionDays * 24 * time.Hour).Unix()),
		},
	})
	if err != nil {
		return fmt.Errorf("record the action in %s: %w", t.Table, err)
	}
	return nil
}

// Since reads the days from since to now, newest first.
func (t ActionTable) Since(ctx context.Context, since time.Time) ([]Action, error) {
	var out []Action
	now := time.Now().UTC()
	for day := now; !day.Before(since.UTC().Truncate(24 * time.Hour)); day = day.Add(-24 * time.Hour) {
		got, err := t.API.GetItem(ctx, &dynamodb.GetItemInput{TableName: &t.Table, Key: ddbitem.Key(ActionKey(day))})
		if err != nil {
			return out, fmt.Errorf("read the actions of %s: %w", day.Format("2006-01-02"), err)
		}
		list, _ := got.Item["actions"].(*types.AttributeValueMemberL)
		if list == nil {
			continue
		}
		r := ddbitem.NewReader(got.Item)
		var daily []Action
		for _, v := range list.Value {
			m, ok := v.(*types.AttributeValueMemberM)
			if !ok {
				continue
			}
			e := ddbitem.NewMapReader(m.Value)
			a := Action{At: e.Time("at"), Identity: e.String("identity"), Kind: e.String("kind"), Destination: e.String("destination"),
				Detail: e.String("detail"), Result: e.String("result"), Failed: e.Int("failed") == 1}
			if err := e.Err(); err != nil {
				r.Fail(err)
				continue
			}
			if !a.At.Before(since) {
				daily = append(daily, a)
			}
		}
		if err := r.Err(); err != nil {
			return out, fmt.Errorf("read the actions of %s: %w", day.Format("2006-01-02"), err)
		}
		slices.Reverse(daily)
		out = append(out, daily...)
	}
	return out, nil
}

// clip bounds a text the log keeps, on a rune boundary.
func clip(s string) string {
	if len(s) <= maxActionText {
		return s
	}
	cut := maxActionText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// MemoryActions is an action log in memory, for tests.
type MemoryActions struct {
	mu      sync.Mutex
	actions []Action
}

// Record keeps a.
func (m *MemoryActions) Record(_ context.Context, a Action) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.actions = append(m.actions, a)
	return nil
}

// Since lists the actions kept from since, newest first.
func (m *MemoryActions) Since(_ context.Context, since time.Time) ([]Action, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Action
	for i := len(m.actions) - 1; i >= 0; i-- {
		if !m.actions[i].At.Before(since) {
			out = append(out, m.actions[i])
		}
	}
	return out, nil
}
