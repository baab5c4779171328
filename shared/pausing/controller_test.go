package pausing_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// flakySwitch is a MemorySwitch whose calls can fail.
type flakySwitch struct {
	pausing.MemorySwitch
	mu         sync.Mutex
	fail       error
	enableFail error // Enable alone fails with it
}

func (f *flakySwitch) failEnable(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.enableFail = err
}

func (f *flakySwitch) err() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fail
}

func (f *flakySwitch) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

func (f *flakySwitch) Enable(ctx context.Context) error {
	if err := f.err(); err != nil {
		return err
	}
	f.mu.Lock()
	err := f.enableFail
	f.mu.Unlock()
	if err != nil {
		return err
	}
	return f.MemorySwitch.Enable(ctx)
}

func (f *flakySwitch) Disable(ctx context.Context) error {
	if err := f.err(); err != nil {
		return err
	}
	return f.MemorySwitch.Disable(ctx)
}

func (f *flakySwitch) on(t *testing.T) bool {
	t.Helper()
	on, err := f.MemorySwitch.Enabled(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return on
}

type fixture struct {
	store *pausing.Memory
	sw    *flakySwitch
	clock *clock
	pol   pausing.Rule
}

func newFixture(rule config.PauseRule) *fixture {
	if rule.ProbeEvery == 0 {
		rule.ProbeEvery = time.Minute
	}
	if rule.MaxPause == 0 {
		rule.MaxPause = 3 * time.Hour
	}
	return &fixture{store: pausing.NewMemory(), sw: &flakySwitch{}, clock: &clock{t: t0},
		pol: pausing.Rule{PauseRule: rule, Retention: 10 * time.Hour}}
}

// instance is one deliver instance's view of the lane.
func (f *fixture) instance(t *testing.T) *pausing.Controller {
	t.Helper()
	l, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: f.store, Switch: f.sw,
		ProbeTimeout: 20 * time.Second, Now: f.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func (f *fixture) state(t *testing.T) pausing.State {
	t.Helper()
	s, err := f.store.Get(context.Background(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func tally(outcomes ...bool) pausing.Tally {
	var t pausing.Tally
	for _, ok := range outcomes {
		t.Add(ok)
	}
	return t
}

func TestObservePausesAtThreshold(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 5})
	l := f.instance(t)
	c, err := l.Observe(ctx, tally(false, false, false, false))
	if err != nil || c.Kind != pausing.NoChange {
		t.Fatalf("4 failures: %+v, %v; want no change", c, err)
	}
	c, err = l.Observe(ctx, tally(false))
	if err != nil {
		t.Fatal(err)
	}
	want := pausing.Change{Kind: pausing.Pausing, Reason: "5 consecutive failed deliveries", By: pausing.ByDeliverer, At: t0, ResumeBy: t0.Add(3 * time.Hour)}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("5th failure (-want +got):\n%s", diff)
	}
	if f.sw.on(t) {
		t.Error("the mapping is on after the pause")
	}
	if s := f.state(t); !s.IsPaused() || s.By != pausing.ByDeliverer {
		t.Errorf("stored state %+v, want paused by the deliverer", s)
	}
	if paused, _ := l.Paused(ctx); !paused {
		t.Error("Paused() = false right after pausing")
	}
}

// TestSuccessResetsTheCount: a success between failures means the
// destination is up; the count starts again.
func TestSuccessResetsTheCount(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 5})
	l := f.instance(t)
	for _, b := range []pausing.Tally{tally(false, false, false), tally(false, true), tally(false, false, false, false)} {
		if c, err := l.Observe(ctx, b); err != nil || c.Kind != pausing.NoChange {
			t.Fatalf("Observe = %+v, %v; want no change", c, err)
		}
	}
	if s := f.state(t); s.IsPaused() || s.Failures != 4 {
		t.Errorf("state %+v, want active with 4 consecutive failures", s)
	}
}

func TestObservePausesOnRate(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{FailureRate: 0.5, Window: time.Minute, MinAttempts: 10})
	l := f.instance(t)
	// Successes keep the consecutive count low, but half the attempts fail.
	for range 4 {
		if c, _ := l.Observe(ctx, tally(false, true)); c.Kind != pausing.NoChange {
			t.Fatalf("paused after too few attempts: %+v", c)
		}
	}
	c, err := l.Observe(ctx, tally(false, true))
	if err != nil || c.Kind != pausing.Pausing || !strings.HasPrefix(c.Reason, "50% of about 10 deliveries failed") {
		t.Errorf("10 attempts, half failed: %+v, %v; want a pause for the rate", c, err)
	}
}

// TestOneInstancePauses: two deliver instances see the threshold crossed
// by the same count; one pauses, the other finds it done.
func TestOneInstancePauses(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 2})
	a, b := f.instance(t), f.instance(t)
	if _, err := a.Observe(ctx, tally(false)); err != nil {
		t.Fatal(err)
	}
	// b counts the second failure but a pauses first from the same state.
	s, _ := f.store.Count(ctx, "orders", tally(false), t0, 0)
	if _, err := f.store.Pause(ctx, "orders", pausing.PauseInput{At: t0, ResumeBy: t0.Add(time.Hour), Reason: "a", By: pausing.ByDeliverer, Version: s.Version}); err != nil {
		t.Fatal(err)
	}
	c, err := b.Observe(ctx, tally(false))
	if err != nil || c.Kind != pausing.NoChange {
		t.Errorf("b: %+v, %v; want no change (already paused)", c, err)
	}
	if s := f.state(t); s.Version != 1 || s.Reason != "a" {
		t.Errorf("state %+v: want a's one pause", s)
	}
}

// TestNoPausePastTheBound: a lane that spent its MaxPause within the
// retention keeps delivering (its events reach the DLQ after their last
// attempt) rather than holding messages past what the queue keeps.
func TestNoPausePastTheBound(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1, MaxPause: 2 * time.Hour})
	l := f.instance(t)
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatalf("first pause: %+v", c)
	}
	f.clock.Advance(2 * time.Hour)
	res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		t.Fatal("probed a lane whose pause reached its bound")
		return pausing.ProbeResult{}
	})
	if err != nil || res.Change.Kind != pausing.Resuming || !strings.HasPrefix(res.Change.Reason, "the pause reached its bound") {
		t.Fatalf("tick at the bound: %+v, %v", res.Change, err)
	}
	if !f.sw.on(t) {
		t.Error("the mapping is off after the resume")
	}
	f.clock.Advance(time.Hour)
	c, err := l.Observe(ctx, tally(false))
	if err != nil || c.Kind != pausing.NoChange || !strings.Contains(c.NotPaused, "keeps delivering") {
		t.Errorf("a trip with the budget spent: %+v, %v; want NotPaused", c, err)
	}
	if f.state(t).IsPaused() || !f.sw.on(t) {
		t.Error("paused again past the bound")
	}
	// Once the first pause leaves the retention, pausing is possible again.
	f.clock.Advance(10 * time.Hour)
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing || c.ResumeBy != f.clock.Now().Add(2*time.Hour) {
		t.Errorf("a trip once the old pause left the retention: %+v", c)
	}
}

// TestPausedFreshness: an instance trusts what it knows for Fresh, then
// reads the lane again.
func TestPausedFreshness(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	a, b := f.instance(t), f.instance(t)
	if p, _ := b.Paused(ctx); p {
		t.Fatal("b sees a new lane paused")
	}
	if c, _ := a.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("a did not pause")
	}
	if p, _ := b.Paused(ctx); p {
		t.Error("b read again before its knowledge went stale")
	}
	f.clock.Advance(pausing.DefaultFresh)
	if p, _ := b.Paused(ctx); !p {
		t.Error("b does not see the pause once its knowledge went stale")
	}
}

func TestTickProbes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	probes := 0
	answer := pausing.ProbeResult{Status: 503, Error: "HTTP 503"}
	probe := func(_ context.Context, s pausing.State) pausing.ProbeResult {
		probes++
		if !s.IsPaused() || s.Probes != probes {
			t.Errorf("probe %d given state %+v", probes, s)
		}
		return answer
	}

	res, err := l.Tick(ctx, probe)
	if err != nil || res.Probe != nil || probes != 0 {
		t.Fatalf("tick of an active lane: %+v, %v; want nothing done", res, err)
	}
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	f.clock.Advance(time.Minute)
	res, err = l.Tick(ctx, probe)
	if err != nil || res.Probe == nil || res.Probe.OK || res.Change.Kind != pausing.NoChange {
		t.Fatalf("failed probe: %+v, %v; want the lane still paused", res, err)
	}
	if s := f.state(t); !s.IsPaused() || s.LastProbeStatus != 503 || s.Probes != 1 || !s.ProbeUntil.IsZero() {
		t.Errorf("after a failed probe: %+v", s)
	}
	if f.sw.on(t) {
		t.Error("the mapping is on after a failed probe")
	}

	f.clock.Advance(time.Minute)
	answer = pausing.ProbeResult{OK: true, Status: 204}
	res, err = l.Tick(ctx, probe)
	if err != nil {
		t.Fatal(err)
	}
	want := pausing.Change{Kind: pausing.Resuming, Reason: "a probe was answered 204 No Content", By: pausing.ByDeliverer, At: t0.Add(2 * time.Minute), PausedFor: 2 * time.Minute}
	if diff := cmp.Diff(want, res.Change); diff != "" {
		t.Errorf("answered probe (-want +got):\n%s", diff)
	}
	s := f.state(t)
	if s.IsPaused() || s.Failures != 0 || len(s.Pauses) != 1 || s.Pauses[0] != (pausing.Interval{From: t0, To: t0.Add(2 * time.Minute)}) {
		t.Errorf("after the resume: %+v; want active, counters reset, the pause kept", s)
	}
	if !f.sw.on(t) {
		t.Error("the mapping is off after the resume")
	}
}

// TestTickReconciles: a paused lane whose mapping was turned on behind its
// back (a deploy, the console) is turned off again at the next tick.
func TestTickReconciles(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	f.sw.setFail(errors.New("throttled"))
	c, err := l.Observe(ctx, tally(false))
	if err != nil || c.Kind != pausing.Pausing || c.SwitchErr == nil {
		t.Fatalf("pause with the switch failing: %+v, %v; want paused with SwitchErr", c, err)
	}
	if !f.sw.on(t) || !f.state(t).IsPaused() {
		t.Fatal("want the lane recorded paused with its mapping still on")
	}
	f.sw.setFail(nil)
	res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult { return pausing.ProbeResult{Status: 500} })
	if err != nil || res.Reconciled != "off" || f.sw.on(t) {
		t.Errorf("tick: %+v, %v; want the mapping turned off", res, err)
	}
}

// racingSwitch runs before once, just before the first Disable: what lands
// between a pause's write and its mapping's disable.
type racingSwitch struct {
	*flakySwitch
	once   sync.Once
	before func()
}

func (r *racingSwitch) Disable(ctx context.Context) error {
	r.once.Do(r.before)
	return r.flakySwitch.Disable(ctx)
}

// TestResumeRacingAPause: an operator's resume lands between the
// deliverer's pause write and its disable, so the disable turns off the
// mapping of a lane recorded active. The pause notices and turns it on
// again; when that fails too, the next tick does.
func TestResumeRacingAPause(t *testing.T) {
	for _, enableFails := range []bool{false, true} {
		t.Run(map[bool]string{false: "the pause turns it back on", true: "the tick turns it back on"}[enableFails], func(t *testing.T) {
			ctx := context.Background()
			f := newFixture(config.PauseRule{AfterFailures: 1})
			op, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: f.store, Switch: f.sw, Now: f.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			race := &racingSwitch{flakySwitch: f.sw, before: func() {
				if c, err := op.Resume(ctx, pausing.ByOperator, "ops resume"); err != nil || c.Kind != pausing.Resuming {
					t.Errorf("operator resume in the race: %+v, %v", c, err)
				}
				if enableFails {
					f.sw.failEnable(errors.New("throttled"))
				}
			}}
			l, err := pausing.New(pausing.Options{Destination: "orders", Rule: f.pol, Store: f.store, Switch: race, Now: f.clock.Now})
			if err != nil {
				t.Fatal(err)
			}
			c, err := l.Observe(ctx, tally(false))
			if err != nil || c.Kind != pausing.Pausing {
				t.Fatalf("pause: %+v, %v", c, err)
			}
			if f.state(t).IsPaused() {
				t.Fatal("want the lane recorded active: the resume came last")
			}
			if !enableFails {
				if !f.sw.on(t) {
					t.Error("the lane is active and its mapping off after the race")
				}
				return
			}
			if c.SwitchErr == nil || f.sw.on(t) {
				t.Fatalf("pause: %+v, mapping on %v; want the failed re-enable reported and the mapping off", c, f.sw.on(t))
			}
			f.sw.failEnable(nil)
			f.clock.Advance(time.Minute)
			res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
				t.Error("probed an active lane")
				return pausing.ProbeResult{}
			})
			if err != nil || res.Reconciled != "on" || !f.sw.on(t) {
				t.Errorf("tick: %+v, %v; want the active lane's mapping turned on", res, err)
			}
		})
	}
}

// TestTickTurnsOnAnActiveLanesMapping: a lane recorded active whose
// mapping is off (however it came to be) is turned on by the next tick;
// one that agrees is left alone.
func TestTickTurnsOnAnActiveLanesMapping(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	noProbe := func(context.Context, pausing.State) pausing.ProbeResult {
		t.Error("probed an active lane")
		return pausing.ProbeResult{}
	}
	res, err := l.Tick(ctx, noProbe)
	if err != nil || res.Reconciled != "" || !f.sw.on(t) || f.sw.Flips() != 0 {
		t.Fatalf("tick of an active lane, mapping on: %+v, %v; want nothing done", res, err)
	}
	if err := f.sw.MemorySwitch.Disable(ctx); err != nil {
		t.Fatal(err)
	}
	res, err = l.Tick(ctx, noProbe)
	if err != nil || res.Reconciled != "on" || !f.sw.on(t) {
		t.Errorf("tick: %+v, %v; want the mapping turned on", res, err)
	}
	if f.state(t).IsPaused() {
		t.Error("the tick paused the lane")
	}
}

func TestTickOneProbeAtATime(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	if _, err := f.store.StartProbe(ctx, "orders", t0, t0.Add(20*time.Second)); err != nil {
		t.Fatal(err)
	}
	res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		t.Error("probed while another probe runs")
		return pausing.ProbeResult{}
	})
	if err != nil || !res.Busy {
		t.Errorf("tick: %+v, %v; want Busy", res, err)
	}
}

// TestOperatorPauseAndResume: an operator's pause is not probed away; it
// ends by the operator's hand or at the bound.
func TestOperatorPauseAndResume(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	op := f.instance(t)
	c, err := op.Pause(ctx, pausing.ByOperator, "subscriber maintenance")
	if err != nil || c.Kind != pausing.Pausing || c.ResumeBy != t0.Add(3*time.Hour) || f.sw.on(t) {
		t.Fatalf("Pause: %+v, %v", c, err)
	}
	if c, err := op.Pause(ctx, pausing.ByOperator, "again"); err != nil || c.Kind != pausing.NoChange {
		t.Errorf("a second Pause: %+v, %v; want no change", c, err)
	}
	deliverer := f.instance(t)
	res, err := deliverer.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		t.Error("probed an operator's pause")
		return pausing.ProbeResult{OK: true, Status: 200}
	})
	if err != nil || res.Probe != nil || !f.state(t).IsPaused() {
		t.Errorf("tick of an operator's pause: %+v, %v; want it left paused", res, err)
	}
	f.clock.Advance(10 * time.Minute)
	c, err = op.Resume(ctx, pausing.ByOperator, "maintenance over")
	if err != nil || c.Kind != pausing.Resuming || c.PausedFor != 10*time.Minute || !f.sw.on(t) {
		t.Errorf("Resume: %+v, %v", c, err)
	}
	if c, err := op.Resume(ctx, pausing.ByOperator, "again"); err != nil || c.Kind != pausing.NoChange {
		t.Errorf("Resume of an active lane: %+v, %v; want no change", c, err)
	}
}

// TestOperatorTakesOver: an operator pausing a lane the deliverer paused
// holds it: probes no longer end it.
func TestOperatorTakesOver(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	f.clock.Advance(time.Minute)
	c, err := l.Pause(ctx, pausing.ByOperator, "hold until the subscriber's fix ships")
	if err != nil || c.Kind != pausing.Holding || c.At != t0 || c.ResumeBy != t0.Add(3*time.Hour) {
		t.Fatalf("takeover: %+v, %v", c, err)
	}
	if f.sw.Flips() != 1 {
		t.Errorf("the switch flipped %d times, want once (the first pause)", f.sw.Flips())
	}
	res, _ := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		t.Error("probed a held lane")
		return pausing.ProbeResult{}
	})
	if res.Probe != nil {
		t.Error("probe sent")
	}
}

func TestOperatorPauseRefusedPastTheBound(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1, MaxPause: time.Hour})
	l := f.instance(t)
	if _, err := l.Pause(ctx, pausing.ByOperator, "one"); err != nil {
		t.Fatal(err)
	}
	f.clock.Advance(time.Hour - 30*time.Second)
	if _, err := l.Resume(ctx, pausing.ByOperator, "done"); err != nil {
		t.Fatal(err)
	}
	_, err := l.Pause(ctx, pausing.ByOperator, "two")
	if !errors.Is(err, pausing.ErrNoBudget) {
		t.Errorf("Pause with 30s of budget left (less than one probe interval) = %v, want ErrNoBudget", err)
	}
}

func TestResumeNeedsTheSwitch(t *testing.T) {
	ctx := context.Background()
	f := newFixture(config.PauseRule{AfterFailures: 1})
	l := f.instance(t)
	if c, _ := l.Observe(ctx, tally(false)); c.Kind != pausing.Pausing {
		t.Fatal("no pause")
	}
	f.sw.setFail(errors.New("access denied"))
	res, err := l.Tick(ctx, func(context.Context, pausing.State) pausing.ProbeResult {
		return pausing.ProbeResult{OK: true, Status: 200}
	})
	if err == nil || res.Change.Kind != pausing.NoChange {
		t.Errorf("tick with the switch failing: %+v, %v; want an error and no resume", res.Change, err)
	}
	if !f.state(t).IsPaused() {
		t.Error("recorded active while its mapping stayed off")
	}
}

func TestNewRequiresOptions(t *testing.T) {
	_, err := pausing.New(pausing.Options{})
	want := []string{
		"lane: option Destination is required", "lane: option Store is required", "lane: option Switch is required",
		"lane: option Rule.ProbeEvery is required", "lane: option Rule.MaxPause is required", "lane: option Rule.Retention is required",
	}
	if err == nil {
		t.Fatal("New accepted empty options")
	}
	if diff := cmp.Diff(want, strings.Split(err.Error(), "\n")); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
}
