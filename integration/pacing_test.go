//go:build integration

package integration

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pacing/pacingtest"
	"github.com/hookfan/hookfan/shared/pausing"
)

// TestPacingStoreOnDynamoDB runs the bucket's contract against the
// emulator's DynamoDB over the wire, on a table with the record table's
// key schema: 50 concurrent takers, each with a store of its own (as each
// function instance has), hold rate×t+burst on an injected clock. moto's
// conditional writes are not atomic, so the stores go through the local
// stack's per-item lock, as the local stack's do (docs/local.md); the
// conditions, the refusals and the state each refusal returns are the
// emulator's. The check with leases at 200/s runs 8 takers (each calls
// every few milliseconds; the memory twin's run has 50).
func TestPacingStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	attrs, key := ddbitem.KeySchema()
	if _, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key,
	}); err != nil {
		t.Fatal(err)
	}
	locks := &sync.Map{}
	store := func() pacing.Store { return devstack.NewPaceLocked(pacing.NewDynamoDB(clients.DynamoDB, table), locks) }
	pacingtest.Run(t, store(), pacingtest.Lanes("dest"), pacingtest.Options{NewStore: store, LeaseTakers: 8})

	// The bucket shares the lane's item with its pause state: each keeps
	// the other's attributes.
	at := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	lanes := pausing.NewDynamoDB(clients.DynamoDB, table)
	if _, err := lanes.Count(ctx, "shared", pausing.Tally{Attempts: 1, Failures: 1, Trailing: 1}, at, 0); err != nil {
		t.Fatal(err)
	}
	p := pacing.NewDynamoDB(clients.DynamoDB, table)
	if _, err := p.SetOverride(ctx, "shared", pacing.Override{N: 1, Per: time.Second, At: at, Until: at.Add(time.Hour)}); err != nil {
		t.Fatal(err)
	}
	if s, err := lanes.Get(ctx, "shared"); err != nil || s.Failures != 1 {
		t.Errorf("pause state after an override: %+v, %v", s, err)
	}
	if _, err := lanes.Count(ctx, "shared", pausing.Tally{Attempts: 1, Failures: 1, Trailing: 1}, at, 0); err != nil {
		t.Fatal(err)
	}
	if s, err := p.Get(ctx, "shared"); err != nil || s.Override == nil || s.Override.N != 1 {
		t.Errorf("pacing state after a count: %+v, %v", s, err)
	}
}
