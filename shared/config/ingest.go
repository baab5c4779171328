package config

// Ingest tunes the ingest function.
type Ingest struct {
	// ReservedConcurrency sets aside this many of the account's concurrent
	// Lambda executions for ingest, and caps it there: no lane, however
	// busy, can take them (a busy lane's deliveries otherwise draw on the
	// same regional pool, and a starved ingest answers 5xx, which GitHub
	// never retries). 0, the default, reserves nothing: it deploys in any
	// account, and ingest shares the pool. When set, it must cover what
	// the API lets through at once (MinReservedConcurrency), and the
	// account must keep 100 executions unreserved beside it.
	ReservedConcurrency int `json:"reservedConcurrency,omitempty"`
}

// DefaultAccountConcurrency is Lambda's default regional quota of
// concurrent executions (new accounts may start lower).
const DefaultAccountConcurrency = 1000

// MaxReservedConcurrency bounds ingest.reservedConcurrency: the default
// regional quota minus the 100 executions Lambda keeps unreserved. An
// account with a raised quota could reserve more; none needs to, as a
// warm ingest answers in tens of milliseconds.
const MaxReservedConcurrency = DefaultAccountConcurrency - 100

// LaneConcurrency is how many deliveries the lanes can run at once, all
// of them busy: their maxConcurrency added up.
func (c *Config) LaneConcurrency() int {
	n := 0
	for _, d := range c.Destinations {
		n += d.Concurrency()
	}
	return n
}

// MinReservedConcurrency is the smallest reservation that never throttles
// what the API admits at once: the burst limits of every source's route
// and of the catch-all route (unknown source names) added up. A smaller
// one would turn a burst the API accepted into Lambda throttles, answered
// 5xx.
func (c *Config) MinReservedConcurrency() int {
	n := c.API.Burst()
	for _, s := range c.Sources {
		n += s.Limits.Burst(c.API)
	}
	return n
}

func (c *Config) validateIngest(p *problems) {
	r := c.Ingest.ReservedConcurrency
	switch minimum := c.MinReservedConcurrency(); {
	case r == 0:
	case minimum > MaxReservedConcurrency:
		p.add("ingest.reservedConcurrency", "%d cannot cover the API's burst limits added up (%d, over the %d a default account can reserve); use 0 (reserve nothing), or lower api.burstLimit and sources[].limits.burstLimit to at most %d together", r, minimum, MaxReservedConcurrency, MaxReservedConcurrency)
	case r < 0 || r > MaxReservedConcurrency:
		p.add("ingest.reservedConcurrency", "%d is out of range; use 0 (reserve nothing, the default) or %d to %d", r, minimum, MaxReservedConcurrency)
	case r < minimum:
		p.add("ingest.reservedConcurrency", "%d is below %d, the burst limits of the API's routes added up (api.burstLimit and each sources[].limits.burstLimit): a burst the API admits would be throttled; use at least %d, or lower the burst limits", r, minimum, minimum)
	}
}
