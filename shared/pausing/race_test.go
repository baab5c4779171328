package pausing_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// raceBefore runs before once, just before the first call of the store
// method it is set on: what lands in between.
type raceBefore struct {
	pausing.Store
	once                      sync.Once
	beforeProbe, beforeResume func()
}

func (r *raceBefore) StartProbe(ctx context.Context, dest string, at, until time.Time) (pausing.State, error) {
	if r.beforeProbe != nil {
		r.once.Do(r.beforeProbe)
	}
	return r.Store.StartProbe(ctx, dest, at, until)
}

func (r *raceBefore) Resume(ctx context.Context, dest string, in pausing.ResumeInput) (pausing.State, error) {
	if r.beforeResume != nil {
		r.once.Do(r.beforeResume)
	}
	return r.Store.Resume(ctx, dest, in)
}

// TestTickDoesNotProbeAwayATakeover: an operator takes over the
// deliverer's pause between a tick's read of the lane and its probe lease.
// The tick sends no probe, and the operator's hold stands: an operator's
// pause is not probed away.
func TestTickDoesNotProbeAwayATakeover(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	op := f.instance(t)
	store := &raceBefore{Store: f.store, beforeProbe: func() {
		if c, err := op.Pause(ctx, pausing.ByOperator, "hold until the subscriber's fix ships"); err != nil || c.Kind != pausing.Holding {
			t.Errorf("the operator's takeover: %+v, %v", c, err)
		}
	}}
	l, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: store, Switch: f.sw, ProbeTimeout: 20 * time.Second, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	f.clock.Advance(time.Minute)
	probed := false
	res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		probed = true
		return pausing.ProbeResult{OK: true, Status: 200}
	})
	if err != nil {
		t.Fatal(err)
	}
	if s := f.state(t); probed || res.Change.Kind == pausing.Resuming || !s.IsPaused() || s.By != pausing.ByOperator || f.sw.on(t) {
		t.Errorf("probed %v, change %q, paused %v by %q, mapping on %v; want the operator's hold kept, unprobed, its mapping off",
			probed, res.Change.Kind, s.IsPaused(), s.By, f.sw.on(t))
	}
}

// pausedByTheDeliverer is a lane the deliverer paused a minute ago, and
// the controller that paused it.
func pausedByTheDeliverer(t *testing.T) (*fixture, *pausing.Controller) {
	t.Helper()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	deliverer := f.instance(t)
	if c, _ := deliverer.Observe(context.Background(), tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	f.clock.Advance(time.Minute)
	return f, deliverer
}

// TestResumeRacingATick: a tick runs between an operator's resume turning
// the mapping on and its write of the lane active, reads the lane paused
// with its mapping on, and turns the mapping off. The resume finds it off
// and turns it on again: a lane recorded active delivers.
func TestResumeRacingATick(t *testing.T) {
	ctx := context.Background()
	f, deliverer := pausedByTheDeliverer(t)
	store := &raceBefore{Store: f.store, beforeResume: func() {
		res, err := deliverer.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
			return pausing.ProbeResult{Status: 503, Error: "HTTP 503"}
		})
		if res.Reconciled != "off" {
			t.Errorf("the tick in the race reconciled %q (%v), want the mapping turned off: the race this test is about", res.Reconciled, err)
		}
	}}
	op, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: store, Switch: f.sw, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := op.Resume(ctx, pausing.ByOperator, "ops resume"); err != nil || c.Kind != pausing.Resuming {
		t.Fatalf("resume: %+v, %v", c, err)
	}
	if f.state(t).IsPaused() || !f.sw.on(t) {
		t.Errorf("after the resume: paused %v, mapping on %v; want the lane active and its mapping on", f.state(t).IsPaused(), f.sw.on(t))
	}
}

// TestTickRacingAResume: the other order. A resume writes the lane active
// between a tick's second read of it (paused) and the tick turning the
// mapping off: the tick reads the lane again and turns the mapping back on.
func TestTickRacingAResume(t *testing.T) {
	ctx := context.Background()
	f, _ := pausedByTheDeliverer(t)
	// The mapping is on, as a resume leaves it before its write.
	if err := f.sw.Enable(ctx); err != nil {
		t.Fatal(err)
	}
	sw := &racingSwitch{flakySwitch: f.sw, before: func() {
		s := f.state(t)
		if _, err := f.store.Resume(ctx, "orders", pausing.ResumeInput{At: f.clock.Now(), Reason: "ops resume", By: pausing.ByOperator, Version: s.Version}); err != nil {
			t.Errorf("the resume's write in the race: %v", err)
		}
	}}
	l, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: f.store, Switch: sw, ProbeTimeout: 20 * time.Second, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult { return pausing.ProbeResult{Status: 503} }); err != nil {
		t.Fatal(err)
	}
	if f.state(t).IsPaused() || !f.sw.on(t) {
		t.Errorf("after the tick: paused %v, mapping on %v; want the lane active and its mapping on", f.state(t).IsPaused(), f.sw.on(t))
	}
}
