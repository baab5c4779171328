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
// stored body is kept, counted from when its object was written. A
// message refers to it while it waits in its queue and then in the DLQ,
// whose 14 days count from the message's first enqueue; a DLQ redrive
// (the console's StartMessageMoveTask, which nothing in the stack sees)
// makes it a new message with a fresh queue retention. So the object must
// outlive the DLQ's retention plus a whole queue retention after a redrive
// at the DLQ's last moment: DLQRetention + the longest queue retention,
// rounded up to days, plus a margin of a day. What goes back to a queue
// later goes through the operator, which writes the body again first
// (ops redrive and ops replay), so the object's days start again; and the
// archive keeps its own copy of every body for archive.days.
func (c *Config) PayloadExpirationDays() int {
	longest := time.Duration(0)
	for _, d := range c.Destinations {
		longest = max(longest, d.Retention())
	}
	need := roundUp(DLQRetention+longest, 24*time.Hour)
	return int(need/(24*time.Hour)) + PayloadMarginDays
}
