//go:build integration

package integration

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/dedupe/dedupetest"
)

// TestDedupeStoreOnDynamoDB runs the delivery-record store's protocol
// against the emulator's DynamoDB over the wire, on a table made with the
// key schema the stack gives the record table. Simultaneous claims are
// left to the Memory twin's run: moto's conditional UpdateItem is not
// atomic, so two of them can both succeed there.
func TestDedupeStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	attrs, key := ddbitem.KeySchema()
	if _, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key,
	}); err != nil {
		t.Fatal(err)
	}
	dedupetest.Run(t, dedupe.NewDynamoDB(clients.DynamoDB, table), dedupetest.Options{Destination: "orders"})
}

// TestDedupeCheckStoreOnDynamoDB runs what dedupe.mode check promises
// against the emulator's DynamoDB: one strongly consistent read before the
// attempt, one conditional write after it (simultaneous finishes left to
// the Memory twin, as above).
func TestDedupeCheckStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	attrs, key := ddbitem.KeySchema()
	if _, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key,
	}); err != nil {
		t.Fatal(err)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, table).InMode(dedupe.ModeCheck).(dedupetest.Store)
	dedupetest.Run(t, store, dedupetest.Options{Destination: "orders", Mode: dedupe.ModeCheck})
}
