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
}

// RecordTTL is how long a delivery record is kept.
func (c *Config) RecordTTL() time.Duration {
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	return time.Duration(days) * 24 * time.Hour
}

func (c *Config) validateDedupe(p *problems) {
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
