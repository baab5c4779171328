package operator

import (
	"context"
	"fmt"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// The views below return what the commands print, as values, for the web
// console (infra/ops/console): the console and the command line read the
// stack through the same calls, so the two cannot disagree.

// QueueDepth is a queue's approximate message counts.
type QueueDepth struct {
	Visible, InFlight, Delayed int
}

// Total is every message the queue holds.
func (d QueueDepth) Total() int { return d.Visible + d.InFlight + d.Delayed }

// LaneView is one lane as the console shows it.
type LaneView struct {
	Lane
	// State is the lane's pause state (active or paused, by whom and why).
	State pausing.State
	// Queue and DLQ are the lane's queues' depths.
	Queue, DLQ QueueDepth
	// Rate is the configured rate limit and RateInForce the rate the lane
	// sends at now (adaptive level, operator's cap); "" when not paced.
	Rate, RateInForce string
	// EgressAddresses says where a static lane delivers from ("" when the
	// lane delivers from public addresses).
	EgressAddresses string
}

// LaneViews reads every lane's state, queues and rate.
func (o *Operator) LaneViews(ctx context.Context) ([]LaneView, error) {
	var out []LaneView
	for _, l := range o.Resources.Lanes {
		v, err := o.laneView(ctx, l)
		if err != nil {
			return out, err
		}
		out = append(out, v)
	}
	return out, nil
}

// LaneView reads one lane's state, queues and rate.
func (o *Operator) LaneView(ctx context.Context, destination string) (LaneView, error) {
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return LaneView{}, err
	}
	return o.laneView(ctx, l)
}

func (o *Operator) laneView(ctx context.Context, l Lane) (LaneView, error) {
	v := LaneView{Lane: l}
	var err error
	if o.LaneStore != nil {
		if v.State, err = o.LaneStore.Get(ctx, l.Destination); err != nil {
			return v, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
	}
	q, err := o.depth(ctx, l.QueueURL)
	if err != nil {
		return v, err
	}
	d, err := o.depth(ctx, l.DLQURL)
	if err != nil {
		return v, err
	}
	v.Queue, v.DLQ = QueueDepth(q), QueueDepth(d)
	if l.Pace != nil && o.PaceStore != nil {
		s, err := o.PaceStore.Get(ctx, l.Destination)
		if err != nil {
			return v, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		v.Rate, v.RateInForce = configured(*l.Pace), describeRate(*l.Pace, s, o.now())
	}
	if l.Egress == config.EgressStatic {
		v.EgressAddresses = o.staticAddresses()
	}
	return v, nil
}

// DLQPageView lists up to limit messages of a lane's DLQ with each event's
// last error, without consuming them (as the dlq command, which prints it).
func (o *Operator) DLQPageView(ctx context.Context, destination string, limit int) (DLQPage, error) {
	quiet := o.quiet()
	return quiet.DLQ(ctx, destination, limit)
}

// EventView is one event at every destination (as the status command,
// which prints it), with its body.
func (o *Operator) EventView(ctx context.Context, event string) (EventStatus, Body, error) {
	quiet := o.quiet()
	st, err := quiet.Status(ctx, event)
	if err != nil {
		return st, Body{}, err
	}
	body, err := o.EventBody(ctx, st)
	return st, body, err
}

// quiet is a copy of the operator that prints nowhere: the views return
// what the commands print.
func (o *Operator) quiet() *Operator {
	c := *o
	c.Out, c.Progress = discard{}, nil
	return &c
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Answer renders an attempt's outcome: the HTTP status, and the error
// when it says more than the status (as the commands print it).
func Answer(status int, err string) string { return strings.TrimSpace(answer(status, err)) }
