package replayguard_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/replayguard"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

// fakeDynamo answers each UpdateItem with the next canned answer and
// records the inputs.
type fakeDynamo struct {
	updates []*dynamodb.UpdateItemInput
	answers []error
	item    map[string]types.AttributeValue
}

func (f *fakeDynamo) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.updates = append(f.updates, in)
	var err error
	if len(f.answers) > 0 {
		err, f.answers = f.answers[0], f.answers[1:]
	}
	if err != nil {
		return nil, err
	}
	return &dynamodb.UpdateItemOutput{}, nil
}

func (f *fakeDynamo) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if !aws.ToBool(in.ConsistentRead) {
		return nil, errors.New("want a consistent read")
	}
	return &dynamodb.GetItemOutput{Item: f.item}, nil
}

// refusal is a conditional check failure as the SDK returns it, with the
// record as it was.
func refusal(old map[string]types.AttributeValue) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem",
		Err: &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: old}}
}

func item(kv ...any) map[string]types.AttributeValue {
	m := map[string]types.AttributeValue{}
	for i := 0; i < len(kv); i += 2 {
		switch v := kv[i+1].(type) {
		case string:
			m[kv[i].(string)] = &types.AttributeValueMemberS{Value: v}
		case int64:
			m[kv[i].(string)] = &types.AttributeValueMemberN{Value: fmt.Sprint(v)}
		}
	}
	return m
}

var placeholder = regexp.MustCompile(`[#:][a-z_]+`)

// checkExpressions applies DynamoDB's own validation: every placeholder an
// expression uses is defined, and every definition is used.
func checkExpressions(t *testing.T, in *dynamodb.UpdateItemInput) {
	t.Helper()
	var used, defined []string
	for _, e := range []*string{in.UpdateExpression, in.ConditionExpression} {
		for _, p := range placeholder.FindAllString(aws.ToString(e), -1) {
			if !slices.Contains(used, p) {
				used = append(used, p)
			}
		}
	}
	for k := range in.ExpressionAttributeNames {
		defined = append(defined, k)
	}
	for k := range in.ExpressionAttributeValues {
		defined = append(defined, k)
	}
	slices.Sort(used)
	slices.Sort(defined)
	if diff := cmp.Diff(used, defined); diff != "" {
		t.Errorf("placeholders used vs defined (-used +defined):\n%s", diff)
	}
}

func values(in *dynamodb.UpdateItemInput) map[string]string {
	out := map[string]string{}
	for k, v := range in.ExpressionAttributeValues {
		switch v := v.(type) {
		case *types.AttributeValueMemberS:
			out[k] = v.Value
		case *types.AttributeValueMemberN:
			out[k] = v.Value
		}
	}
	return out
}

const key = "replay:github:00ff"

var original = replayguard.Event{ID: "evt_original", Type: "push", ContentType: "application/json"}

func claimIn(now time.Time) replayguard.ClaimInput {
	return replayguard.ClaimInput{Key: key, Source: "github", Event: replayguard.Event{ID: "evt_copy", Type: "release", ContentType: "text/plain"},
		Now: now, LeaseUntil: now.Add(10 * time.Second), ExpiresAt: now.Add(7 * 24 * time.Hour)}
}

// stored is the item of the original's record.
func stored(status replayguard.Status, leaseUntil time.Time, token string) map[string]types.AttributeValue {
	m := item("pk", key, "status", string(status), "event_id", original.ID, "type", original.Type, "content_type", original.ContentType,
		"source", "github", "first_seen_at", "2026-11-30T11:00:00.000Z", "expires_at", t0.Add(24*time.Hour).Unix())
	if token != "" {
		m["lease_token"] = &types.AttributeValueMemberS{Value: token}
		m["lease_until"] = &types.AttributeValueMemberN{Value: fmt.Sprint(leaseUntil.UnixMilli())}
	}
	return m
}

// TestDynamoDBClaimInput: a new request is one conditional UpdateItem that
// asks for the old record on refusal. That its condition creates the
// record only when it is missing or expired is run against DynamoDB by
// replayguardtest.Run (integration/replayguard_test.go).
func TestDynamoDBClaimInput(t *testing.T) {
	f := &fakeDynamo{}
	in := claimIn(t0)
	l, err := replayguard.NewDynamoDB(f, "records").Claim(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if l.Key != key || l.Token == "" || l.Takeover || l.Event != in.Event {
		t.Errorf("lease = %+v", l)
	}
	if len(f.updates) != 1 {
		t.Fatalf("%d UpdateItem calls, want exactly 1", len(f.updates))
	}
	got := f.updates[0]
	checkExpressions(t, got)
	if aws.ToString(got.TableName) != "records" || got.Key["pk"].(*types.AttributeValueMemberS).Value != key {
		t.Errorf("table %q key %v", aws.ToString(got.TableName), got.Key)
	}
	if got.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Errorf("ReturnValuesOnConditionCheckFailure = %q, want ALL_OLD", got.ReturnValuesOnConditionCheckFailure)
	}
	want := map[string]string{
		":pending": "PENDING", ":event_id": "evt_copy", ":type": "release", ":content_type": "text/plain", ":source": "github",
		":token": l.Token, ":until": fmt.Sprint(t0.Add(10 * time.Second).UnixMilli()), ":now_text": "2026-11-30T12:00:00.000Z",
		":now_s": fmt.Sprint(t0.Unix()), ":expires": fmt.Sprint(t0.Add(7 * 24 * time.Hour).Unix()),
	}
	if diff := cmp.Diff(want, values(got)); diff != "" {
		t.Errorf("values (-want +got):\n%s", diff)
	}
}

// TestDynamoDBClaimRefused: what each refusal comes to.
func TestDynamoDBClaimRefused(t *testing.T) {
	now := t0
	throttled := errors.New("throttled")
	tests := []struct {
		name         string
		answers      []error
		wantErr      error // nil: a lease
		wantTakeover bool
		wantCalls    int
	}{
		{"published: a replay", []error{refusal(stored(replayguard.StatusPublished, time.Time{}, ""))}, replayguard.ErrReplay, false, 1},
		{"pending under a live lease", []error{refusal(stored(replayguard.StatusPending, now.Add(time.Second), "old"))}, replayguard.ErrInFlight, false, 1},
		{"pending, lease ended: taken over", []error{refusal(stored(replayguard.StatusPending, now.Add(-time.Second), "old")), nil}, nil, true, 2},
		{"released: taken over", []error{refusal(stored(replayguard.StatusPending, time.UnixMilli(0), "old")), nil}, nil, true, 2},
		{"takeover lost to a publish", []error{refusal(stored(replayguard.StatusPending, now.Add(-time.Second), "old")), refusal(stored(replayguard.StatusPublished, time.Time{}, ""))}, replayguard.ErrReplay, false, 2},
		{"takeover lost to another takeover", []error{refusal(stored(replayguard.StatusPending, now.Add(-time.Second), "old")), refusal(stored(replayguard.StatusPending, now.Add(9*time.Second), "other"))}, replayguard.ErrInFlight, false, 2},
		{"takeover throttled", []error{refusal(stored(replayguard.StatusPending, now.Add(-time.Second), "old")), throttled}, throttled, false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDynamo{answers: tt.answers}
			l, err := replayguard.NewDynamoDB(f, "records").Claim(context.Background(), claimIn(now))
			if len(f.updates) != tt.wantCalls {
				t.Errorf("%d UpdateItem calls, want %d", len(f.updates), tt.wantCalls)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Claim = %v, want %v", err, tt.wantErr)
				}
				var seen *replayguard.SeenError
				if errors.As(err, &seen) && seen.Event != original {
					t.Errorf("refusal carries %+v, want the original's %+v", seen.Event, original)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Takeover != tt.wantTakeover || l.Event != original {
				t.Errorf("lease = %+v, want a takeover publishing the original", l)
			}
			take := f.updates[1]
			checkExpressions(t, take)
			if v := values(take); v[":old_token"] != "old" || v[":token"] != l.Token || v[":now"] != fmt.Sprint(now.UnixMilli()) {
				t.Errorf("takeover values = %v", v)
			}
		})
	}
}

// TestDynamoDBClaimFailsClosed: an outage, a refusal without the record
// and an unreadable record are errors that are neither a replay nor in
// flight, so ingest never answers them 202.
func TestDynamoDBClaimFailsClosed(t *testing.T) {
	outage := &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem", Err: &types.ResourceNotFoundException{Message: aws.String("no table")}}
	tests := []struct {
		name   string
		answer error
	}{
		{"service error", outage},
		{"refused without ALL_OLD", refusal(nil)},
		{"unknown status", refusal(item("pk", key, "status", "DELIVERED", "event_id", "evt_x"))},
		{"no event id", refusal(item("pk", key, "status", "PUBLISHED"))},
		{"lease not a number", refusal(map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}, "status": &types.AttributeValueMemberS{Value: "PENDING"},
			"event_id": &types.AttributeValueMemberS{Value: "e"}, "lease_until": &types.AttributeValueMemberS{Value: "soon"}})},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDynamo{answers: []error{tt.answer}}
			_, err := replayguard.NewDynamoDB(f, "records").Claim(context.Background(), claimIn(t0))
			if err == nil || errors.Is(err, replayguard.ErrReplay) || errors.Is(err, replayguard.ErrInFlight) {
				t.Fatalf("Claim = %v, want an error that is no refusal", err)
			}
			if len(f.updates) != 1 {
				t.Errorf("%d UpdateItem calls, want 1", len(f.updates))
			}
		})
	}
	f := &fakeDynamo{answers: []error{outage}}
	_, err := replayguard.NewDynamoDB(f, "records").Claim(context.Background(), claimIn(t0))
	if rnf := new(types.ResourceNotFoundException); !errors.As(err, &rnf) {
		t.Errorf("the service error is not kept for errors.As: %v", err)
	}
}

// TestDynamoDBConfirmRelease: confirm and release send the lease's token
// and come back as ErrLeaseLost when refused. What their expressions do
// is run against DynamoDB by replayguardtest.Run
// (integration/replayguard_test.go).
func TestDynamoDBConfirmRelease(t *testing.T) {
	l := replayguard.Lease{Key: key, Token: "tok", Event: original}
	tests := []struct {
		name       string
		call       func(*replayguard.DynamoDB) error
		answer     error
		wantErr    error
		wantValues map[string]string
	}{
		{
			name: "confirm", call: func(s *replayguard.DynamoDB) error { return s.Confirm(context.Background(), l, t0) },
			wantValues: map[string]string{":token": "tok", ":published": "PUBLISHED", ":at_text": "2026-11-30T12:00:00.000Z"},
		},
		{
			name: "confirm, lease lost", call: func(s *replayguard.DynamoDB) error { return s.Confirm(context.Background(), l, t0) },
			answer: refusal(nil), wantErr: replayguard.ErrLeaseLost,
			wantValues: map[string]string{":token": "tok", ":published": "PUBLISHED", ":at_text": "2026-11-30T12:00:00.000Z"},
		},
		{
			name: "release", call: func(s *replayguard.DynamoDB) error { return s.Release(context.Background(), l) },
			wantValues: map[string]string{":token": "tok", ":pending": "PENDING", ":zero": "0"},
		},
		{
			name: "release, lease lost", call: func(s *replayguard.DynamoDB) error { return s.Release(context.Background(), l) },
			answer: refusal(nil), wantErr: replayguard.ErrLeaseLost,
			wantValues: map[string]string{":token": "tok", ":pending": "PENDING", ":zero": "0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDynamo{answers: []error{tt.answer}}
			err := tt.call(replayguard.NewDynamoDB(f, "records"))
			if !errors.Is(err, tt.wantErr) || (err != nil) != (tt.wantErr != nil) {
				t.Fatalf("error = %v, want %v", err, tt.wantErr)
			}
			in := f.updates[0]
			checkExpressions(t, in)
			if diff := cmp.Diff(tt.wantValues, values(in)); diff != "" {
				t.Errorf("values (-want +got):\n%s", diff)
			}
		})
	}
	boom := errors.New("throttled")
	f := &fakeDynamo{answers: []error{boom}}
	if err := replayguard.NewDynamoDB(f, "records").Confirm(context.Background(), l, t0); !errors.Is(err, boom) || errors.Is(err, replayguard.ErrLeaseLost) {
		t.Errorf("Confirm = %v, want the service error", err)
	}
}

func TestDynamoDBGet(t *testing.T) {
	f := &fakeDynamo{item: stored(replayguard.StatusPending, t0.Add(time.Second), "tok")}
	got, ok, err := replayguard.NewDynamoDB(f, "records").Get(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	want := replayguard.Record{Key: key, Status: replayguard.StatusPending, Event: original, Source: "github", LeaseToken: "tok",
		LeaseUntil: t0.Add(time.Second), FirstSeenAt: t0.Add(-time.Hour), ExpiresAt: time.Unix(t0.Add(24*time.Hour).Unix(), 0)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
	if _, ok, err := replayguard.NewDynamoDB(&fakeDynamo{}, "records").Get(context.Background(), key); ok || err != nil {
		t.Errorf("missing record: %v, %v", ok, err)
	}
}
