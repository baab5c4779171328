package pausing_test

import (
	"context"
	"errors"
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
	"github.com/hookfan/hookfan/shared/pausing"
)

// fakeDynamo records UpdateItem calls and answers with canned results.
type fakeDynamo struct {
	updates []*dynamodb.UpdateItemInput
	answer  func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error)
	item    map[string]types.AttributeValue
}

func (f *fakeDynamo) UpdateItem(_ context.Context, in *dynamodb.UpdateItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.UpdateItemOutput, error) {
	f.updates = append(f.updates, in)
	if f.answer == nil {
		return &dynamodb.UpdateItemOutput{}, nil
	}
	return f.answer(in)
}

func (f *fakeDynamo) GetItem(_ context.Context, in *dynamodb.GetItemInput, _ ...func(*dynamodb.Options)) (*dynamodb.GetItemOutput, error) {
	if !aws.ToBool(in.ConsistentRead) {
		return nil, errors.New("want a consistent read")
	}
	return &dynamodb.GetItemOutput{Item: f.item}, nil
}

var placeholder = regexp.MustCompile(`[#:][a-z_0-9]+`)

// checkExpression applies DynamoDB's own rules: every placeholder used is
// defined and every definition used; no attribute is both set and added.
func checkExpression(t *testing.T, in *dynamodb.UpdateItemInput) {
	t.Helper()
	used := map[string]bool{}
	for _, e := range []*string{in.UpdateExpression, in.ConditionExpression} {
		for _, p := range placeholder.FindAllString(aws.ToString(e), -1) {
			used[p] = true
		}
	}
	var defined, usedList []string
	for k := range in.ExpressionAttributeNames {
		defined = append(defined, k)
	}
	for k := range in.ExpressionAttributeValues {
		defined = append(defined, k)
	}
	for k := range used {
		usedList = append(usedList, k)
	}
	slices.Sort(defined)
	slices.Sort(usedList)
	if diff := cmp.Diff(defined, usedList); diff != "" {
		t.Errorf("placeholders defined vs used (-defined +used):\n%s\nexpression: %s", diff, aws.ToString(in.UpdateExpression))
	}
	if got := aws.ToString(in.TableName); got != "records" {
		t.Errorf("table %q", got)
	}
	if pk := in.Key["pk"].(*types.AttributeValueMemberS).Value; pk != "orders#.lane" {
		t.Errorf("key %q, want orders#.lane", pk)
	}
}

func n(v string) types.AttributeValue { return &types.AttributeValueMemberN{Value: v} }
func s(v string) types.AttributeValue { return &types.AttributeValueMemberS{Value: v} }

func TestDynamoDBCount(t *testing.T) {
	f := &fakeDynamo{answer: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return &dynamodb.UpdateItemOutput{Attributes: map[string]types.AttributeValue{
			"pk": s("orders#.lane"), pausing.AttrFailures: n("7"), "win_100_a": n("12"), "win_100_f": n("9"), "win_99_a": n("3"),
		}}, nil
	}}
	st := pausing.NewDynamoDB(f, "records")
	at := time.UnixMilli(100*60_000 + 5)
	got, err := st.Count(context.Background(), "orders", tally(false, false), at, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	// What the expressions do is run against DynamoDB by pausingtest.Store
	// (integration/pause_test.go); here they are only well formed.
	checkExpression(t, f.updates[0])
	if got.Failures != 7 || !slices.Equal(got.Windows, []pausing.Window{{Index: 99, Attempts: 3}, {Index: 100, Attempts: 12, Failures: 9}}) {
		t.Errorf("decoded %+v", got)
	}
	if _, err := st.Count(context.Background(), "orders", tally(false, true, false), at, 0); err != nil {
		t.Fatal(err)
	}
	checkExpression(t, f.updates[1])
}

// TestDynamoDBTransitionsConditional: a refused transition comes back as
// ErrChanged (or ErrProbeBusy) with the stored state. Which condition
// refuses what is run against DynamoDB by pausingtest.Store
// (integration/pause_test.go).
func TestDynamoDBTransitionsConditional(t *testing.T) {
	ctx := context.Background()
	paused := map[string]types.AttributeValue{"pk": s("orders#.lane"), pausing.AttrMode: s("PAUSED"), pausing.AttrVersion: n("4"), pausing.AttrPausedBy: s("operator")}
	refuse := func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		return nil, &smithy.OperationError{ServiceID: "DynamoDB", OperationName: "UpdateItem",
			Err: &types.ConditionalCheckFailedException{Message: aws.String("The conditional request failed"), Item: paused}}
	}
	f := &fakeDynamo{answer: refuse}
	st := pausing.NewDynamoDB(f, "records")

	got, err := st.Pause(ctx, "orders", pausing.PauseInput{At: t0, ResumeBy: t0.Add(time.Hour), Reason: "r", By: pausing.ByDeliverer})
	if !errors.Is(err, pausing.ErrChanged) || got.Version != 4 || got.By != pausing.ByOperator {
		t.Errorf("refused Pause = %+v, %v; want ErrChanged with the stored state", got, err)
	}
	if _, err := st.Pause(ctx, "orders", pausing.PauseInput{At: t0, ResumeBy: t0, Version: 4, Takeover: true}); !errors.Is(err, pausing.ErrChanged) {
		t.Error(err)
	}
	_, err = st.Resume(ctx, "orders", pausing.ResumeInput{At: t0, Version: 4, Pauses: []pausing.Interval{{From: t0, To: t0}}, Clear: []int64{7, 8}})
	if !errors.Is(err, pausing.ErrChanged) {
		t.Error(err)
	}
	if _, err := st.StartProbe(ctx, "orders", t0, t0.Add(time.Minute)); !errors.Is(err, pausing.ErrProbeBusy) {
		t.Errorf("StartProbe refused on a paused lane = %v, want ErrProbeBusy", err)
	}
	paused[pausing.AttrMode] = s("ACTIVE")
	if _, err := st.StartProbe(ctx, "orders", t0, t0.Add(time.Minute)); !errors.Is(err, pausing.ErrChanged) {
		t.Errorf("StartProbe refused on an active lane = %v, want ErrChanged", err)
	}
	if err := st.FinishProbe(ctx, "orders", pausing.ProbeResult{At: t0, Error: strings.Repeat("é", 200)}); !errors.Is(err, pausing.ErrChanged) {
		t.Error(err)
	}
	for _, in := range f.updates {
		checkExpression(t, in)
		if in.ReturnValuesOnConditionCheckFailure != types.ReturnValuesOnConditionCheckFailureAllOld {
			t.Errorf("%s: refusals must return the item", aws.ToString(in.UpdateExpression))
		}
	}
	if e := f.updates[len(f.updates)-1].ExpressionAttributeValues[":error"].(*types.AttributeValueMemberS).Value; len(e) > dedupe.MaxErrorLen {
		t.Errorf("probe error stored with %d bytes", len(e))
	}
}

func TestDynamoDBOtherErrors(t *testing.T) {
	boom := errors.New("throttled")
	f := &fakeDynamo{answer: func(*dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) { return nil, boom }}
	st := pausing.NewDynamoDB(f, "records")
	if _, err := st.Pause(context.Background(), "orders", pausing.PauseInput{}); !errors.Is(err, boom) || errors.Is(err, pausing.ErrChanged) {
		t.Errorf("Pause = %v, want the service error", err)
	}
}

func TestDynamoDBDecode(t *testing.T) {
	f := &fakeDynamo{}
	st := pausing.NewDynamoDB(f, "records")
	got, err := st.Get(context.Background(), "orders")
	if err != nil || got.Mode != pausing.Active || got.Destination != "orders" {
		t.Errorf("missing item = %+v, %v; want an active lane", got, err)
	}
	f.item = map[string]types.AttributeValue{
		"pk": s("orders#.lane"), pausing.AttrMode: s("PAUSED"), pausing.AttrVersion: n("3"), pausing.AttrPausedAt: n("1777636800000"),
		pausing.AttrResumeBy: n("1777647600000"), pausing.AttrReason: s("5 consecutive failed deliveries"), pausing.AttrPausedBy: s("deliverer"),
		pausing.AttrPauses: &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"from": n("1000"), "to": n("2000")}}}},
		pausing.AttrProbes: n("2"), pausing.AttrLastProbeStatus: n("503"),
	}
	got, err = st.Get(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	want := pausing.State{Destination: "orders", Mode: pausing.Paused, Version: 3, PausedAt: time.UnixMilli(1777636800000), ResumeBy: time.UnixMilli(1777647600000),
		Reason: "5 consecutive failed deliveries", By: pausing.ByDeliverer, Pauses: []pausing.Interval{{From: time.UnixMilli(1000), To: time.UnixMilli(2000)}},
		Probes: 2, LastProbeStatus: 503}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded (-want +got):\n%s", diff)
	}
	f.item = map[string]types.AttributeValue{pausing.AttrMode: s("SLEEPING"), pausing.AttrVersion: s("3"), pausing.AttrPauses: s("x"), "win_5_a": n("1.5")}
	_, err = st.Get(context.Background(), "orders")
	wantErrs := []string{
		`attribute lane_mode: "SLEEPING" is neither ACTIVE nor PAUSED`, `attribute lane_version: want a number`,
		`attribute pauses: want a list`, `attribute win_5_a: "1.5" is not a whole number`,
	}
	for _, w := range wantErrs {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("Get of a damaged item = %v; want it to say %q", err, w)
		}
	}
}
