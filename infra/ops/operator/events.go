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

// RecordLister lists the delivery records first attempted since a time
// (dedupe.Scanner on a table, dedupe.Memory in tests).
type RecordLister interface {
	Since(ctx context.Context, since time.Time, visit func(dedupe.Record) error) error
}

// DefaultEventsMax is how many events the events command prints.
const DefaultEventsMax = 50

// EventsOptions narrow the events listed.
type EventsOptions struct {
	Since time.Time
	// Source, Type and Destination narrow the list (Type: exact, or a
	// prefix "x.*").
	Source, Type, Destination string
	// Max bounds the events printed, newest first.
	Max int
}

// RecentEvent is one event with each destination's delivery record.
type RecentEvent struct {
	ID, Source, Type string
	// FirstAttemptAt is the earliest first attempt at any destination.
	FirstAttemptAt time.Time
	// Records holds the destinations that attempted it, by name.
	Records map[string]dedupe.Record
}

// Events lists the events first attempted since opt.Since, newest first,
// each with its state at every destination (ListEvents), and prints them.
// An event a destination never attempted (filtered out, still queued) has
// no record there.
func (o *Operator) Events(ctx context.Context, opt EventsOptions) ([]RecentEvent, error) {
	list, err := o.ListEvents(ctx, EventsQuery{Since: opt.Since, Source: opt.Source, Type: opt.Type, Destination: opt.Destination, Limit: opt.Max})
	if err != nil {
		return nil, err
	}
	o.printEvents(opt, list.Lanes, list.Events, list.Total)
	return list.Events, nil
}

// EventsQuery selects a window of events, as the console and the events
// command ask for them.
type EventsQuery struct {
	// Since and Until bound when the events were first attempted (Until
	// zero: now).
	Since, Until time.Time
	// Source, Type and Destination narrow the list (Type: exact, or a
	// prefix "x.*"); State keeps the events whose record at some
	// destination (at Destination, when set) is in that state.
	Source, Type, Destination string
	State                     dedupe.Status
	// Offset skips that many events, newest first; Limit bounds the events
	// returned (0: all).
	Offset, Limit int
}

// EventList is a window of events, newest first.
type EventList struct {
	Events []RecentEvent
	// Total is how many events the window holds (before Offset and Limit).
	Total int
	// Lanes are the lanes the events' records were read from.
	Lanes []Lane
	// Read is how many delivery records the window's read returned.
	Read int
}

// ListEvents reads the events first attempted in q's window, newest first,
// each with its record at every destination. Both the events command and
// the console list events through it. It reads the delivery records
// (o.Recent: a Scan of the record table, docs/operations.md#recent-events).
func (o *Operator) ListEvents(ctx context.Context, q EventsQuery) (EventList, error) {
	var list EventList
	if o.Recent == nil {
		return list, errors.New("this stack's delivery records cannot be listed")
	}
	lanes := o.Resources.Lanes
	if q.Destination != "" {
		l, err := o.Resources.Lane(q.Destination)
		if err != nil {
			return list, err
		}
		lanes = []Lane{l}
	}
	list.Lanes = lanes
	known := map[string]bool{}
	for _, l := range lanes {
		known[l.Destination] = true
	}
	var mu sync.Mutex
	byID := map[string]*RecentEvent{}
	err := o.Recent.Since(ctx, q.Since, func(r dedupe.Record) error {
		mu.Lock()
		defer mu.Unlock()
		list.Read++
		destination, id, ok := strings.Cut(r.PK, "#")
		if !ok || !known[destination] || !typeMatches(q.Type, r.Type) || q.Source != "" && r.Source != q.Source ||
			!q.Until.IsZero() && !r.FirstAttemptAt.Before(q.Until) {
			return nil
		}
		ev := byID[id]
		if ev == nil {
			ev = &RecentEvent{ID: id, Source: r.Source, Type: r.Type, FirstAttemptAt: r.FirstAttemptAt, Records: map[string]dedupe.Record{}}
			byID[id] = ev
		}
		ev.Records[destination] = r
		if r.FirstAttemptAt.Before(ev.FirstAttemptAt) {
			ev.FirstAttemptAt = r.FirstAttemptAt
		}
		return nil
	})
	if err != nil {
		return list, err
	}
	events := make([]RecentEvent, 0, len(byID))
	for _, ev := range byID {
		if q.State == "" || ev.inState(q.State) {
			events = append(events, *ev)
		}
	}
	slices.SortFunc(events, func(a, b RecentEvent) int {
		if c := b.FirstAttemptAt.Compare(a.FirstAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	list.Total = len(events)
	events = events[min(max(q.Offset, 0), len(events)):]
	if q.Limit > 0 && len(events) > q.Limit {
		events = events[:q.Limit]
	}
	list.Events = events
	return list, nil
}

// inState reports whether any of the event's records is in state s.
func (ev RecentEvent) inState(s dedupe.Status) bool {
	for _, r := range ev.Records {
		if r.Status == s {
			return true
		}
	}
	return false
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

func (o *Operator) printEvents(opt EventsOptions, lanes []Lane, events []RecentEvent, total int) {
	switch {
	case total == 0:
		o.printf("no event first attempted since %s\n", stamp(opt.Since))
		return
	case len(events) < total:
		o.printf("%d events first attempted since %s; the newest %d (--max):\n", total, stamp(opt.Since), len(events))
	default:
		o.printf("%d event(s) first attempted since %s, newest first:\n", total, stamp(opt.Since))
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
	o.printf("\nops status EVENT shows one event's attempts and whether it waits in a DLQ\n")
}

// eventsCommand is the events command line.
func eventsCommand() command {
	fs := newFlags("events")
	var o EventsOptions
	since := fs.String("since", "1h", "events first attempted from this time (RFC 3339, a date, or a duration before now)")
	fs.StringVar(&o.Source, "source", "", "only this source")
	fs.StringVar(&o.Type, "type", "", "only this type, or prefix (invoice.*)")
	fs.StringVar(&o.Destination, "destination", "", "only this destination's records")
	fs.IntVar(&o.Max, "max", DefaultEventsMax, "events to print, newest first")
	return command{
		flags: fs,
		check: func(args []string) error {
			if len(args) != 0 {
				return usagef("events takes flags only; unexpected %q", args[0])
			}
			if o.Max < 1 {
				return usagef("--max %d: list at least 1", o.Max)
			}
			_, err := ParseTime(*since, time.Now())
			return err
		},
		run: func(ctx context.Context, op *Operator, _ []string) (err error) {
			if o.Since, err = ParseTime(*since, op.now()); err != nil {
				return err
			}
			_, err = op.Events(ctx, o)
			return err
		},
	}
}

// scanner reads a stack's records: in more segments on a deployed table,
// where each segment's pages are the wait (docs/operations.md#recent-events).
func scanner(api dedupe.ScanAPI, table string, deployed bool) *dedupe.Scanner {
	s := dedupe.NewScanner(api, table)
	if deployed {
		s.Segments = 16
	}
	return s
}
