package cost

// Target is one of issue #21's measured targets: a figure of the model
// and the most it may be, per million 1 KB events.
type Target struct {
	Name   string
	Figure float64
	Most   float64
	// Ratio is a ratio to the floor, not dollars.
	Ratio bool
}

// Met reports whether the figure is within the target.
func (t Target) Met() bool { return t.Figure <= t.Most+1e-9 }

// Targets are #21's targets against the model's figures.
func Targets() []Target {
	one := func(n float64, o Options) float64 {
		sc := Scenario{Events: n, BodyKB: 1, Destinations: 1}
		return PerMillion(sc, Variable(sc, o))
	}
	def, cheap := Defaults(), Cheapest()
	worst := 0.0
	for _, sc := range Scenarios() {
		worst = max(worst, Sum(Variable(sc, def))/Sum(Floor(sc, def)))
	}
	return []Target{
		{"defaults, 1 M: one destination", one(million, def), 6.00, false},
		{"defaults, 1 M: each destination more", PerExtraDestination(million, 1, def), 3.30, false},
		{"defaults, 100 M: one destination", one(100*million, def), 4.75, false},
		{"defaults, 100 M: each destination more", PerExtraDestination(100*million, 1, def), 2.30, false},
		{"cheapest, 1 M: one destination", one(million, cheap), 5.00, false},
		{"cheapest, 1 M: each destination more", PerExtraDestination(million, 1, cheap), 2.50, false},
		{"defaults: the highest total ÷ floor of the columns", worst, 1.4, true},
	}
}
