package pausing

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"
)

// Store keeps lanes' state (DynamoDB, or Memory).
type Store interface {
	Get(ctx context.Context, dest string) (State, error)
	Count(ctx context.Context, dest string, t Tally, at time.Time, width time.Duration) (State, error)
	Pause(ctx context.Context, dest string, in PauseInput) (State, error)
	Resume(ctx context.Context, dest string, in ResumeInput) (State, error)
	StartProbe(ctx context.Context, dest string, at, until time.Time) (State, error)
	FinishProbe(ctx context.Context, dest string, r ProbeResult) error
}

// Switch turns a lane's event source mapping on and off
// (EventSourceMapping, or MemorySwitch).
type Switch interface {
	Enabled(ctx context.Context) (bool, error)
	Enable(ctx context.Context) error
	Disable(ctx context.Context) error
}

// Defaults of Options.
const (
	// DefaultFresh is how long an instance trusts the lane's mode it last
	// read or wrote. A batch finding it older reads it again.
	DefaultFresh = 2 * time.Second
	// DefaultProbeTimeout bounds a probe when Options give none.
	DefaultProbeTimeout = time.Minute
)

// Options configure a Controller. Destination, Rule, Store and Switch are
// required.
type Options struct {
	Destination string
	Rule        Rule
	Store       Store
	Switch      Switch
	// ProbeTimeout is the longest one probe runs: while it runs, no other
	// probe of the lane starts.
	ProbeTimeout time.Duration
	// Fresh is how long the mode last read or written is trusted.
	Fresh time.Duration
	// Now replaces the clock, for tests.
	Now func() time.Time
}

// Controller is one lane's pause machinery, as one deliver instance (or an
// operator) sees it. It is safe for concurrent use.
type Controller struct {
	dest         string
	rule         Rule
	store        Store
	sw           Switch
	probeTimeout time.Duration
	fresh        time.Duration
	now          func() time.Time

	mu      sync.Mutex
	known   State
	knownAt time.Time
}

// New checks the options and returns a Controller.
func New(o Options) (*Controller, error) {
	var missing []error
	for _, r := range []struct {
		name string
		ok   bool
	}{{"Destination", o.Destination != ""}, {"Store", o.Store != nil}, {"Switch", o.Switch != nil},
		{"Rule.ProbeEvery", o.Rule.ProbeEvery > 0}, {"Rule.MaxPause", o.Rule.MaxPause > 0}, {"Rule.Retention", o.Rule.Retention > 0}} {
		if !r.ok {
			missing = append(missing, fmt.Errorf("lane: option %s is required", r.name))
		}
	}
	if err := errors.Join(missing...); err != nil {
		return nil, err
	}
	l := &Controller{dest: o.Destination, rule: o.Rule, store: o.Store, sw: o.Switch,
		probeTimeout: o.ProbeTimeout, fresh: o.Fresh, now: o.Now}
	if l.probeTimeout <= 0 {
		l.probeTimeout = DefaultProbeTimeout
	}
	if l.fresh <= 0 {
		l.fresh = DefaultFresh
	}
	if l.now == nil {
		l.now = time.Now
	}
	return l, nil
}

// Rule is the lane's pause policy.
func (l *Controller) Rule() Rule { return l.rule }

// ChangeKind says how a lane's mode changed.
type ChangeKind string

// Kinds of change.
const (
	NoChange ChangeKind = ""
	// Pausing: the lane paused.
	Pausing ChangeKind = "paused"
	// Resuming: the lane resumed.
	Resuming ChangeKind = "resumed"
	// Holding: a paused lane changed hands (an operator took over a pause
	// the deliverer made, so probes no longer end it).
	Holding ChangeKind = "held"
)

// Change is what a call did to the lane's mode.
type Change struct {
	Kind   ChangeKind
	Reason string
	By     By
	At     time.Time
	// ResumeBy is when a pause ends at the latest.
	ResumeBy time.Time
	// PausedFor is how long a resumed pause lasted.
	PausedFor time.Duration
	// NotPaused says why a rule that tripped did not pause the lane: its
	// pauses within the retention add up to its bound.
	NotPaused string
	// SwitchErr is set when the lane paused but its event source mapping
	// could not be turned off: the next tick turns it off, and until then
	// the deliverers hold what they receive.
	SwitchErr error
}

// ErrNoBudget means the lane's pauses within its queue's retention
// already add up to its bound: another pause could outlast what the queue
// keeps.
var ErrNoBudget = errors.New("the lane has no pause left within its queue's retention")

func (l *Controller) remember(s State) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.known, l.knownAt = s, l.now()
}

// Observe counts a batch's attempts on the lane and pauses it when its
// rule trips. An error leaves deliveries alone: counting is a side path.
func (l *Controller) Observe(ctx context.Context, t Tally) (Change, error) {
	if t.Attempts == 0 {
		return Change{}, nil
	}
	s, err := l.store.Count(ctx, l.dest, t, l.now(), l.rule.Window)
	if err != nil {
		return Change{}, err
	}
	l.remember(s)
	if s.IsPaused() {
		return Change{}, nil
	}
	reason, trips := l.rule.Trip(s, l.now())
	if !trips {
		return Change{}, nil
	}
	c, err := l.pause(ctx, s, ByDeliverer, reason)
	if errors.Is(err, ErrNoBudget) {
		return Change{NotPaused: fmt.Sprintf("%s, but the lane was paused %s within the last %s, its bound (maxPause %s): it keeps delivering, and its messages go on to the DLQ after their last attempt",
			reason, l.rule.Spent(s, l.now()).Round(time.Second), l.rule.Retention, l.rule.MaxPause)}, nil
	}
	return c, err
}

// Paused reports whether the lane is paused, reading its state again when
// what this instance knows is older than Options.Fresh.
func (l *Controller) Paused(ctx context.Context) (bool, error) {
	l.mu.Lock()
	known, at := l.known, l.knownAt
	l.mu.Unlock()
	if !at.IsZero() && l.now().Sub(at) < l.fresh {
		return known.IsPaused(), nil
	}
	s, err := l.State(ctx)
	if err != nil {
		return false, err
	}
	return s.IsPaused(), nil
}

// State reads the lane's state.
func (l *Controller) State(ctx context.Context) (State, error) {
	s, err := l.store.Get(ctx, l.dest)
	if err != nil {
		return State{}, err
	}
	l.remember(s)
	return s, nil
}

// Pause pauses the lane by hand, for at most what its bound leaves. A
// lane the deliverer paused passes to by (no more probes end it); a lane
// already paused by by is left as it is.
func (l *Controller) Pause(ctx context.Context, by By, reason string) (Change, error) {
	s, err := l.State(ctx)
	if err != nil {
		return Change{}, err
	}
	if s.IsPaused() && s.By == by {
		return Change{}, nil
	}
	return l.pause(ctx, s, by, reason)
}

// pause pauses an active lane, or takes over a paused one, if s is still
// its state.
func (l *Controller) pause(ctx context.Context, s State, by By, reason string) (Change, error) {
	now := l.now()
	in := PauseInput{At: now, Reason: reason, By: by, Version: s.Version, Takeover: s.IsPaused()}
	if in.Takeover {
		in.At, in.ResumeBy = s.PausedAt, s.ResumeBy
	} else {
		budget := l.rule.Budget(s, now)
		if budget < l.rule.ProbeEvery {
			return Change{}, fmt.Errorf("pause lane %s: paused %s within the last %s, of at most %s: %w",
				l.dest, l.rule.Spent(s, now).Round(time.Second), l.rule.Retention, l.rule.MaxPause, ErrNoBudget)
		}
		in.ResumeBy = now.Add(budget)
	}
	after, err := l.store.Pause(ctx, l.dest, in)
	if errors.Is(err, ErrChanged) {
		l.remember(after) // another instance or an operator decided first
		return Change{}, nil
	}
	if err != nil {
		return Change{}, err
	}
	l.remember(after)
	c := Change{Kind: Pausing, Reason: reason, By: by, At: in.At, ResumeBy: in.ResumeBy}
	if in.Takeover {
		c.Kind = Holding
		return c, nil
	}
	if err := l.sw.Disable(ctx); err != nil {
		c.SwitchErr = err
		return c, nil
	}
	// A resume may have landed between the pause's write and the disable
	// (an operator's, turning the mapping on before recording the lane
	// active): the disable would then leave an active lane with its mapping
	// off. Read the state again and turn the mapping back on if so; should
	// that fail, the next tick does it.
	if now, err := l.State(ctx); err == nil && !now.IsPaused() {
		if err := l.sw.Enable(ctx); err != nil {
			c.SwitchErr = fmt.Errorf("the lane was resumed meanwhile and its mapping stays off until the next tick: %w", err)
		}
	}
	return c, nil
}

// Resume resumes the lane by hand; an active lane is left as it is.
func (l *Controller) Resume(ctx context.Context, by By, reason string) (Change, error) {
	s, err := l.State(ctx)
	if err != nil || !s.IsPaused() {
		return Change{}, err
	}
	return l.resume(ctx, s, by, reason)
}

// resume turns the mapping on, then records the lane active if s is still
// its state. In that order: a lane recorded active with its mapping off
// would deliver nothing and nothing would notice, while one recorded
// paused with its mapping on is turned off again by the next tick.
func (l *Controller) resume(ctx context.Context, s State, by By, reason string) (Change, error) {
	if err := l.sw.Enable(ctx); err != nil {
		return Change{}, fmt.Errorf("resume lane %s: %w", l.dest, err)
	}
	now := l.now()
	windows := make([]int64, len(s.Windows))
	for i, w := range s.Windows {
		windows[i] = w.Index
	}
	after, err := l.store.Resume(ctx, l.dest, ResumeInput{
		At: now, Reason: reason, By: by, Version: s.Version,
		Pauses: l.rule.Keep(s.Pauses, Interval{From: s.PausedAt, To: now}, now), Clear: windows,
	})
	if errors.Is(err, ErrChanged) {
		l.remember(after)
		if after.IsPaused() {
			// Paused again meanwhile (an operator): the mapping goes back off.
			if derr := l.sw.Disable(ctx); derr != nil {
				return Change{}, fmt.Errorf("resume lane %s: it was paused again meanwhile, and its mapping stays on until the next tick: %w", l.dest, derr)
			}
		}
		return Change{}, nil
	}
	if err != nil {
		return Change{}, err
	}
	l.remember(after)
	// A tick that read the lane still paused, with the mapping this resume
	// turned on, may have turned it off before the write above: the lane
	// would be recorded active and deliver nothing. Read it again (the
	// tick, for its part, reads the state again after turning it off).
	c := Change{Kind: Resuming, Reason: reason, By: by, At: now, PausedFor: now.Sub(s.PausedAt)}
	if on, err := l.sw.Enabled(ctx); err != nil || !on {
		if err == nil {
			err = l.sw.Enable(ctx)
		}
		if err != nil {
			return c, fmt.Errorf("resume lane %s: recorded active, and its mapping may be off until the next tick turns it on: %w", l.dest, err)
		}
	}
	return c, nil
}

// reconcile switches the mapping to agree with s, the lane's recorded
// mode, and says which way it switched it ("" when they agreed). A
// mismatch is acted on only if the state is still s once the mapping was
// read: a pause or resume in progress switches the mapping itself (a pause
// writes the state, then turns the mapping off; a resume turns it on,
// then writes the state), and the next tick sees what it left.
func (l *Controller) reconcile(ctx context.Context, s State) (string, error) {
	on, err := l.sw.Enabled(ctx)
	if err != nil {
		return "", err
	}
	if on != s.IsPaused() {
		return "", nil
	}
	again, err := l.State(ctx)
	if err != nil {
		return "", err
	}
	if again.Version != s.Version || again.Mode != s.Mode {
		return "", nil
	}
	if on {
		if err := l.sw.Disable(ctx); err != nil {
			return "", fmt.Errorf("lane %s is paused and its mapping on; turning it off: %w", l.dest, err)
		}
		// A resume turns the mapping on before it writes the lane active:
		// one that wrote meanwhile finds the mapping on when it looks
		// again, or this finds the lane active.
		after, err := l.State(ctx)
		if err != nil {
			return "off", err
		}
		if !after.IsPaused() {
			if err := l.sw.Enable(ctx); err != nil {
				return "", fmt.Errorf("lane %s was resumed while its mapping was being turned off; turning it on: %w", l.dest, err)
			}
			return "", nil
		}
		return "off", nil
	}
	if err := l.sw.Enable(ctx); err != nil {
		return "", fmt.Errorf("lane %s is active and its mapping off; turning it on: %w", l.dest, err)
	}
	return "on", nil
}

// ProbeFunc sends one probe to a paused lane's destination.
type ProbeFunc func(ctx context.Context, s State) ProbeResult

// TickResult is what a tick did.
type TickResult struct {
	// State is the lane's state when the tick began.
	State State
	// Probe is the probe sent, if any.
	Probe *ProbeResult
	// Change is the resume the tick made, if any.
	Change Change
	// Reconciled is set when the lane's event source mapping disagreed with
	// its recorded mode and the tick switched it: "off" for a paused lane
	// whose mapping was on (a deploy or the console turned it on), "on" for
	// an active lane whose mapping was off (a resume that raced a pause).
	Reconciled string
	// Busy is true when another probe of the lane was running.
	Busy bool
	// Unread is true when the lane's state could not be read: the tick
	// did nothing, and State says nothing of the lane.
	Unread bool
}

// Tick runs on a schedule, on every lane that pauses. It first makes the
// event source mapping agree with the lane's recorded mode: on while
// active, off while paused. For a paused lane it then resumes the lane when
// its pause reached its bound, or, unless an operator paused it, sends one
// probe and resumes the lane when the destination answered 2xx.
func (l *Controller) Tick(ctx context.Context, probe ProbeFunc) (TickResult, error) {
	s, err := l.State(ctx)
	if err != nil {
		return TickResult{Unread: true}, err
	}
	res := TickResult{State: s}
	var errs []error
	if r, err := l.reconcile(ctx, s); err != nil {
		errs = append(errs, err)
	} else {
		res.Reconciled = r
	}
	if !s.IsPaused() {
		return res, errors.Join(errs...)
	}
	now := l.now()
	if !now.Before(s.ResumeBy) {
		res.Change, err = l.resume(ctx, s, ByDeliverer, fmt.Sprintf("the pause reached its bound (paused %s of at most %s within %s)",
			l.rule.Spent(s, now).Round(time.Second), l.rule.MaxPause, l.rule.Retention))
		return res, errors.Join(append(errs, err)...)
	}
	if s.By == ByOperator {
		return res, errors.Join(errs...)
	}
	s, err = l.store.StartProbe(ctx, l.dest, now, now.Add(l.probeTimeout))
	switch {
	case errors.Is(err, ErrProbeBusy):
		res.Busy = true
		return res, errors.Join(errs...)
	case errors.Is(err, ErrChanged):
		return res, errors.Join(errs...) // resumed meanwhile
	case err != nil:
		return res, errors.Join(append(errs, err)...)
	case s.By == ByOperator:
		// An operator took the pause over since the state was read: an
		// operator's pause is not probed away. The probe's lease ends on
		// its own.
		return res, errors.Join(errs...)
	}
	pctx, cancel := context.WithTimeout(ctx, l.probeTimeout)
	r := probe(pctx, s)
	cancel()
	if r.At.IsZero() {
		r.At = l.now()
	}
	res.Probe = &r
	if err := l.store.FinishProbe(ctx, l.dest, r); err != nil && !errors.Is(err, ErrChanged) {
		errs = append(errs, err)
	}
	if r.OK {
		res.Change, err = l.resume(ctx, s, ByDeliverer, fmt.Sprintf("a probe was answered %d %s", r.Status, http.StatusText(r.Status)))
		errs = append(errs, err)
	}
	return res, errors.Join(errs...)
}
