package operator

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// TestEventsNewestFirstWithEachDestination: events groups the records by
// event, orders the events by their earliest first attempt, newest first,
// narrows by source, type (a prefix too) and destination, bounds the list
// with --max, and ignores records of other kinds or of unknown lanes.
func TestEventsNewestFirstWithEachDestination(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	m := dedupe.NewMemory()
	claim := func(pk, source, typ string, at time.Time) {
		t.Helper()
		if _, err := m.Claim(ctx, dedupe.ClaimInput{PK: pk, Source: source, Type: typ, Now: at,
			LeaseUntil: at.Add(time.Minute), ExpiresAt: at.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	claim("a#evt_old", "stripe", "invoice.paid", t0.Add(-time.Hour)) // before the window
	claim("a#evt_1", "stripe", "invoice.paid", t0.Add(time.Minute))
	claim("b#evt_1", "stripe", "invoice.paid", t0.Add(2*time.Minute))
	claim("a#evt_2", "github", "push", t0.Add(3*time.Minute))
	claim("gone#evt_3", "stripe", "invoice.paid", t0.Add(4*time.Minute)) // a lane no longer configured
	run := func(opt EventsOptions) ([]string, string) {
		t.Helper()
		var out bytes.Buffer
		op := &Operator{Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "a"}, {Destination: "b"}}}, Recent: m, Out: &out, Now: func() time.Time { return t0.Add(time.Hour) }}
		opt.Since = t0
		evs, err := op.Events(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, ev := range evs {
			ids = append(ids, ev.ID)
		}
		return ids, out.String()
	}
	for _, c := range []struct {
		name string
		opt  EventsOptions
		want []string
	}{
		{"all", EventsOptions{}, []string{"evt_2", "evt_1"}},
		{"source", EventsOptions{Source: "stripe"}, []string{"evt_1"}},
		{"type prefix", EventsOptions{Type: "invoice.*"}, []string{"evt_1"}},
		{"exact type", EventsOptions{Type: "push"}, []string{"evt_2"}},
		{"destination", EventsOptions{Destination: "b"}, []string{"evt_1"}},
		{"max", EventsOptions{Max: 1}, []string{"evt_2"}},
	} {
		if got, out := run(c.opt); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v\n%s", c.name, got, c.want, out)
		}
	}
	if _, out := run(EventsOptions{Max: 1}); !strings.Contains(out, "2 events first attempted since 2026-05-01T13:00:00.000Z; the newest 1 (--max):") ||
		!strings.Contains(out, "more: the next 1 with --after ") {
		t.Errorf("--max 1 says neither how many there are nor how to see the rest:\n%s", out)
	}
	_, out := run(EventsOptions{})
	for _, want := range []string{"2 event(s) first attempted since 2026-05-01T13:00:00.000Z, newest first:",
		"2026-05-01T13:01:00.000Z  evt_1  stripe  invoice.paid\n  a  IN_PROGRESS 1 attempt(s)\n  b  IN_PROGRESS 1 attempt(s)",
		"evt_2  github  push\n  a  IN_PROGRESS 1 attempt(s)\n  b  no record"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var buf bytes.Buffer
	op := &Operator{Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "a"}}}, Recent: m, Out: &buf, Now: func() time.Time { return t0.Add(time.Hour) }}
	if _, err := op.Events(ctx, EventsOptions{Since: t0, Destination: "nope"}); err == nil || !strings.Contains(err.Error(), "destinations: a") {
		t.Errorf("an unknown destination: %v, want the destinations named", err)
	}
}

// TestEventsPagesThroughTheWindow: a window of 100,000 records over a
// month is listed an hour at a time, reading the index's entries of that
// hour only and the records of one page; the pages, each from the one
// before's Next, list every event of the hour once, newest first; state,
// until and a bad cursor behave.
func TestEventsPagesThroughTheWindow(t *testing.T) {
	ctx := context.Background()
	end := time.Date(2026, 5, 31, 0, 0, 0, 0, time.UTC)
	m := dedupe.NewMemory()
	const total = 100_000
	step := 30 * 24 * time.Hour / (total / 2) // 50,000 events to 2 lanes
	inHour := 0
	for i := range total / 2 {
		at := end.Add(-time.Duration(i+1) * step)
		for _, d := range []string{"a", "b"} {
			if _, err := m.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key(d, fmt.Sprintf("evt_%05d", i)), Source: "stripe", Type: "invoice.paid",
				Now: at, LeaseUntil: at.Add(time.Minute), ExpiresAt: at.Add(24 * time.Hour)}); err != nil {
				t.Fatal(err)
			}
		}
		if i%10 == 0 {
			l, _ := m.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("b", fmt.Sprintf("evt_%05d", i)), Now: at.Add(2 * time.Minute)})
			_ = m.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 500, At: at})
		}
		if !at.Before(end.Add(-time.Hour)) {
			inHour++
		}
	}
	op := &Operator{Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "a"}, {Destination: "b"}}}, Recent: m, Out: io.Discard,
		Now: func() time.Time { return end }}
	opt := EventsOptions{Since: end.Add(-time.Hour), Max: 20}
	seen := map[string]bool{}
	var last time.Time
	pages := 0
	for {
		page, err := op.ListEvents(ctx, opt)
		if err != nil {
			t.Fatal(err)
		}
		pages++
		if pages == 1 {
			t.Logf("a one-hour view of %d records: %d index entries and %d records read for its first page of %d events",
				total, page.IndexItems, page.RecordsRead, len(page.Events))
			if page.IndexItems != 2*inHour || page.RecordsRead != 2*opt.Max || page.InWindow != inHour {
				t.Errorf("first page read %d index entries and %d records (%d in the window); want %d, %d, %d",
					page.IndexItems, page.RecordsRead, page.InWindow, 2*inHour, 2*opt.Max, inHour)
			}
		}
		for _, ev := range page.Events {
			if seen[ev.ID] || !last.IsZero() && ev.FirstAttemptAt.After(last) || len(ev.Records) != 2 {
				t.Fatalf("page %d: %s at %s (seen %v, after %s, %d records)", pages, ev.ID, ev.FirstAttemptAt, seen[ev.ID], last, len(ev.Records))
			}
			seen[ev.ID], last = true, ev.FirstAttemptAt
		}
		if page.Next == "" {
			break
		}
		opt.After = page.Next
	}
	if len(seen) != inHour || pages != (inHour+opt.Max-1)/opt.Max {
		t.Errorf("%d events in %d pages, want %d in %d", len(seen), pages, inHour, (inHour+opt.Max-1)/opt.Max)
	}

	failed, err := op.ListEvents(ctx, EventsOptions{Since: end.Add(-time.Hour), State: dedupe.StatusFailed, Max: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if want := (inHour + 9) / 10; len(failed.Events) != want || failed.Next != "" {
		t.Errorf("--state FAILED: %d events (next %q), want %d", len(failed.Events), failed.Next, want)
	}
	for _, ev := range failed.Events {
		if ev.Records["b"].Status != dedupe.StatusFailed || ev.Records["b"].LastStatus != 500 {
			t.Errorf("--state FAILED lists %s: %+v", ev.ID, ev.Records["b"])
		}
	}
	older, err := op.ListEvents(ctx, EventsOptions{Since: end.Add(-2 * time.Hour), Until: end.Add(-time.Hour), Max: 1})
	if err != nil || len(older.Events) != 1 || !older.Events[0].FirstAttemptAt.Before(end.Add(-time.Hour)) {
		t.Errorf("--until: %+v %v, want the hour before", older.Events, err)
	}
	if _, err := op.ListEvents(ctx, EventsOptions{}); !errors.Is(err, ErrUsage) {
		t.Errorf("no --since: %v, want a usage error", err)
	}
	if _, err := op.ListEvents(ctx, EventsOptions{Since: end.Add(-32 * 24 * time.Hour)}); !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), "longer than 744h0m0s") {
		t.Errorf("a 32-day window: %v, want a usage error naming the bound", err)
	}
	for _, bad := range []string{"yesterday", "2026-05-01T00:00:00Z", "2026-05-01T00:00:00Z/"} {
		if _, err := op.ListEvents(ctx, EventsOptions{Since: end.Add(-time.Hour), After: bad}); !errors.Is(err, ErrUsage) {
			t.Errorf("--after %q: %v, want a usage error", bad, err)
		}
	}
}

// TestEventsCommandFlags: the command line refuses what it cannot run.
func TestEventsCommandFlags(t *testing.T) {
	for _, args := range [][]string{
		{"--state", "lost"},
		{"--since", "1h", "--until", "2h"},
		{"--after", "nope"},
		{"--max", "0"},
	} {
		c := eventsCommand()
		if err := c.flags.Parse(args); err != nil {
			t.Fatal(err)
		}
		if err := c.check(c.flags.Args()); !errors.Is(err, ErrUsage) {
			t.Errorf("events %v: %v, want a usage error", args, err)
		}
	}
}

// TestEventsScanWithoutTheTimeIndex: on a stack without the time index
// (Resources.Unindexed), events lists the window from a scan of the
// table, records no index wrote included, and says once, before the
// list, that the deployment has no time index; with the index it says
// nothing of the kind. RecentReader picks the scan by the same flag.
func TestEventsScanWithoutTheTimeIndex(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 5, 1, 13, 0, 0, 0, time.UTC)
	m := dedupe.NewMemory()
	unindexed := m.Unindexed()
	for i, pk := range []string{"a#evt_1", "b#evt_1", "a#evt_2"} {
		at := t0.Add(time.Duration(i+1) * time.Minute)
		if _, err := unindexed.Claim(ctx, dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: at, LeaseUntil: at.Add(time.Minute), ExpiresAt: at.Add(24 * time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	lanes := []Lane{{Destination: "a"}, {Destination: "b"}}
	var out bytes.Buffer
	op := &Operator{Resources: Resources{Where: "test", Lanes: lanes, Unindexed: true}, Recent: m.Scan(), Out: &out, Now: func() time.Time { return t0.Add(time.Hour) }}
	evs, err := op.Events(ctx, EventsOptions{Since: t0, Max: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || evs[0].ID != "evt_2" || !strings.HasPrefix(out.String(), NoTimeIndex+"\n\n2 events first attempted") || strings.Count(out.String(), "no time index") != 1 {
		t.Errorf("events %v; output:\n%s\nwant evt_2, after the note said once", evs, out.String())
	}
	page, err := op.ListEvents(ctx, EventsOptions{Since: t0})
	if err != nil || !page.Scanned || len(page.Events) != 2 {
		t.Errorf("ListEvents: %+v, %v; want both events, Scanned", page, err)
	}
	// The same records, on a stack with the index, are in none.
	out.Reset()
	op = &Operator{Resources: Resources{Where: "test", Lanes: lanes}, Recent: m, Out: &out, Now: func() time.Time { return t0.Add(time.Hour) }}
	if evs, err := op.Events(ctx, EventsOptions{Since: t0}); err != nil || len(evs) != 0 || strings.Contains(out.String(), "no time index") {
		t.Errorf("indexed: %v, %v:\n%s\nwant nothing listed and no note", evs, err, out.String())
	}

	api := dynamodb.New(dynamodb.Options{Region: "us-east-1"})
	if _, ok := RecentReader(api, Resources{Table: "t", Unindexed: true}).(*dedupe.TableScan); !ok {
		t.Error("RecentReader without the index: not a TableScan")
	}
	if _, ok := RecentReader(api, Resources{Table: "t"}).(*dedupe.TimeIndex); !ok {
		t.Error("RecentReader with the index: not the TimeIndex")
	}
}

// TestResolveTimeIndex: a deployed stack's index says whether the table
// has the time index ("timeIndex"; absent in an index written before the
// switch, when it had it); the local stack's configuration says so.
func TestResolveTimeIndex(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		index     string
		unindexed bool
	}{
		{`{"tableName":"t"}`, false},
		{`{"tableName":"t","timeIndex":true}`, false},
		{`{"tableName":"t","timeIndex":false}`, true},
	} {
		res, err := Deployed{SSM: fakeSSM{"/hookfan/Prod/stack": tc.index}, Stack: "Prod", Region: "eu-west-1"}.Resolve(ctx)
		if err != nil || res.Unindexed != tc.unindexed {
			t.Errorf("index %s: Unindexed %v, %v; want %v", tc.index, res.Unindexed, err, tc.unindexed)
		}
	}
	for _, tc := range []struct {
		dedupe    string
		unindexed bool
	}{{`{}`, false}, {`{"timeIndex": false}`, true}} {
		cfg, err := config.Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}], "destinations": [], "dedupe": ` + tc.dedupe + `}`))
		if err != nil {
			t.Fatal(err)
		}
		res, err := Local{Config: cfg, Prefix: "dev", Endpoint: "http://127.0.0.1:1"}.Resolve(ctx)
		if err != nil || res.Unindexed != tc.unindexed {
			t.Errorf("local, dedupe %s: Unindexed %v, %v; want %v", tc.dedupe, res.Unindexed, err, tc.unindexed)
		}
	}
}
