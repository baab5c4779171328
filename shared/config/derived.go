package config

import "time"

// MaxRecordDays bounds dedupe.recordDays.
const MaxRecordDays = 3650

// RecordTTL is how long a delivery record is kept.
func (c *Config) RecordTTL() time.Duration {
	days := c.Dedupe.RecordDays
	if days == 0 {
		days = DefaultRecordDays
	}
	return time.Duration(days) * 24 * time.Hour
}

// RetentionDays is how many days an archived event is kept; 0 means the
// archive is off.
func (a Archive) RetentionDays() int {
	if a.Days == nil {
		return DefaultArchiveDays
	}
	return *a.Days
}

// Enabled reports whether accepted events are archived.
func (a Archive) Enabled() bool { return a.RetentionDays() > 0 }

// Sink is the metrics sink in force.
func (m Metrics) SinkName() string {
	if m.Sink == "" {
		return SinkEMF
	}
	return m.Sink
}

// OldestMessageThreshold is the queue-age alarm threshold.
func (a Alarms) OldestMessageThreshold() time.Duration {
	if a.OldestMessageSeconds == 0 {
		return DefaultOldestMessageAlarmSeconds * time.Second
	}
	return time.Duration(a.OldestMessageSeconds) * time.Second
}

// Source finds a source by name.
func (c *Config) Source(name string) (Source, bool) {
	for _, s := range c.Sources {
		if s.Name == name {
			return s, true
		}
	}
	return Source{}, false
}

// Destination finds a destination by name.
func (c *Config) Destination(name string) (Destination, bool) {
	for _, d := range c.Destinations {
		if d.Name == name {
			return d, true
		}
	}
	return Destination{}, false
}
