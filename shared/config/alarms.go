package config

import (
	"strings"
	"time"
)

// DefaultOldestMessageAlarmSeconds is the queue age that raises an alarm
// when alarms.oldestMessageSeconds is not set.
const DefaultOldestMessageAlarmSeconds = 3600

// Alarms holds alarm settings.
type Alarms struct {
	// Email, when set, subscribes this address to the alarm topic.
	Email string `json:"email,omitempty"`
	// OldestMessageSeconds is the queue age that raises an alarm. Default 3600.
	OldestMessageSeconds int `json:"oldestMessageSeconds,omitempty"`
}

// OldestMessageThreshold is the queue-age alarm threshold.
func (a Alarms) OldestMessageThreshold() time.Duration {
	if a.OldestMessageSeconds == 0 {
		return DefaultOldestMessageAlarmSeconds * time.Second
	}
	return time.Duration(a.OldestMessageSeconds) * time.Second
}

func (a *Alarms) validate(p *problems) {
	if a.Email != "" && (!strings.Contains(a.Email, "@") || strings.ContainsAny(a.Email, " \t\r\n")) {
		p.add("alarms.email", "%q is not an email address", a.Email)
	}
	if a.OldestMessageSeconds != 0 && a.OldestMessageSeconds < 60 {
		p.add("alarms.oldestMessageSeconds", "%d is too small; use at least 60 seconds (default %d)", a.OldestMessageSeconds, DefaultOldestMessageAlarmSeconds)
	}
}
