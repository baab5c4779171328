//go:build integration

package integration

import (
	"context"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ddbitem"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/dedupe/dedupetest"
)

// countingIndex passes the time index's calls to DynamoDB and counts the
// items they read and the capacity DynamoDB says they consumed.
type countingIndex struct {
	api      *dynamodb.Client
	mu       sync.Mutex
	scanned  int     // index entries the queries read (ScannedCount)
	fetched  int     // records BatchGetItem returned
	capacity float64 // ConsumedCapacity, where the endpoint reports it
	queries  int
}

func (c *countingIndex) Query(ctx context.Context, in *dynamodb.QueryInput, optFns ...func(*dynamodb.Options)) (*dynamodb.QueryOutput, error) {
	in.ReturnConsumedCapacity = ddbtypes.ReturnConsumedCapacityTotal
	out, err := c.api.Query(ctx, in, optFns...)
	if err == nil {
		c.mu.Lock()
		c.queries++
		c.scanned += int(out.ScannedCount)
		if out.ConsumedCapacity != nil {
			c.capacity += aws.ToFloat64(out.ConsumedCapacity.CapacityUnits)
		}
		c.mu.Unlock()
	}
	return out, err
}

func (c *countingIndex) BatchGetItem(ctx context.Context, in *dynamodb.BatchGetItemInput, optFns ...func(*dynamodb.Options)) (*dynamodb.BatchGetItemOutput, error) {
	in.ReturnConsumedCapacity = ddbtypes.ReturnConsumedCapacityTotal
	out, err := c.api.BatchGetItem(ctx, in, optFns...)
	if err == nil {
		c.mu.Lock()
		for _, items := range out.Responses {
			c.fetched += len(items)
		}
		for _, cc := range out.ConsumedCapacity {
			c.capacity += aws.ToFloat64(cc.CapacityUnits)
		}
		c.mu.Unlock()
	}
	return out, err
}

// TestEventsReadTheTimeIndexOnDynamoDB: records claimed and finished by
// the store on the emulator's table (made as the stack makes it) are
// listed by window through the index: only the window's, newest first,
// each with its state, a later finish leaving the index keys as the
// first claim wrote them.
func TestEventsReadTheTimeIndexOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	if _, err := clients.DynamoDB.CreateTable(ctx, ddbitem.CreateTableInput(table)); err != nil {
		t.Fatal(err)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, table)
	t0 := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	claim := func(pk string, at time.Time, status dedupe.Status) {
		t.Helper()
		l, err := store.Claim(ctx, dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: at, LeaseUntil: at.Add(time.Second), ExpiresAt: at.Add(24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Finish(ctx, l, dedupe.Outcome{Status: status, HTTPStatus: 500, Error: "HTTP 500", At: at, NextAttemptAt: at.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	claim("a#evt_old", t0.Add(-61*time.Minute), dedupe.StatusDelivered) // before the window
	claim("a#evt_1", t0.Add(-50*time.Minute), dedupe.StatusDelivered)
	claim("b#evt_1", t0.Add(-49*time.Minute), dedupe.StatusFailed)
	claim("b#evt_1", t0.Add(-10*time.Minute), dedupe.StatusFailed) // a later attempt: the index keeps the first
	claim("a#evt_2", t0.Add(-5*time.Minute), dedupe.StatusDelivered)
	claim("a#evt_new", t0.Add(time.Minute), dedupe.StatusDelivered) // after the window

	raw, err := clients.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: ddbitem.Key("b#evt_1")})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := raw.Item[ddbitem.TimeBucket].(*ddbtypes.AttributeValueMemberS).Value, dedupe.TimeBucket("b#evt_1", t0.Add(-49*time.Minute)); got != want {
		t.Errorf("bucket after a second attempt %q, want the first's %q", got, want)
	}
	count := &countingIndex{api: clients.DynamoDB}
	op := &operator.Operator{Resources: operator.Resources{Where: "test", Lanes: []operator.Lane{{Destination: "a"}, {Destination: "b"}}},
		Recent: dedupe.NewTimeIndex(count, table), Out: io.Discard}
	page, err := op.ListEvents(ctx, operator.EventsOptions{Since: t0.Add(-time.Hour), Until: t0, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].ID != "evt_2" || page.Next == "" || page.InWindow != 2 {
		t.Fatalf("first page %+v, want evt_2 and a next page of 2 events", page)
	}
	page, err = op.ListEvents(ctx, operator.EventsOptions{Since: t0.Add(-time.Hour), Until: t0, Max: 1, After: page.Next})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 1 || page.Events[0].ID != "evt_1" || page.Next != "" {
		t.Fatalf("second page %+v, want evt_1 and no more", page)
	}
	ev := page.Events[0]
	if ev.Records["a"].Status != dedupe.StatusDelivered || ev.Records["b"].Status != dedupe.StatusFailed || ev.Records["b"].Attempts != 2 ||
		!ev.FirstAttemptAt.Equal(t0.Add(-50*time.Minute)) {
		t.Errorf("evt_1: %+v", ev)
	}
	// One hour (12:00 UTC: the window ends at 13:00) × 8 shards, once a
	// page; the second page reads up to its cursor, evt_2 included.
	if count.queries != 2*dedupe.TimeShards || count.scanned != 3+3 {
		t.Errorf("%d queries reading %d index entries, want %d reading 6", count.queries, count.scanned, 2*dedupe.TimeShards)
	}
}

// BenchmarkEventsOneHourOf100kRecords fills a table on the emulator with
// 100,000 records over 30 days (50,000 events to 2 destinations, each
// record's index keys as the store writes them), then lists the newest
// hour's first page of 50 events; it reports the items read (index
// entries and records) and the capacity the emulator says was consumed.
//
//	make integration-bin && go test -tags integration -run '^$' -bench EventsOneHourOf100k -benchtime 3x ./integration/
func BenchmarkEventsOneHourOf100kRecords(b *testing.B) {
	ctx := context.Background()
	table := fmt.Sprintf("hf-bench-%d-records", time.Now().UnixNano())
	if _, err := clients.DynamoDB.CreateTable(ctx, ddbitem.CreateTableInput(table)); err != nil {
		b.Fatal(err)
	}
	end := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	const events = 50_000
	step := 30 * 24 * time.Hour / events
	var batch []ddbtypes.WriteRequest
	flush := func() {
		for req := map[string][]ddbtypes.WriteRequest{table: batch}; len(req[table]) > 0; {
			out, err := clients.DynamoDB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: req})
			if err != nil {
				b.Fatal(err)
			}
			req = out.UnprocessedItems
		}
		batch = batch[:0]
	}
	inHour := 0
	for i := range events {
		at := end.Add(-time.Duration(i+1) * step)
		if !at.Before(end.Add(-time.Hour)) {
			inHour++
		}
		for _, d := range []string{"a", "b"} {
			pk := dedupe.Key(d, fmt.Sprintf("evt_%05d", i))
			batch = append(batch, ddbtypes.WriteRequest{PutRequest: &ddbtypes.PutRequest{Item: map[string]ddbtypes.AttributeValue{
				ddbitem.PartitionKey:   ddbitem.S(pk),
				ddbitem.TimeBucket:     ddbitem.S(dedupe.TimeBucket(pk, at)),
				ddbitem.FirstAttemptAt: ddbitem.S(at.Format("2006-01-02T15:04:05.000Z07:00")),
				dedupe.AttrStatus:      ddbitem.S(string(dedupe.StatusDelivered)),
				dedupe.AttrAttempts:    ddbitem.N(1),
				dedupe.AttrLastStatus:  ddbitem.N(200),
				dedupe.AttrSource:      ddbitem.S("stripe"),
				dedupe.AttrType:        ddbitem.S("invoice.paid"),
				dedupe.AttrDeliveredAt: ddbitem.S(at.Format("2006-01-02T15:04:05.000Z07:00")),
				ddbitem.ExpiresAt:      ddbitem.N(at.Add(30 * 24 * time.Hour).Unix()),
			}}})
			if len(batch) == 25 {
				flush()
			}
		}
	}
	flush()
	b.ResetTimer()
	var count *countingIndex
	for b.Loop() {
		count = &countingIndex{api: clients.DynamoDB}
		op := &operator.Operator{Resources: operator.Resources{Where: "bench", Lanes: []operator.Lane{{Destination: "a"}, {Destination: "b"}}},
			Recent: dedupe.NewTimeIndex(count, table), Out: io.Discard, Now: func() time.Time { return end }}
		page, err := op.ListEvents(ctx, operator.EventsOptions{Since: end.Add(-time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		if page.InWindow != inHour || len(page.Events) != operator.DefaultEventsMax {
			b.Fatalf("%d events in the hour, %d listed; want %d and %d", page.InWindow, len(page.Events), inHour, operator.DefaultEventsMax)
		}
	}
	b.ReportMetric(float64(count.scanned), "index-items/op")
	b.ReportMetric(float64(count.fetched), "records/op")
	b.ReportMetric(float64(count.queries), "queries/op")
	b.ReportMetric(count.capacity, "RCU/op")
}

// TestProvisionAddsTheTimeIndexToAnOlderTable: make dev on an emulator
// whose record table an earlier version made (no time index) adds the
// index, so ops events can query it.
func TestProvisionAddsTheTimeIndexToAnOlderTable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	prefix := uniquePrefix(t)
	table := devstate.TableName(prefix)
	attrs, key := ddbitem.KeySchema()
	if _, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest, AttributeDefinitions: attrs, KeySchema: key,
	}); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s1"}}],
	  "destinations": [{"name": "a", "url": "http://127.0.0.1:1/x", "allowPrivateNetworks": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := devstack.Provision(ctx, clients, cfg, nil, prefix); err != nil {
		t.Fatal(err)
	}
	err = dedupe.NewTimeIndex(clients.DynamoDB, table).Window(ctx, time.Now().Add(-time.Hour), time.Now(), func(dedupe.IndexEntry) error { return nil })
	if err != nil {
		t.Errorf("the time index after provisioning an older table: %v", err)
	}
}

// TestEventsScanTheTableWithoutTheIndexOnDynamoDB: on a table made as the
// stack makes it with dedupe.timeIndex false (no index), the unindexed
// store runs the record protocol in both modes writing no time_bucket, a
// query of the index fails, and the operator's reader for such a stack
// (RecentReader, Unindexed) lists the window from a scan: only the
// window's events, newest first, each with its state.
func TestEventsScanTheTableWithoutTheIndexOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-records"
	if _, err := clients.DynamoDB.CreateTable(ctx, ddbitem.UnindexedTableInput(table)); err != nil {
		t.Fatal(err)
	}
	store := dedupe.NewDynamoDB(clients.DynamoDB, table)
	dedupetest.Run(t, store.Unindexed().(dedupetest.Store), dedupetest.Options{Destination: "lease", Unindexed: true})
	dedupetest.Run(t, store.InMode(dedupe.ModeCheck).(dedupe.Indexable).Unindexed().(dedupetest.Store), dedupetest.Options{Destination: "check", Mode: dedupe.ModeCheck, Unindexed: true})

	unindexed := store.Unindexed()
	t0 := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	claim := func(pk string, at time.Time, status dedupe.Status) {
		t.Helper()
		l, err := unindexed.Claim(ctx, dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: at, LeaseUntil: at.Add(time.Second), ExpiresAt: at.Add(24 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if err := unindexed.Finish(ctx, l, dedupe.Outcome{Status: status, HTTPStatus: 500, Error: "HTTP 500", At: at, NextAttemptAt: at.Add(time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	claim("a#evt_old", t0.Add(-61*time.Minute), dedupe.StatusDelivered) // before the window
	claim("a#evt_1", t0.Add(-50*time.Minute), dedupe.StatusDelivered)
	claim("b#evt_1", t0.Add(-49*time.Minute), dedupe.StatusFailed)
	claim("a#evt_2", t0.Add(-5*time.Minute), dedupe.StatusDelivered)
	claim("a#evt_new", t0.Add(time.Minute), dedupe.StatusDelivered) // after the window

	raw, err := clients.DynamoDB.GetItem(ctx, &dynamodb.GetItemInput{TableName: &table, Key: ddbitem.Key("b#evt_1")})
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := raw.Item[ddbitem.TimeBucket]; ok || raw.Item[ddbitem.FirstAttemptAt] == nil {
		t.Errorf("record %v: time_bucket %v, want none and a first attempt", raw.Item, v)
	}
	if err := dedupe.NewTimeIndex(clients.DynamoDB, table).Window(ctx, t0.Add(-time.Hour), t0, func(dedupe.IndexEntry) error { return nil }); err == nil {
		t.Error("a query of the index on a table without it succeeded")
	}
	res := operator.Resources{Where: "test", Table: table, Lanes: []operator.Lane{{Destination: "a"}, {Destination: "b"}}, Unindexed: true}
	op := &operator.Operator{Resources: res, Recent: operator.RecentReader(clients.DynamoDB, res), Out: io.Discard}
	page, err := op.ListEvents(ctx, operator.EventsOptions{Since: t0.Add(-time.Hour), Until: t0})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, ev := range page.Events {
		ids = append(ids, ev.ID)
	}
	if !page.Scanned || fmt.Sprint(ids) != "[evt_2 evt_1]" || page.Events[1].Records["b"].Status != dedupe.StatusFailed {
		t.Errorf("page %+v, want evt_2 then evt_1 (b FAILED), scanned", page)
	}
}
