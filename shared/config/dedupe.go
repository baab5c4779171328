package config

import "time"

// DefaultRecordDays is how long a delivery record is kept when
// dedupe.recordDays is not set.
const DefaultRecordDays = 30

// MaxRecordDays bounds dedupe.recordDays.
const MaxRecordDays = 3650

// Dedupe holds the delivery-record table settings.
type Dedupe struct {
	// RecordDays is how long a delivery record is kept (DynamoDB TTL). It must
	// outlast queue retention plus the DLQ's, so a redriven message is still
	// deduplicated. Default 30.
	RecordDays int `json:"recordDays,omitempty"`
	// PointInTimeRecovery keeps the record table restorable to any second
	// of the last 35 days ($0.20 per GB-month). Default true.
	PointInTimeRecovery *bool `json:"pointInTimeRecovery,omitempty"`
	// Mode is how a deliverer keeps the record around an attempt:
	// DedupeLease (default) or DedupeCheck (docs/subscribers.md#duplicates).
	Mode string `json:"mode,omitempty"`
	// TimeIndex keeps the records' time index (by_first_attempt), through
	// which ops events and the console read a window of events: $0.68 per
	// million deliveries. Off, the table has no index, no write sets its
	// key, and the operator finds events by a scan of the whole table.
	// Default true.
	TimeIndex *bool `json:"timeIndex,omitempty"`
}

// Modes accepted in dedupe.mode.
const (
	// DedupeLease claims the record with a lease before the POST and
	// records the outcome after it: two writes per attempt, and of copies
	// handled at the same moment one is POSTed.
	DedupeLease = "lease"
	// DedupeCheck reads the record before the POST and writes it once
	// after: one read and one write per attempt; copies one after another
	// are still refused, copies at the same moment can both be POSTed.
	DedupeCheck = "check"
)

// DedupeMode is the dedupe mode in force.
func (c *Config) DedupeMode() string {
	if c.Dedupe.Mode == "" {
		return DedupeLease
	}
	return c.Dedupe.Mode
}

// PITR reports whether the record table has point-in-time recovery.
func (d Dedupe) PITR() bool { return d.PointInTimeRecovery == nil || *d.PointInTimeRecovery }

// Indexed reports whether the record table has the time index
// (dedupe.timeIndex).
func (d Dedupe) Indexed() bool { return d.TimeIndex == nil || *d.TimeIndex }

// RecordTTL is how long a delivery record is kept.
func (c *Config) RecordTTL() time.Duration {
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	return time.Duration(days) * 24 * time.Hour
}

func (c *Config) validateDedupe(p *problems) {
	if m := c.Dedupe.Mode; m != "" && m != DedupeLease && m != DedupeCheck {
		p.add("dedupe.mode", "unknown mode %q; use %q (default: a lease before the POST, two writes per attempt) or %q (a read before, one write after; copies at the same moment can both be POSTed)", m, DedupeLease, DedupeCheck)
	}
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	if days < 0 || days > MaxRecordDays {
		p.add("dedupe.recordDays", "%d is out of range; use 1 to %d (default %d)", c.Dedupe.RecordDays, MaxRecordDays, DefaultRecordDays)
		return
	}
	longest := time.Duration(0)
	for i := range c.Destinations {
		d := &c.Destinations[i]
		if d.Retry.valid() && d.TimeoutSeconds >= 0 {
			longest = max(longest, min(d.Retention(), MaxRetention))
		}
	}
	need := int(roundUp(longest+DLQRetention, 24*time.Hour) / (24 * time.Hour))
	if days < need {
		p.add("dedupe.recordDays", "%d days is shorter than the longest queue retention plus the DLQ's %d days; use at least %d so a redriven message is still deduplicated", days, int(DLQRetention.Hours()/24), need)
	}
}
