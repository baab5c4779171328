package operator

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
)

// RecordIndex lists the delivery records by first attempt and reads
// them (dedupe.TimeIndex on a table, dedupe.Memory in tests).
type RecordIndex interface {
	Window(ctx context.Context, since, until time.Time, visit func(dedupe.IndexEntry) error) error
	Records(ctx context.Context, pks []string) (map[string]dedupe.Record, error)
}

// RecentAPI is the DynamoDB calls either reader of RecentReader makes.
type RecentAPI interface {
	dedupe.IndexAPI
	dedupe.ScanAPI
}

// RecentReader is how events reads res's records by first attempt: the
// time index, or, on a table without it (Resources.Unindexed), a scan of
// the whole table.
func RecentReader(api RecentAPI, res Resources) RecordIndex {
	if res.Unindexed {
		return dedupe.NewTableScan(api, res.Table)
	}
	return dedupe.NewTimeIndex(api, res.Table)
}

// NoTimeIndex says once, where events are listed, that a deployment
// without the time index finds them by reading its whole table.
const NoTimeIndex = "this deployment has no time index (dedupe.timeIndex false): events are found by reading the whole record table, whatever the window (slower, and every record's read is paid for)"

// MaxEventsWindow bounds the window events lists: each of its hours is
// dedupe.TimeShards index queries (a month is about 6,000, some seconds).
const MaxEventsWindow = 31 * 24 * time.Hour

// DefaultEventsMax is how many events the events command prints.
const DefaultEventsMax = 50

// EventsOptions narrow the events listed.
type EventsOptions struct {
	// Since and Until bound the events' first attempt: [Since, Until);
	// Until defaults to now.
	Since, Until time.Time
	// Source, Type and Destination narrow the list (Type: exact, or a
	// prefix "x.*").
	Source, Type, Destination string
	// State keeps the events with a record in that state at one of the
	// destinations listed ("" keeps all).
	State dedupe.Status
	// Max bounds the events of a page, newest first (0: DefaultEventsMax).
	Max int
	// After is a page's Next: the page after it.
	After string
}

// RecentEvent is one event with each destination's delivery record.
type RecentEvent struct {
	ID, Source, Type string
	// FirstAttemptAt is the earliest first attempt at any destination.
	FirstAttemptAt time.Time
	// Records holds the destinations that attempted it in the window, by name.
	Records map[string]dedupe.Record
}

// EventsPage is one page of events, newest first.
type EventsPage struct {
	Events []RecentEvent
	// InWindow counts the events of the window before the page (After),
	// before Source, Type and State narrow them.
	InWindow int
	// Next asks for the page after this one (EventsOptions.After); ""
	// when this is the last.
	Next string
	// IndexItems and RecordsRead are the items this page read: entries of
	// the time index (or, Scanned, records the scan kept), and records.
	IndexItems, RecordsRead int
	// Scanned is true when the stack has no time index and the window was
	// found by scanning the whole table (NoTimeIndex says so).
	Scanned bool
}

// ListEvents lists a page of the events first attempted in the window,
// newest first, each with its state at every destination that attempted
// it there. It reads the time index over the window only (keys and times:
// docs/operations.md#recent-events), then the records of the page's
// events, in batches, until the page is full. An event a destination
// never attempted (filtered out, still queued) has no record there.
func (o *Operator) ListEvents(ctx context.Context, opt EventsOptions) (EventsPage, error) {
	if o.Recent == nil {
		return EventsPage{}, errors.New("this stack's delivery records cannot be listed")
	}
	lanes, err := o.eventLanes(opt.Destination)
	if err != nil {
		return EventsPage{}, err
	}
	known := map[string]bool{}
	for _, l := range lanes {
		known[l.Destination] = true
	}
	until := opt.Until
	if until.IsZero() {
		until = o.now()
	}
	switch {
	case opt.Since.IsZero():
		return EventsPage{}, usagef("events need the start of their window (--since)")
	case until.Sub(opt.Since) > MaxEventsWindow:
		return EventsPage{}, usagef("the window from %s to %s is longer than %s (each hour of it is %d index queries); narrow --since or --until", stamp(opt.Since), stamp(until), MaxEventsWindow, dedupe.TimeShards)
	}
	after, err := parseCursor(opt.After)
	if err != nil {
		return EventsPage{}, err
	}
	if !after.at.IsZero() && after.at.Before(until) {
		until = after.at.Add(time.Millisecond) // the cursor's own moment may hold more events
	}
	page := EventsPage{Scanned: o.Resources.Unindexed}
	var mu sync.Mutex
	byID := map[string]*indexedEvent{}
	err = o.Recent.Window(ctx, opt.Since, until, func(e dedupe.IndexEntry) error {
		mu.Lock()
		defer mu.Unlock()
		page.IndexItems++
		destination, id, ok := strings.Cut(e.PK, "#")
		if !ok || !known[destination] {
			return nil
		}
		ev := byID[id]
		if ev == nil {
			ev = &indexedEvent{id: id, at: e.FirstAttemptAt}
			byID[id] = ev
		}
		ev.pks = append(ev.pks, e.PK)
		ev.at = minTime(ev.at, e.FirstAttemptAt)
		return nil
	})
	if err != nil {
		return EventsPage{}, err
	}
	order := make([]*indexedEvent, 0, len(byID))
	for _, ev := range byID {
		if after.at.IsZero() || after.before(ev.at, ev.id) {
			order = append(order, ev)
		}
	}
	slices.SortFunc(order, func(a, b *indexedEvent) int {
		if c := b.at.Compare(a.at); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	page.InWindow = len(order)
	want := opt.Max
	if want <= 0 {
		want = DefaultEventsMax
	}
	// Read the records of the newest events first, a batch at a time,
	// until the page holds want events that pass the filters.
	narrowed := opt.Source != "" || opt.Type != "" || opt.State != ""
	more := false // events past the page's last remain
	for len(order) > 0 && len(page.Events) < want {
		n := want - len(page.Events)
		if narrowed {
			n = max(n, 25) // filters drop events: read a few more at once
		}
		batch := order[:min(n, len(order))]
		order = order[len(batch):]
		var pks []string
		for _, ev := range batch {
			pks = append(pks, ev.pks...)
		}
		records, err := o.Recent.Records(ctx, pks)
		if err != nil {
			return EventsPage{}, err
		}
		page.RecordsRead += len(records)
		for i, ev := range batch {
			re, ok := ev.event(records, opt)
			if !ok {
				continue
			}
			page.Events = append(page.Events, re)
			if len(page.Events) == want {
				// What this batch read past the page is read again with the next page.
				more = i+1 < len(batch)
				break
			}
		}
	}
	if (more || len(order) > 0) && len(page.Events) > 0 {
		last := page.Events[len(page.Events)-1]
		page.Next = cursor{at: last.FirstAttemptAt, id: last.ID}.String()
	}
	return page, nil
}

// Events prints a page of the events first attempted in the window
// (ListEvents) and returns it.
func (o *Operator) Events(ctx context.Context, opt EventsOptions) ([]RecentEvent, error) {
	page, err := o.ListEvents(ctx, opt)
	if err != nil {
		return nil, err
	}
	lanes, _ := o.eventLanes(opt.Destination)
	o.printEvents(opt, lanes, page)
	return page.Events, nil
}

func (o *Operator) eventLanes(destination string) ([]Lane, error) {
	if destination == "" {
		return o.Resources.Lanes, nil
	}
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return nil, err
	}
	return []Lane{l}, nil
}

// indexedEvent is an event as the time index has it: its records' keys
// and its earliest first attempt.
type indexedEvent struct {
	id  string
	at  time.Time
	pks []string
}

// event builds the event from its records, false when the filters drop
// it (or its records are gone: expired since the index listed them).
func (ev *indexedEvent) event(records map[string]dedupe.Record, opt EventsOptions) (RecentEvent, bool) {
	re := RecentEvent{ID: ev.id, FirstAttemptAt: ev.at, Records: map[string]dedupe.Record{}}
	state := opt.State == ""
	for _, pk := range ev.pks {
		r, ok := records[pk]
		if !ok {
			continue
		}
		destination, _, _ := strings.Cut(pk, "#")
		re.Records[destination] = r
		re.Source, re.Type = r.Source, r.Type
		state = state || r.Status == opt.State
	}
	if len(re.Records) == 0 || !state || !typeMatches(opt.Type, re.Type) || opt.Source != "" && re.Source != opt.Source {
		return RecentEvent{}, false
	}
	return re, true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

// cursor is where a page ended: its last event's first attempt and id.
type cursor struct {
	at time.Time
	id string
}

// String is the cursor as EventsOptions.After takes it.
func (c cursor) String() string { return stamp(c.at) + "/" + c.id }

// before reports whether an event comes after the cursor in the listing's
// order (newest first, then by id).
func (c cursor) before(at time.Time, id string) bool {
	if !at.Equal(c.at) {
		return at.Before(c.at)
	}
	return id > c.id
}

func parseCursor(s string) (cursor, error) {
	if s == "" {
		return cursor{}, nil
	}
	at, id, ok := strings.Cut(s, "/")
	t, err := time.Parse(time.RFC3339Nano, at)
	if !ok || err != nil || id == "" {
		return cursor{}, usagef("--after %q is not a page's end (as the previous page printed it: <time>/<event id>)", s)
	}
	return cursor{at: t, id: id}, nil
}

func typeMatches(want, typ string) bool {
	if want == "" {
		return true
	}
	if p, ok := strings.CutSuffix(want, "*"); ok {
		return strings.HasPrefix(typ, p)
	}
	return want == typ
}

func (o *Operator) printEvents(opt EventsOptions, lanes []Lane, page EventsPage) {
	events := page.Events
	if page.Scanned {
		o.printf("%s\n\n", NoTimeIndex)
	}
	window := "since " + stamp(opt.Since)
	if !opt.Until.IsZero() {
		window = "from " + stamp(opt.Since) + " to " + stamp(opt.Until)
	}
	if len(events) == 0 {
		o.printf("no event first attempted %s\n", window)
		return
	}
	narrowed := opt.Source != "" || opt.Type != "" || opt.State != ""
	switch {
	case page.Next != "" && !narrowed && opt.After == "":
		o.printf("%d events first attempted %s; the newest %d (--max):\n", page.InWindow, window, len(events))
	case page.Next != "":
		o.printf("%d event(s) first attempted %s, newest first; more follow (--after):\n", len(events), window)
	default:
		o.printf("%d event(s) first attempted %s, newest first:\n", len(events), window)
	}
	width := 0
	for _, l := range lanes {
		width = max(width, len(l.Destination))
	}
	for _, ev := range events {
		o.printf("\n%s  %s  %s  %s\n", stamp(ev.FirstAttemptAt), ev.ID, ev.Source, ev.Type)
		for _, l := range lanes {
			r, ok := ev.Records[l.Destination]
			if !ok {
				o.printf("  %-*s  no record (filtered out, still queued, or not received)\n", width, l.Destination)
				continue
			}
			line := fmt.Sprintf("  %-*s  %-11s %d attempt(s)", width, l.Destination, r.Status, r.Attempts)
			if r.LastStatus != 0 || r.LastError != "" {
				line += ", last " + answer(r.LastStatus, r.LastError)
			}
			if r.Status == dedupe.StatusFailed && !r.NextAttemptAt.IsZero() {
				line += ", next " + stamp(r.NextAttemptAt)
			}
			o.printf("%s\n", line)
		}
	}
	if page.Next != "" {
		o.printf("\nmore: the next %d with --after %s\n", max(opt.Max, 1), page.Next)
	}
	o.printf("\nops status EVENT shows one event's attempts and whether it waits in a DLQ\n")
}

// eventsCommand is the events command line.
func eventsCommand() command {
	fs := newFlags("events")
	var o EventsOptions
	since := fs.String("since", "1h", "events first attempted from this time (RFC 3339, a date, or a duration before now)")
	until := fs.String("until", "", "and before this time (default now)")
	state := fs.String("state", "", "only events with a record in this state: "+strings.Join(stateNames(), ", "))
	fs.StringVar(&o.Source, "source", "", "only this source")
	fs.StringVar(&o.Type, "type", "", "only this type, or prefix (invoice.*)")
	fs.StringVar(&o.Destination, "destination", "", "only this destination's records")
	fs.IntVar(&o.Max, "max", DefaultEventsMax, "events to print, newest first")
	fs.StringVar(&o.After, "after", "", "the page after this one (as the previous page printed it)")
	parse := func(now time.Time) (EventsOptions, error) {
		opt := o
		var err error
		if opt.Since, err = ParseTime(*since, now); err != nil {
			return opt, err
		}
		if *until != "" {
			if opt.Until, err = ParseTime(*until, now); err != nil {
				return opt, err
			}
			if !opt.Since.Before(opt.Until) {
				return opt, usagef("--since %s is not before --until %s", stamp(opt.Since), stamp(opt.Until))
			}
		}
		if *state != "" {
			opt.State = dedupe.Status(strings.ToUpper(*state))
			if !slices.Contains(stateNames(), string(opt.State)) {
				return opt, usagef("--state %q: want one of %s", *state, strings.Join(stateNames(), ", "))
			}
		}
		_, err = parseCursor(opt.After)
		return opt, err
	}
	return command{
		flags: fs,
		check: func(args []string) error {
			if len(args) != 0 {
				return usagef("events takes flags only; unexpected %q", args[0])
			}
			if o.Max < 1 {
				return usagef("--max %d: list at least 1", o.Max)
			}
			_, err := parse(time.Now())
			return err
		},
		run: func(ctx context.Context, op *Operator, _ []string) error {
			opt, err := parse(op.now())
			if err != nil {
				return err
			}
			_, err = op.Events(ctx, opt)
			return err
		},
	}
}

// stateNames are the record states --state takes.
func stateNames() []string {
	return []string{string(dedupe.StatusInProgress), string(dedupe.StatusDelivered), string(dedupe.StatusFailed), string(dedupe.StatusDead), string(dedupe.StatusGone)}
}
