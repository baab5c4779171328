package reconcilejob

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/reconcile"
)

// fakeRunner records what Handle asked of it and answers as told.
type fakeRunner struct {
	source   string
	opts     reconcile.Options
	deadline time.Time
	report   reconcile.Report
	err      error
	calls    int
}

func (f *fakeRunner) Run(ctx context.Context, source string, opts reconcile.Options) (reconcile.Report, error) {
	f.calls++
	f.source, f.opts = source, opts
	f.deadline, _ = ctx.Deadline()
	return f.report, f.err
}

var now = time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)

func handler(r *fakeRunner) *Handler {
	h := NewHandler("stripe", r, nil)
	h.now = func() time.Time { return now }
	return h
}

// invocation is what the function receives when ops reconcile invokes it
// with inv.
func invocation(t *testing.T, inv reconcile.Invocation) Input {
	t.Helper()
	b, err := json.Marshal(inv)
	if err != nil {
		t.Fatal(err)
	}
	var in Input
	if err := json.Unmarshal(b, &in); err != nil {
		t.Fatal(err)
	}
	return in
}

func TestHandleOptions(t *testing.T) {
	for _, tt := range []struct {
		in   Input
		want reconcile.Options
	}{
		{Input{Source: "stripe"}, reconcile.Options{}},
		{Input{Source: "stripe", Since: "24h"}, reconcile.Options{Since: now.Add(-24 * time.Hour)}},
		{Input{Source: "stripe", Since: " 90m ", DryRun: true}, reconcile.Options{Since: now.Add(-90 * time.Minute), DryRun: true}},
		{Input{Source: "stripe", Since: "2026-12-01T00:00:00Z"}, reconcile.Options{Since: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}},
		// reconcile.Invocation's since, as ops reconcile sends it.
		{invocation(t, reconcile.Invocation{Source: "stripe", Since: time.Date(2026, 12, 2, 11, 30, 0, 5, time.UTC), DryRun: true}),
			reconcile.Options{Since: time.Date(2026, 12, 2, 11, 30, 0, 5, time.UTC), DryRun: true}},
	} {
		r := &fakeRunner{report: reconcile.Report{Source: "stripe", Listed: 3}}
		out, err := handler(r).Handle(context.Background(), tt.in)
		if err != nil {
			t.Errorf("%+v: %v", tt.in, err)
			continue
		}
		if r.source != "stripe" || !r.opts.Since.Equal(tt.want.Since) || r.opts.DryRun != tt.want.DryRun {
			t.Errorf("%+v: ran %q with %+v, want %+v", tt.in, r.source, r.opts, tt.want)
		}
		if out.Listed != 3 || out.Source != "stripe" {
			t.Errorf("%+v: output %+v", tt.in, out)
		}
	}
}

// TestHandleRefusesInput: another source's name, or a since that is no
// duration back or past time, runs nothing and says what to send.
func TestHandleRefusesInput(t *testing.T) {
	for _, tt := range []struct {
		in   Input
		want string
	}{
		{Input{}, `source "": this function reconciles "stripe"`},
		{Input{Source: "github"}, `source "github": this function reconciles "stripe"`},
		{Input{Source: "stripe", Since: "-1h"}, "not a positive duration"},
		{Input{Source: "stripe", Since: "0s"}, "not a positive duration"},
		{Input{Source: "stripe", Since: "yesterday"}, "neither a duration nor an RFC 3339 time"},
		{Input{Source: "stripe", Since: "2027-01-01T00:00:00Z"}, "not in the past"},
	} {
		r := &fakeRunner{}
		_, err := handler(r).Handle(context.Background(), tt.in)
		if !errors.Is(err, ErrInput) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: error %v, want ErrInput with %q", tt.in, err, tt.want)
		}
		if r.calls != 0 {
			t.Errorf("%+v: ran anyway", tt.in)
		}
	}
}

// TestHandleStoppedIsNoInvocationError: a run the provider stopped
// returns its report (the metric and log line carry it to the alarm);
// any other failure fails the invocation.
func TestHandleStoppedIsNoInvocationError(t *testing.T) {
	stopped := &fakeRunner{report: reconcile.Report{Source: "stripe", Stopped: reconcile.ReasonUnauthorized, Reasons: []string{"unauthorized: 401"}},
		err: fmt.Errorf("%w: stripe: unauthorized: 401", reconcile.ErrStopped)}
	out, err := handler(stopped).Handle(context.Background(), Input{Source: "stripe"})
	if err != nil || out.Stopped != reconcile.ReasonUnauthorized || len(out.Reasons) != 1 {
		t.Errorf("stopped run: %+v, %v", out, err)
	}
	broken := &fakeRunner{err: errors.New("boom")}
	if _, err := handler(broken).Handle(context.Background(), Input{Source: "stripe"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("failed run: %v", err)
	}
}

// TestHandleReservesTime: the run's deadline ends Reserve before the
// invocation's, so that it stops with its reason said.
func TestHandleReservesTime(t *testing.T) {
	deadline := time.Now().Add(time.Minute)
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	r := &fakeRunner{}
	if _, err := handler(r).Handle(ctx, Input{Source: "stripe"}); err != nil {
		t.Fatal(err)
	}
	if !r.deadline.Equal(deadline.Add(-Reserve)) {
		t.Errorf("the run's deadline is %v, want %v", r.deadline, deadline.Add(-Reserve))
	}
	// Without a deadline (a test, the local stack), none is made up.
	r = &fakeRunner{}
	if _, err := handler(r).Handle(context.Background(), Input{Source: "stripe"}); err != nil || !r.deadline.IsZero() {
		t.Errorf("deadline %v, %v", r.deadline, err)
	}
}
