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
// each with its state at every destination, read from the delivery records
// (a Scan of the record table: docs/operations.md#recent-events). An
// event a destination never attempted (filtered out, still queued) has no
// record there.
func (o *Operator) Events(ctx context.Context, opt EventsOptions) ([]RecentEvent, error) {
	if o.Recent == nil {
		return nil, errors.New("this stack's delivery records cannot be listed")
	}
	lanes := o.Resources.Lanes
	if opt.Destination != "" {
		l, err := o.Resources.Lane(opt.Destination)
		if err != nil {
			return nil, err
		}
		lanes = []Lane{l}
	}
	known := map[string]bool{}
	for _, l := range lanes {
		known[l.Destination] = true
	}
	var mu sync.Mutex
	byID := map[string]*RecentEvent{}
	err := o.Recent.Since(ctx, opt.Since, func(r dedupe.Record) error {
		destination, id, ok := strings.Cut(r.PK, "#")
		if !ok || !known[destination] || !typeMatches(opt.Type, r.Type) || opt.Source != "" && r.Source != opt.Source {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
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
		return nil, err
	}
	events := make([]RecentEvent, 0, len(byID))
	for _, ev := range byID {
		events = append(events, *ev)
	}
	slices.SortFunc(events, func(a, b RecentEvent) int {
		if c := b.FirstAttemptAt.Compare(a.FirstAttemptAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	total := len(events)
	if opt.Max > 0 && len(events) > opt.Max {
		events = events[:opt.Max]
	}
	o.printEvents(opt, lanes, events, total)
	return events, nil
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
