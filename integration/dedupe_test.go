//go:build integration

package integration

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
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
	if _, err := clients.DynamoDB.CreateTable(ctx, ddbitem.CreateTableInput(table)); err != nil {
		t.Fatal(err)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, table)
	dedupetest.Run(t, store, dedupetest.Options{Destination: "orders"})
	dedupetest.IndexTurnedOn(t, store, store.Unindexed().(dedupetest.Store), dedupe.ModeLease, "turned-on")
}

// TestDedupeCheckStoreOnDynamoDB runs what dedupe.mode check promises
// against the emulator's DynamoDB: one strongly consistent read before the
// attempt, one conditional write after it (simultaneous finishes left to
// the Memory twin, as above).
func TestDedupeCheckStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	if _, err := clients.DynamoDB.CreateTable(ctx, ddbitem.CreateTableInput(table)); err != nil {
		t.Fatal(err)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, table).InMode(dedupe.ModeCheck).(dedupetest.Store)
	dedupetest.Run(t, store, dedupetest.Options{Destination: "orders", Mode: dedupe.ModeCheck})
	dedupetest.IndexTurnedOn(t, store, store.(dedupe.Indexable).Unindexed().(dedupetest.Store), dedupe.ModeCheck, "turned-on")
}

// TestDedupeCheckModeEndToEnd: a stack with dedupe.mode check delivers an
// event once, writes its record once (DELIVERED, no lease), and refuses the
// provider's resend that comes after it, as the lease does.
func TestDedupeCheckModeEndToEnd(t *testing.T) {
	t.Parallel()
	// While the POST is open, the record is not written yet (with the
	// lease it would be IN_PROGRESS): the mode reached the deliverer.
	var e *env
	var during atomic.Value
	a := newReceiver(t, func(n int, r *http.Request) int {
		_, found := e.record("a", r.Header.Get("webhook-id"))
		during.Store(found)
		return http.StatusOK
	})
	e = startEnv(t, []string{destJSON("a", a, "")}, map[string]*receiver{"a": a},
		func(o *devstack.Options) { o.Config.Dedupe.Mode = config.DedupeCheck })
	first := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_check_mode", nil)
	waitFor(t, patience(t, 20*time.Second), "the delivery", func() bool { return len(a.ids()) >= 1 })
	waitFor(t, patience(t, 20*time.Second), "the record", func() bool {
		r, _ := e.record("a", first.id)
		return r.Status == dedupe.StatusDelivered
	})
	again := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_check_mode", nil)
	if again.id != first.id {
		t.Fatalf("the resend got id %s, want %s", again.id, first.id)
	}
	e.settled()
	if got := a.ids(); len(got) != 1 || got[0] != first.id {
		t.Errorf("received %v, want %s once", got, first.id)
	}
	if found, _ := during.Load().(bool); found {
		t.Error("the record existed during the POST: the deliverer took a lease, not dedupe.mode check")
	}
	if r, _ := e.record("a", first.id); r.Status != dedupe.StatusDelivered || r.Attempts != 1 || r.LeaseToken != "" {
		t.Errorf("record = %s after %d attempts, lease %q; want DELIVERED after 1, no lease", r.Status, r.Attempts, r.LeaseToken)
	}
}

// TestTimeIndexOffEndToEnd: a local stack with dedupe.timeIndex false
// makes its record table without the time index, delivers an event and
// writes its record with its first attempt but no time_bucket; run again
// on the same prefix with the index on, the table gets it, and off once
// more, loses it: the local stack follows the configuration as a deploy
// would.
func TestTimeIndexOffEndToEnd(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := uniquePrefix(t)
	off := false
	indexOff := func(o *devstack.Options) { o.Config.Dedupe.TimeIndex = &off }
	a := newReceiver(t, func(int, *http.Request) int { return http.StatusOK })
	hasIndex := func() bool {
		t.Helper()
		desc, err := clients.DynamoDB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(devstate.TableName(prefix))})
		if err != nil {
			t.Fatal(err)
		}
		for _, gsi := range desc.Table.GlobalSecondaryIndexes {
			if aws.ToString(gsi.IndexName) == ddbitem.TimeIndex {
				return true
			}
		}
		return false
	}
	e := startEnvAt(t, prefix, sourcesJSON, []string{destJSON("a", a, "")}, map[string]*receiver{"a": a}, indexOff)
	if hasIndex() {
		t.Error("dedupe.timeIndex false: the table has the time index")
	}
	sent := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_no_index", nil)
	waitFor(t, patience(t, 20*time.Second), "the record", func() bool {
		r, _ := e.record("a", sent.id)
		return r.Status == dedupe.StatusDelivered
	})
	e.settled()
	if r, _ := e.record("a", sent.id); r.TimeBucket != "" || r.FirstAttemptAt.IsZero() {
		t.Errorf("record: bucket %q, first attempt %s; want no bucket and the first attempt", r.TimeBucket, r.FirstAttemptAt)
	}
	e.stop()
	e = startEnvAt(t, prefix, sourcesJSON, []string{destJSON("a", a, "")}, map[string]*receiver{"a": a})
	if !hasIndex() {
		t.Error("run again with the index on: the table has no time index")
	}
	e.stop()
	startEnvAt(t, prefix, sourcesJSON, []string{destJSON("a", a, "")}, map[string]*receiver{"a": a}, indexOff)
	if hasIndex() {
		t.Error("run again with the index off: the table keeps the time index")
	}
}
