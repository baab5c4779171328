package operator

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

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
		op := &Operator{Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "a"}, {Destination: "b"}}}, Recent: m, Out: &out}
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
	_, out := run(EventsOptions{})
	for _, want := range []string{"2 event(s) first attempted since 2026-05-01T13:00:00.000Z, newest first:",
		"2026-05-01T13:01:00.000Z  evt_1  stripe  invoice.paid\n  a  IN_PROGRESS 1 attempt(s)\n  b  IN_PROGRESS 1 attempt(s)",
		"evt_2  github  push\n  a  IN_PROGRESS 1 attempt(s)\n  b  no record"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	var buf bytes.Buffer
	op := &Operator{Resources: Resources{Where: "test", Lanes: []Lane{{Destination: "a"}}}, Recent: m, Out: &buf}
	if _, err := op.Events(ctx, EventsOptions{Since: t0, Destination: "nope"}); err == nil || !strings.Contains(err.Error(), "destinations: a") {
		t.Errorf("an unknown destination: %v, want the destinations named", err)
	}
}
