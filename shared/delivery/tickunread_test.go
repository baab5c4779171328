package delivery

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

// unreadableGets is a lane store whose reads fail while fail is set.
type unreadableGets struct {
	pausing.Store
	fail *atomic.Bool
}

func (u unreadableGets) Get(ctx context.Context, dest string) (pausing.State, error) {
	if u.fail.Load() {
		return pausing.State{}, errors.New("ProvisionedThroughputExceededException")
	}
	return u.Store.Get(ctx, dest)
}

// TestTickOfAnUnreadableLane: a tick that cannot read a paused lane's
// state fails, reports the mode unknown and records no LanePaused point
// (a 0 would clear the PausedAlarm while the lane stays paused), and logs
// its error as a warning.
func TestTickOfAnUnreadableLane(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, failing(http.StatusServiceUnavailable))
	var fail atomic.Bool
	mem, sw := pausing.NewMemory(), &pausing.MemorySwitch{}
	ps := newPausing(t, sub.URL, secret, config.Pause{AfterFailures: 1}, func(o *laneOptions) {
		policy, _ := pausing.RuleFor(o.Destination)
		l, err := pausing.New(pausing.Options{Destination: o.Destination.Name, Rule: policy, Store: unreadableGets{Store: mem, fail: &fail},
			Switch: sw, ProbeTimeout: ProbeTimeout(o.Destination), Now: o.Now})
		if err != nil {
			t.Fatal(err)
		}
		o.Lane = l
	})
	ctx := context.Background()
	if _, err := ps.h.Handle(ctx, batch(sqsRecord("a", 1))); err != nil {
		t.Fatal(err)
	}
	if s, _ := mem.Get(ctx, "orders"); !s.IsPaused() {
		t.Fatalf("lane not paused: %+v", s)
	}
	ps.clock.Advance(time.Minute)
	fail.Store(true)
	before := len(ps.sink.points)
	rep, err := ps.h.Tick(ctx)
	if err == nil {
		t.Fatal("a tick of an unreadable lane: no error")
	}
	for _, p := range ps.sink.points[before:] {
		if p.Name == metrics.LanePaused {
			t.Errorf("the tick recorded LanePaused %v for a lane whose state it could not read", p.Value)
		}
	}
	if rep.Mode != ModeUnknown {
		t.Errorf("tick report %+v, want mode %s", rep, ModeUnknown)
	}
	warned := false
	for _, l := range ps.logs.lines(t) {
		if l["outcome"] == "tick" && l["level"] == "WARN" && l["error"] != nil {
			warned = true
		}
	}
	if !warned {
		t.Error("no WARN line for the tick's error")
	}
}
