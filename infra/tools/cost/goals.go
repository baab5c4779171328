package cost

import "fmt"

// Goal is one of issue #21's measured targets: a figure of the model
// and the most it may be, per million 1 KB events.
type Goal struct {
	Name   string
	Figure float64
	Most   float64
	// Least is the lowest the figure can go while keeping what the
	// issue fixes for its configuration (Leanest for the defaults' rows),
	// and How says what that takes.
	Least float64
	How   string
	// Ratio is a ratio to the floor, not dollars.
	Ratio bool
}

// Met reports whether the figure is within the target.
func (t Goal) Met() bool { return t.Figure <= t.Most+1e-9 }

// Reachable reports whether any configuration keeping the fixed
// choices meets the target.
func (t Goal) Reachable() bool { return t.Least <= t.Most+1e-9 }

// Leanest is the defaults with every option issue #21 leaves free at its
// cheapest, and kept what it fixes — dedupe.mode lease (its default), a
// line per accepted request and per delivered attempt — and what a default
// must not give up: no batching window (a window delays every event by up
// to its length) and the archive (operators replay any delivered event
// from it). What goes: point-in-time recovery of the record table, the
// customer managed topic key, the dashboards, the per-lane metric
// dimensions and the records' time index (issue #36's, on by default for
// the console; without it the operator's event views scan the table).
func Leanest() Options {
	o := Defaults()
	o.Name = "the defaults' choices, every free option at its cheapest"
	o.PITR, o.CustomerKey = false, false
	o.Dashboard, o.LaneDimensions = false, false
	o.TimeIndex = false
	return o
}

// SlowWindowSeconds is the batching window the cheapest rows' Least
// takes: half a minute, which gathers two messages a batch at a million
// events a month.
const SlowWindowSeconds = 30

// Goals are #21's targets against the model's figures.
func Goals() []Goal {
	one := func(n float64, o Options) float64 {
		sc := Scenario{Events: n, BodyKB: 1, Destinations: 1}
		return PerMillion(sc, Variable(sc, o))
	}
	worst := func(o Options) float64 {
		w := 0.0
		for _, sc := range Scenarios() {
			w = max(w, Sum(Variable(sc, o))/Sum(Floor(sc, o)))
		}
		return w
	}
	def, lean, cheap := Defaults(), Leanest(), Cheapest()
	// The cheapest configuration waits a second for batches; a longer
	// window is cheaper where it fills them, and delays every event by up
	// to its length.
	slow := cheap
	slow.BatchWindow = SlowWindowSeconds
	const leanHow = "no PITR, customer key, dashboards, lane dimensions or time index"
	slowHow := fmt.Sprintf("a %d s batching window", SlowWindowSeconds)
	return []Goal{
		{"defaults, 1 M: one destination", one(million, def), 6.00, one(million, lean), leanHow, false},
		{"defaults, 1 M: each destination more", PerExtraDestination(million, 1, def), 3.30, PerExtraDestination(million, 1, lean), leanHow, false},
		{"defaults, 100 M: one destination", one(100*million, def), 4.75, one(100*million, lean), leanHow, false},
		{"defaults, 100 M: each destination more", PerExtraDestination(100*million, 1, def), 2.30, PerExtraDestination(100*million, 1, lean), leanHow, false},
		{"cheapest, 1 M: one destination", one(million, cheap), 5.00, one(million, slow), slowHow, false},
		{"cheapest, 1 M: each destination more", PerExtraDestination(million, 1, cheap), 2.50, PerExtraDestination(million, 1, slow), slowHow, false},
		{"defaults: the highest total ÷ floor of the columns", worst(def), 1.4, worst(lean), leanHow, true},
	}
}
