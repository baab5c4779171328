package config

import "time"

// PayloadMarginDays is added to the payload bucket's lifecycle past the
// longest time a message referring to an object can legitimately wait.
const PayloadMarginDays = 1

// LargePayloads reports whether any source accepts bodies larger than one
// SNS message carries: the stack then has a payload bucket, ingest stores
// bodies that do not fit a message there, and each deliver function reads
// them back.
func (c *Config) LargePayloads() bool {
	for _, s := range c.Sources {
		if s.BodyLimit() > MaxBodyBytesCeiling {
			return true
		}
	}
	return false
}

// PayloadExpirationDays is the payload bucket's lifecycle: how long a
// stored body is kept. A message refers to it while it waits in its queue
// (at most the longest queue retention) and then in the DLQ (14 days), so a
// redrive near their end still finds it. With the archive on, the archive
// keeps the reference message for archive.days, and an operator's replay on
// its last day starts that wait again: the archive's days are added. Plus
// a margin of a day.
func (c *Config) PayloadExpirationDays() int {
	longest := time.Duration(0)
	for _, d := range c.Destinations {
		longest = max(longest, d.Retention())
	}
	need := roundUp(longest+DLQRetention, 24*time.Hour)
	return int(need/(24*time.Hour)) + c.Archive.RetentionDays() + PayloadMarginDays
}
