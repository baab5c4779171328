package dedupe_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// TestDynamoDBCheckMode: in dedupe.mode check a claim is one consistent
// GetItem and no write; a finish is one UpdateItem whose every placeholder
// is defined and used, for every outcome, ordinary or replayed; a failed
// condition is ErrSettled. What the condition and the update do is run
// against DynamoDB by dedupetest.Run in ModeCheck
// (integration/dedupe_test.go).
func TestDynamoDBCheckMode(t *testing.T) {
	var settle bool
	f := &fakeDynamo{update: func(in *dynamodb.UpdateItemInput) (*dynamodb.UpdateItemOutput, error) {
		if settle {
			return nil, sdkError(&types.ConditionalCheckFailedException{Message: aws.String("settled")})
		}
		return &dynamodb.UpdateItemOutput{}, nil
	}}
	s := dedupe.NewDynamoDB(f, "deliveries").InMode(dedupe.ModeCheck)
	for _, replay := range []string{"", "rpl_1"} {
		in := claimAt("orders#e1", t0, 40*time.Second)
		in.Replay = replay
		f.item = nil
		if replay != "" {
			f.item = item("pk", "orders#e1", "status", "DELIVERED", "attempts", int64(1))
		}
		gets, updates := f.gets, len(f.updates)
		lease, err := s.Claim(context.Background(), in)
		if err != nil {
			t.Fatalf("claim (replay %q): %v", replay, err)
		}
		if f.gets != gets+1 || len(f.updates) != updates || lease.Token != "" {
			t.Fatalf("claim: %d reads and %d writes, token %q; want one read, no write, no token", f.gets-gets, len(f.updates)-updates, lease.Token)
		}
		for _, status := range []dedupe.Status{dedupe.StatusDelivered, dedupe.StatusFailed, dedupe.StatusDead, dedupe.StatusGone} {
			out := dedupe.Outcome{Status: status, HTTPStatus: http.StatusOK, At: t0.Add(time.Second), NextAttemptAt: t0.Add(time.Minute)}
			if err := s.Finish(context.Background(), lease, out); err != nil {
				t.Fatalf("finish %s: %v", status, err)
			}
			got := f.updates[len(f.updates)-1]
			checkExpressions(t, got)
			if got.ConditionExpression == nil {
				t.Errorf("finish %s (replay %q): unconditional; want the claim's condition", status, replay)
			}
		}
	}
	settle = true
	lease, _ := s.Claim(context.Background(), claimAt("orders#e2", t0, 40*time.Second))
	err := s.Finish(context.Background(), lease, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 204, At: t0})
	if !errors.Is(err, dedupe.ErrSettled) || errors.Is(err, dedupe.ErrLeaseLost) {
		t.Errorf("finish on a settled record = %v, want %v", err, dedupe.ErrSettled)
	}
	// A record a lease claim holds refuses a check claim, as a lease would.
	f.item = item("pk", "orders#e3", "status", "IN_PROGRESS", "lease_until", t0.Add(time.Minute).UnixMilli(), "attempts", int64(1))
	if _, err := s.Claim(context.Background(), claimAt("orders#e3", t0, 40*time.Second)); !errors.Is(err, dedupe.ErrInFlight) {
		t.Errorf("check claim of a live lease = %v, want %v", err, dedupe.ErrInFlight)
	}
}
