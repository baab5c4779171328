package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

// MaxPaceFor is the longest an operator's override of a lane's rate lasts:
// a week, so a forgotten one ends by itself.
const MaxPaceFor = 7 * 24 * time.Hour

// PaceInput is an operator's cap on a lane's rate: N requests Per (a
// second or a minute) for For.
type PaceInput struct {
	N   int
	Per time.Duration
	For time.Duration
}

// pacedLane returns a lane and its rate limit, or why it has none.
func (o *Operator) pacedLane(destination string) (Lane, config.Pace, error) {
	if o.PaceStore == nil {
		return Lane{}, config.Pace{}, errors.New("pace: no pacing store configured")
	}
	l, err := o.Resources.Lane(destination)
	if err != nil {
		return Lane{}, config.Pace{}, err
	}
	if l.Pace == nil {
		return l, config.Pace{}, fmt.Errorf("destination %s has no rateLimit: an override lowers a paced lane's rate; add rateLimit to its configuration and deploy (%s)", destination, o.Resources.Where)
	}
	return l, *l.Pace, nil
}

// PaceLane caps a paced lane's rate at in.N per in.Per until in.For from
// now, for every deliver function of the lane at their next take; the cap
// ends by itself.
func (o *Operator) PaceLane(ctx context.Context, destination string, in PaceInput) (pacing.State, error) {
	_, pace, err := o.pacedLane(destination)
	if err != nil {
		return pacing.State{}, err
	}
	ov := pacing.Override{N: in.N, Per: in.Per, At: o.now(), Until: o.now().Add(in.For)}
	if ov.PerSecond() > pace.PerSecond() {
		return pacing.State{}, fmt.Errorf("pace %s: %s is above the configured %s; an override only lowers the rate (raise rateLimit in the configuration and deploy)", destination, rateString(in.N, in.Per), pace)
	}
	s, err := o.PaceStore.SetOverride(ctx, destination, ov)
	if err != nil {
		return s, err
	}
	o.printf("paced %s at %s until %s (%s), then back to %s; clear it sooner with ops pace %s --clear\n",
		destination, rateString(in.N, in.Per), stamp(ov.Until), in.For, pace, destination)
	return s, nil
}

// ClearPace ends an operator's cap on a lane's rate.
func (o *Operator) ClearPace(ctx context.Context, destination string) (pacing.State, error) {
	_, pace, err := o.pacedLane(destination)
	if err != nil {
		return pacing.State{}, err
	}
	before, err := o.PaceStore.Get(ctx, destination)
	if err != nil {
		return before, err
	}
	if !before.Capped(o.now()) {
		o.printf("%s has no override in force; its rate is %s\n", destination, describeRate(pace, before, o.now()))
		return before, nil
	}
	s, err := o.PaceStore.ClearOverride(ctx, destination)
	if err != nil {
		return s, err
	}
	o.printf("cleared the override of %s; its rate is %s\n", destination, describeRate(pace, s, o.now()))
	return s, nil
}

// printPacing says, below the lanes, each paced lane's configured rate and
// the rate in force, read from its item.
func (o *Operator) printPacing(ctx context.Context) error {
	first := true
	for _, l := range o.Resources.Lanes {
		if l.Pace == nil {
			continue
		}
		if o.PaceStore == nil {
			return errors.New("lanes: no pacing store configured")
		}
		s, err := o.PaceStore.Get(ctx, l.Destination)
		if err != nil {
			return fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		if first {
			o.printf("rate limits (configured; in force):\n")
			first = false
		}
		o.printf("  %s: %s; %s\n", l.Destination, configured(*l.Pace), describeRate(*l.Pace, s, o.now()))
	}
	return nil
}

func configured(p config.Pace) string {
	s := fmt.Sprintf("%s, burst %d", p, p.Burst)
	if p.Adaptive {
		s += ", adaptive"
	}
	return s
}

// describeRate is the rate in force and what lowered it.
func describeRate(p config.Pace, s pacing.State, now time.Time) string {
	out := perSecond(s.Effective(p, now))
	if b := s.Burst(p, now); b < p.Burst {
		out += fmt.Sprintf(", burst %d", b)
	}
	if p.Adaptive && s.LevelOrFull() < pacing.FullLevel {
		out += fmt.Sprintf(" (adaptive: %d%% of the rate since %s)", s.LevelOrFull()/10, stamp(s.AdjustedAt))
	}
	if s.Capped(now) {
		out += fmt.Sprintf(" (capped at %s by an operator until %s)", rateString(s.Override.N, s.Override.Per), stamp(s.Override.Until))
	}
	return out
}

func perSecond(r float64) string {
	if r < 1 {
		return fmt.Sprintf("%.3g/min", r*60)
	}
	return fmt.Sprintf("%.3g/s", r)
}

func rateString(n int, per time.Duration) string {
	if per == time.Minute {
		return fmt.Sprintf("%d/min", n)
	}
	return fmt.Sprintf("%d/s", n)
}
