package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// fakeDynamo records the calls and answers with canned results.
type fakeDynamo struct {
	updates []*dynamodb.UpdateItemInput
	gets    int
	update  func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error)
	item    map[string]types.AttributeValue
}

func (f *fakeDynamo) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.updates = append(f.updates, in)
	return f.update(in)
}

func (f *fakeDynamo) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	f.gets++
	if !aws.ToBool(in.ConsistentRead) {
		return nil, errors.New("want a consistent read")
	}
	return &dynamodb.GetItemOutput{Item: f.item}, nil
}

// sdkError wraps err the way the SDK returns service errors.
func sdkError(err error) error {
	return &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem", Err: err}
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
	used := map[string]bool{}
	for _, e := range []*string{in.UpdateExpression, in.ConditionExpression} {
		for _, p := range placeholder.FindAllString(aws.ToString(e), -1) {
			used[p] = true
		}
	}
	var defined []string
	for k := range in.ExpressionAttributeNames {
		defined = append(defined, k)
	}
	for k := range in.ExpressionAttributeValues {
		defined = append(defined, k)
	}
	var usedList []string
	for k := range used {
		usedList = append(usedList, k)
	}
	slices.Sort(defined)
	slices.Sort(usedList)
	if diff := cmp.Diff(usedList, defined); diff != "" {
		t.Errorf("placeholders used vs defined (-used +defined):\n%s", diff)
	}
}

func TestDynamoDBClaimInput(t *testing.T) {
	f := &fakeDynamo{update: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{Attributes: item("pk", "orders#e1", "status", "IN_PROGRESS", "attempts", int64(3))}, nil
	}}
	s := dedupe.NewDynamoDB(f, "deliveries")
	in := claimAt("orders#e1", t0, 40*time.Second)
	lease, err := s.Claim(context.Background(), in)
	if err != nil {
		t.Fatal(err)
	}
	if lease.Attempts != 3 || lease.Token == "" || !lease.Until.Equal(in.LeaseUntil) || lease.PK != "orders#e1" {
		t.Errorf("lease = %+v, want attempts 3, a token, until %s", lease, in.LeaseUntil)
	}
	if len(f.updates) != 1 {
		t.Fatalf("%d UpdateItem calls, want exactly 1", len(f.updates))
	}
	got := f.updates[0]
	checkExpressions(t, got)
	if aws.ToString(got.TableName) != "deliveries" {
		t.Errorf("table = %q", aws.ToString(got.TableName))
	}
	if got.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
		t.Errorf("ReturnValuesOnConditionCheckFailure = %q, want ALL_OLD", got.ReturnValuesOnConditionCheckFailure)
	}
	wantValues := map[string]string{
		":now":     fmt.Sprint(t0.UnixMilli()),
		":until":   fmt.Sprint(t0.Add(40 * time.Second).UnixMilli()),
		":expires": fmt.Sprint(t0.Add(30 * 24 * time.Hour).Unix()),
		":token":   lease.Token,
		":source":  "stripe",
		":type":    "invoice.paid",
	}
	for k, want := range wantValues {
		var gotV string
		switch v := got.ExpressionAttributeValues[k].(type) {
		case *types.AttributeValueMemberS:
			gotV = v.Value
		case *types.AttributeValueMemberN:
			gotV = v.Value
		}
		if gotV != want {
			t.Errorf("value %s = %q, want %q", k, gotV, want)
		}
	}
	if pk := got.Key["pk"].(*types.AttributeValueMemberS).Value; pk != "orders#e1" {
		t.Errorf("key pk = %q", pk)
	}
}

func TestDynamoDBClaimRefused(t *testing.T) {
	until := t0.Add(20 * time.Second)
	tests := []struct {
		name     string
		old      map[string]types.AttributeValue // returned with the failure
		stored   map[string]types.AttributeValue // returned by GetItem
		want     error
		wantGets int
	}{
		{"delivered", item("pk", "orders#e1", "status", "DELIVERED"), nil, dedupe.ErrDuplicate, 0},
		{"gone", item("pk", "orders#e1", "status", "GONE", "last_status", int64(410)), nil, dedupe.ErrGone, 0},
		{"live lease", item("pk", "orders#e1", "status", "IN_PROGRESS", "lease_until", until.UnixMilli()), nil, dedupe.ErrInFlight, 0},
		{"no ALL_OLD from the endpoint", nil, item("pk", "orders#e1", "status", "DELIVERED"), dedupe.ErrDuplicate, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDynamo{item: tt.stored, update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
				return nil, sdkError(&types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: tt.old})
			}}
			_, err := dedupe.NewDynamoDB(f, "deliveries").Claim(context.Background(), claimAt("orders#e1", t0, time.Minute))
			if !errors.Is(err, tt.want) {
				t.Fatalf("Claim error = %v, want %v", err, tt.want)
			}
			if f.gets != tt.wantGets {
				t.Errorf("%d GetItem calls, want %d", f.gets, tt.wantGets)
			}
			var refused *dedupe.RefusedError
			if !errors.As(err, &refused) {
				t.Fatalf("Claim error %v is not a *RefusedError", err)
			}
			if tt.want == dedupe.ErrInFlight && !refused.LeaseUntil.Equal(until) {
				t.Errorf("LeaseUntil = %s, want %s", refused.LeaseUntil, until)
			}
		})
	}
}

func TestDynamoDBClaimOtherError(t *testing.T) {
	boom := errors.New("throttled")
	f := &fakeDynamo{update: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) { return nil, sdkError(boom) }}
	_, err := dedupe.NewDynamoDB(f, "t").Claim(context.Background(), claimAt("orders#e1", t0, time.Minute))
	if !errors.Is(err, boom) || errors.Is(err, dedupe.ErrInFlight) || errors.Is(err, dedupe.ErrDuplicate) {
		t.Fatalf("Claim error = %v, want the service error, not a refusal", err)
	}
}

// TestDynamoDBHistoryRoundTrip: a finish writes the claim's history with
// the attempt appended, and the replay it ended; what it writes reads back
// as the record the memory store keeps.
func TestDynamoDBHistoryRoundTrip(t *testing.T) {
	var written map[string]types.AttributeValue
	f := &fakeDynamo{update: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		written = in.ExpressionAttributeValues
		return &dynamodb.UpdateItemOutput{}, nil
	}}
	earlier := dedupe.Attempt{At: t0.Add(-time.Hour), Outcome: dedupe.StatusDelivered, HTTPStatus: 204, Latency: 12 * time.Millisecond, ClaimedBy: "req-0"}
	lease := dedupe.Lease{PK: "orders#e1", Token: "tok", At: t0, Replay: "rpl_2", ClaimedBy: "req-1",
		History: []dedupe.Attempt{earlier}, Replays: []string{"rpl_1"}}
	out := dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 200, At: t0.Add(time.Second), Latency: 345 * time.Millisecond, Batch: "batch_0f"}
	if err := dedupe.NewDynamoDB(f, "t").Finish(context.Background(), lease, out); err != nil {
		t.Fatal(err)
	}
	f.item = map[string]types.AttributeValue{"pk": item("pk", "orders#e1")["pk"], "history": written[":history"], "replays": written[":replays"]}
	got, _, err := dedupe.NewDynamoDB(f, "t").Get(context.Background(), "orders#e1")
	if err != nil {
		t.Fatal(err)
	}
	wantHistory := []dedupe.Attempt{earlier, {At: t0, Outcome: dedupe.StatusDelivered, HTTPStatus: 200, Latency: 345 * time.Millisecond, ClaimedBy: "req-1", Replay: "rpl_2", Batch: "batch_0f"}}
	if diff := cmp.Diff(wantHistory, got.History); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"rpl_1", "rpl_2"}, got.Replays); diff != "" {
		t.Errorf("replays (-want +got):\n%s", diff)
	}

	// Items that are not a record are refused, naming the attribute.
	for name, bad := range map[string]map[string]types.AttributeValue{
		"history not a list":  {"history": &types.AttributeValueMemberS{Value: "x"}},
		"entry not a map":     {"history": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberS{Value: "x"}}}},
		"entry time":          {"history": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: item("at", "yesterday")}}}},
		"replay not a string": {"replays": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberN{Value: "1"}}}},
		"answer not binary":   {"history": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: item("answer", "text")}}}},
	} {
		f.item = bad
		if _, _, err := dedupe.NewDynamoDB(f, "t").Get(context.Background(), "orders#e1"); err == nil {
			t.Errorf("%s: read without an error", name)
		}
	}
}

func TestDynamoDBGet(t *testing.T) {
	tests := []struct {
		name    string
		item    map[string]types.AttributeValue
		want    dedupe.Record
		wantOK  bool
		wantErr bool
	}{
		{name: "missing", item: nil},
		{
			name: "full",
			item: item("pk", "orders#e1", "status", "DELIVERED", "attempts", int64(2), "last_status", int64(204),
				"first_attempt_at", "2026-11-30T12:00:00.000Z", "delivered_at", "2026-11-30T12:01:00.500Z",
				"source", "stripe", "type", "invoice.paid", "expires_at", t0.Unix()),
			want: dedupe.Record{PK: "orders#e1", Status: dedupe.StatusDelivered, Attempts: 2, LastStatus: 204,
				FirstAttemptAt: t0, DeliveredAt: t0.Add(time.Minute + 500*time.Millisecond), Source: "stripe", Type: "invoice.paid",
				ExpiresAt: time.Unix(t0.Unix(), 0)},
			wantOK: true,
		},
		{name: "wrong type", item: item("pk", "orders#e1", "attempts", "two"), wantErr: true},
		{name: "bad number", item: map[string]types.AttributeValue{"lease_until": &types.AttributeValueMemberN{Value: "1.5"}}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeDynamo{item: tt.item}
			got, ok, err := dedupe.NewDynamoDB(f, "t").Get(context.Background(), "orders#e1")
			if (err != nil) != tt.wantErr {
				t.Fatalf("Get error = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if ok != tt.wantOK {
				t.Errorf("ok = %v, want %v", ok, tt.wantOK)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("record (-want +got):\n%s", diff)
			}
		})
	}
}

// itemSize estimates a DynamoDB item's size as DynamoDB bills it: each
// attribute name plus its value (strings and numbers by length, maps and
// lists 3 bytes plus their contents).
func itemSize(m map[string]types.AttributeValue) int {
	n := 0
	for k, v := range m {
		n += len(k) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return len(x.Value)/2 + 1
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += 1 + valueSize(e)
		}
		return n
	case *types.AttributeValueMemberM:
		return 3 + itemSize(x.Value)
	}
	return 0
}

// TestRecordSizeIsBounded: a record at every bound (10 attempts with the
// longest error, claimer, replay id and receiver's answer, 10 replays, the
// longest last error) stays under 10 KB, and under 5 KB without the
// answers; one delivered at its first attempt, under 1 KB (one write
// unit).
func TestRecordSizeIsBounded(t *testing.T) {
	var written map[string]types.AttributeValue
	f := &fakeDynamo{update: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		written = in.ExpressionAttributeValues
		return &dynamodb.UpdateItemOutput{}, nil
	}}
	base := map[string]types.AttributeValue{
		"pk": &types.AttributeValueMemberS{Value: strings.Repeat("d", 64) + "#evt_" + strings.Repeat("0", 32)}, "status": &types.AttributeValueMemberS{Value: "DELIVERED"},
		"attempts": &types.AttributeValueMemberN{Value: "10"}, "last_status": &types.AttributeValueMemberN{Value: "500"},
		"last_error":       &types.AttributeValueMemberS{Value: strings.Repeat("e", dedupe.MaxErrorLen)},
		"first_attempt_at": &types.AttributeValueMemberS{Value: "2026-11-30T12:00:00.000Z"}, "delivered_at": &types.AttributeValueMemberS{Value: "2026-11-30T12:00:00.000Z"},
		"source": &types.AttributeValueMemberS{Value: strings.Repeat("s", 64)}, "type": &types.AttributeValueMemberS{Value: strings.Repeat("t", 256)},
		"expires_at": &types.AttributeValueMemberN{Value: "1798000000"},
	}
	replay := "rpl_" + strings.Repeat("r", 60)
	full := dedupe.Attempt{At: t0, Outcome: dedupe.StatusFailed, HTTPStatus: 500, Latency: 10 * time.Second,
		Error: strings.Repeat("e", dedupe.MaxHistoryErrorLen), ClaimedBy: strings.Repeat("b", dedupe.MaxClaimedByLen), Replay: replay,
		Answer: make([]byte, dedupe.MaxAnswer)}
	var history []dedupe.Attempt
	var replays []string
	for range dedupe.MaxHistory {
		history = append(history, full)
	}
	for range dedupe.MaxReplays {
		replays = append(replays, replay)
	}
	lease := dedupe.Lease{PK: "p", Token: "tok", At: t0, Replay: replay, ClaimedBy: full.ClaimedBy, History: history, Replays: replays[1:]}
	for _, c := range []struct {
		name   string
		answer []byte
		bound  int
	}{{"with answers", make([]byte, 2*dedupe.MaxAnswer), 10 << 10}, {"without answers", nil, 5 << 10}} {
		lease.History = slices.Clone(history)
		for i := range lease.History {
			lease.History[i].Answer = c.answer[:min(len(c.answer), dedupe.MaxAnswer)] // as a finish kept it
		}
		if err := dedupe.NewDynamoDB(f, "t").Finish(context.Background(), lease, dedupe.Outcome{Status: dedupe.StatusDead, HTTPStatus: 500, Error: full.Error, At: t0, Answer: c.answer}); err != nil {
			t.Fatal(err)
		}
		worst := maps.Clone(base)
		worst["history"], worst["replays"] = written[":history"], written[":replays"]
		worst["next_attempt_at"] = &types.AttributeValueMemberS{Value: "2026-11-30T12:00:00.000Z"}
		if n := itemSize(worst); n >= c.bound {
			t.Errorf("a record at every bound (%s) is %d bytes, want under %d", c.name, n, c.bound)
		} else {
			t.Logf("a record at every bound (%s): %d bytes", c.name, n)
		}
	}

	lease = dedupe.Lease{PK: "p", Token: "tok", At: t0, ClaimedBy: "0123456789abcdef0123456789abcdef"}
	if err := dedupe.NewDynamoDB(f, "t").Finish(context.Background(), lease, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 204, At: t0, Latency: 80 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	first := maps.Clone(base)
	delete(first, "last_error")
	first["source"], first["type"] = &types.AttributeValueMemberS{Value: "stripe"}, &types.AttributeValueMemberS{Value: "payment_intent.succeeded"}
	first["pk"] = &types.AttributeValueMemberS{Value: "orders#evt_" + strings.Repeat("0", 32)}
	first["history"], first["replays"] = written[":history"], written[":replays"]
	if n := itemSize(first); n >= 1024 {
		t.Errorf("a record delivered at its first attempt is %d bytes, want under 1 KB", n)
	} else {
		t.Logf("a record delivered at its first attempt: %d bytes", n)
	}
}
