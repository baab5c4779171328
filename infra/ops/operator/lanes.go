package operator

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// laneFor builds the pause machinery of one lane, as the operator drives
// it. A lane that does not pause gets the default rule, which only resume
// uses: it puts right a lane left paused when its pause setting was
// removed.
func (o *Operator) laneFor(l Lane) (*pausing.Controller, pausing.Rule, error) {
	if o.LaneStore == nil || o.Switch == nil {
		return nil, pausing.Rule{}, errors.New("lanes: no lane store or switch configured")
	}
	policy := pausing.Rule{PauseRule: config.PauseRule{ProbeEvery: config.DefaultProbeEvery, MaxPause: config.DefaultMaxPause}, Retention: l.Retention}
	if l.Pause != nil {
		policy = *l.Pause
	}
	if policy.Retention <= 0 {
		return nil, policy, fmt.Errorf("destination %s: %s does not say its queue's retention (an index written before lanes could pause?): deploy this version first", l.Destination, o.Resources.Where)
	}
	ln, err := pausing.New(pausing.Options{Destination: l.Destination, Rule: policy, Store: o.LaneStore, Switch: o.Switch(l), Now: o.Now})
	return ln, policy, err
}

// LaneStatus is one lane as the lanes and lane commands show it.
type LaneStatus struct {
	Destination string
	// Pauses is false when the destination does not pause.
	Pauses bool
	Policy pausing.Rule
	State  pausing.State
}

// Lanes lists every lane's mode: paused or active, since when, by whom
// and why.
func (o *Operator) Lanes(ctx context.Context) ([]LaneStatus, error) {
	var out []LaneStatus
	for _, l := range o.Resources.Lanes {
		st, err := o.LaneStore.Get(ctx, l.Destination)
		if err != nil {
			return out, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		ls := LaneStatus{Destination: l.Destination, Pauses: l.Pause != nil, State: st}
		if l.Pause != nil {
			ls.Policy = *l.Pause
		}
		out = append(out, ls)
	}
	tw := tabwriter.NewWriter(o.Out, 0, 8, 2, ' ', 0)
	fmt.Fprintln(tw, "DESTINATION\tSTATE\tSINCE\tBY\tDETAIL")
	for _, ls := range out {
		s := ls.State
		switch {
		case s.IsPaused():
			fmt.Fprintf(tw, "%s\tpaused\t%s\t%s\t%s; resumes by %s at the latest\n", ls.Destination, stamp(s.PausedAt), s.By, s.Reason, stamp(s.ResumeBy))
		case !ls.Pauses:
			fmt.Fprintf(tw, "%s\tactive\t-\t-\tdoes not pause\n", ls.Destination)
		default:
			fmt.Fprintf(tw, "%s\tactive\t%s\t%s\t%d consecutive failed deliveries\n", ls.Destination, stampOrDash(s.ResumedAt), dash(string(s.ResumedBy)), s.Failures)
		}
	}
	if err := tw.Flush(); err != nil {
		return out, err
	}
	if err := o.printPacing(ctx); err != nil {
		return out, err
	}
	o.printEgress()
	return out, nil
}

// printEgress says, below the lanes, which of them deliver from the static
// egress addresses and what those are: what to give their receivers.
func (o *Operator) printEgress() {
	var static []string
	for _, l := range o.Resources.Lanes {
		if l.Egress == config.EgressStatic {
			static = append(static, l.Destination)
		}
	}
	r := o.Resources
	if len(static) == 0 && len(r.EgressAddresses) == 0 {
		return
	}
	lanes := "no lane yet"
	if len(static) > 0 {
		lanes = "lanes " + strings.Join(static, ", ")
	}
	if r.EgressNote == "" && len(r.EgressAddresses) > 0 {
		o.printf("static egress addresses (%s): %s\n", lanes, strings.Join(r.EgressAddresses, ", "))
		return
	}
	o.printf("static egress (%s): %s\n", lanes, o.staticAddresses())
}

// staticAddresses says where the static lanes deliver from: the
// addresses, or why none are known.
func (o *Operator) staticAddresses() string {
	r := o.Resources
	switch {
	case r.EgressNote != "":
		return r.EgressNote
	case len(r.EgressAddresses) == 0:
		return r.Where + " lists no addresses (deploy this version)"
	}
	return "from " + strings.Join(r.EgressAddresses, ", ")
}

// Lane shows one lane: its mode, its rule, its counts, its probes, the
// pause it has spent within its retention, its event source mapping and
// its queues.
func (o *Operator) Lane(ctx context.Context, destination string) (LaneStatus, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return LaneStatus{}, err
	}
	ln, policy, err := o.laneFor(l)
	if err != nil {
		return LaneStatus{}, err
	}
	s, err := ln.State(ctx)
	if err != nil {
		return LaneStatus{}, err
	}
	ls := LaneStatus{Destination: destination, Pauses: l.Pause != nil, Policy: policy, State: s}
	now := o.now()
	if s.IsPaused() {
		o.printf("lane %s: paused since %s (%s ago) by the %s: %s\n", destination, stamp(s.PausedAt), now.Sub(s.PausedAt).Round(time.Second), s.By, s.Reason)
		o.printf("  resumes by %s at the latest (its bound)", stamp(s.ResumeBy))
		if s.By == pausing.ByOperator {
			o.printf("; not probed: resume it with ops resume %s", destination)
		}
		o.printf("\n")
		if s.Probes > 0 {
			o.printf("  probes: %d; the last at %s: %s\n", s.Probes, stamp(s.LastProbeAt), probeOutcome(s))
		}
	} else {
		o.printf("lane %s: active", destination)
		if !s.ResumedAt.IsZero() {
			o.printf(" since %s (resumed by the %s: %s)", stamp(s.ResumedAt), s.ResumedBy, s.ResumeReason)
		}
		o.printf("\n")
	}
	if !ls.Pauses {
		o.printf("  does not pause (no pause in its configuration)\n")
	} else {
		o.printf("  rule: %s\n", policy.PauseRule)
		o.printf("  consecutive failed deliveries: %d\n", s.Failures)
		if policy.FailureRate > 0 {
			a, f := s.Rate(now, policy.Window)
			o.printf("  over the last %s: about %.0f of %.0f attempts failed\n", policy.Window, f, a)
		}
		o.printf("  paused %s within the last %s, of at most %s\n", policy.Spent(s, now).Round(time.Second), policy.Retention, policy.MaxPause)
	}
	if on, err := o.Switch(l).Enabled(ctx); err != nil {
		o.printf("  event source mapping: unknown (%v)\n", err)
	} else if on {
		o.printf("  event source mapping: enabled\n")
	} else {
		o.printf("  event source mapping: disabled\n")
	}
	q, err := o.depth(ctx, l.QueueURL)
	if err != nil {
		return ls, err
	}
	d, err := o.depth(ctx, l.DLQURL)
	if err != nil {
		return ls, err
	}
	o.printf("  queue: %d visible, %d in flight or hidden; DLQ: %d\n", q.Visible, q.InFlight+q.Delayed, d.total())
	if l.Egress == config.EgressStatic {
		o.printf("  egress: static, %s\n", o.staticAddresses())
	}
	return ls, nil
}

// PauseLane pauses a lane by hand. Probes do not resume it: it lasts until
// ResumeLane, or until its bound (the most a lane may spend paused within
// its queue's retention, so no message expires waiting). A lane the
// deliverer paused passes to the operator.
func (o *Operator) PauseLane(ctx context.Context, destination, reason string) (pausing.Change, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return pausing.Change{}, err
	}
	if l.Pause == nil {
		return pausing.Change{}, fmt.Errorf("destination %s does not pause: its queue keeps no room for a pause (messages could expire while it waits); add \"pause\" to its configuration and deploy", destination)
	}
	ln, _, err := o.laneFor(l)
	if err != nil {
		return pausing.Change{}, err
	}
	c, err := ln.Pause(ctx, pausing.ByOperator, reason)
	if err != nil {
		return c, err
	}
	switch c.Kind {
	case pausing.Pausing:
		o.printf("paused %s until %s at the latest (its bound); resume it with ops resume %s\n", destination, stamp(c.ResumeBy), destination)
		if c.SwitchErr != nil {
			o.printf("warning: its event source mapping is still on (%v); the next probe tick turns it off, and the deliverers hold what they receive meanwhile\n", c.SwitchErr)
		}
	case pausing.Holding:
		o.printf("%s was paused by the deliverer since %s; now held by the operator: probes no longer resume it (until %s at the latest)\n", destination, stamp(c.At), stamp(c.ResumeBy))
	default:
		s, err := ln.State(ctx)
		if err != nil {
			return c, err
		}
		o.printf("%s is already paused by the %s since %s: %s\n", destination, s.By, stamp(s.PausedAt), s.Reason)
	}
	return c, nil
}

// ResumeLane resumes a paused lane by hand: its event source mapping on,
// its counters afresh.
func (o *Operator) ResumeLane(ctx context.Context, destination, reason string) (pausing.Change, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return pausing.Change{}, err
	}
	ln, _, err := o.laneFor(l)
	if err != nil {
		return pausing.Change{}, err
	}
	c, err := ln.Resume(ctx, pausing.ByOperator, reason)
	if err != nil {
		return c, err
	}
	if c.Kind == pausing.Resuming {
		o.printf("resumed %s after %s paused; its event source mapping is on\n", destination, c.PausedFor.Round(time.Second))
	} else {
		o.printf("%s is not paused\n", destination)
	}
	return c, nil
}

func probeOutcome(s pausing.State) string {
	switch {
	case s.LastProbeError != "":
		return s.LastProbeError
	case s.LastProbeStatus != 0:
		return fmt.Sprintf("HTTP %d", s.LastProbeStatus)
	}
	return "running"
}

func stampOrDash(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return stamp(t)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
