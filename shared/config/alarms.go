package config

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/netguard"
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
	// HTTPS are endpoints (an incident tool's SNS integration URL)
	// subscribed to the alarm topic; SNS confirms each with the endpoint.
	HTTPS []string `json:"https,omitempty"`
	// HTTPSSecrets name Secrets Manager secrets each holding such an
	// endpoint's URL, for a URL that carries the tool's routing key: the
	// template holds a dynamic reference, CloudFormation reads the value.
	HTTPSSecrets []string `json:"httpsSecrets,omitempty"`
	// DLQ, when set, makes every lane's DLQ alarm fire on more than
	// Threshold messages arriving within a window, rather than on any
	// message held; a destination's alarms.dlq overrides it.
	DLQ *DLQAlarm `json:"dlq,omitempty"`
}

// DLQAlarm is when a lane's DLQ alarm fires: more than Threshold
// messages arrived in its DLQ within WindowMinutes.
type DLQAlarm struct {
	Threshold     int `json:"threshold"`
	WindowMinutes int `json:"windowMinutes,omitempty"`
}

// DestinationAlarms are a destination's own alarm settings.
type DestinationAlarms struct {
	// DLQ overrides alarms.dlq for the lane.
	DLQ *DLQAlarm `json:"dlq,omitempty"`
}

// DefaultDLQWindowMinutes is alarms.dlq's window when windowMinutes is
// not set; MaxDLQWindowMinutes the longest (an alarm's period).
const (
	DefaultDLQWindowMinutes = 5
	MaxDLQWindowMinutes     = 60
)

// Window is the alarm's window.
func (a DLQAlarm) Window() time.Duration {
	if a.WindowMinutes == 0 {
		return DefaultDLQWindowMinutes * time.Minute
	}
	return time.Duration(a.WindowMinutes) * time.Minute
}

func (a *DLQAlarm) validate(p *problems, at string) {
	if a.Threshold < 1 {
		p.add(at+".threshold", "%d: give the number of messages (1 or more) that may reach the DLQ within the window before it alarms; leave out %s to alarm on any message in the DLQ", a.Threshold, at)
	}
	if a.WindowMinutes < 0 || a.WindowMinutes > MaxDLQWindowMinutes {
		p.add(at+".windowMinutes", "%d is out of range; use 1 to %d minutes (default %d)", a.WindowMinutes, MaxDLQWindowMinutes, DefaultDLQWindowMinutes)
	}
}

// DLQAlarm is the DLQ alarm of the destination: its own alarms.dlq, else
// the top level's; false when neither is set (the alarm fires on any
// message the DLQ holds).
func (c *Config) DLQAlarm(d Destination) (DLQAlarm, bool) {
	if d.Alarms != nil && d.Alarms.DLQ != nil {
		return *d.Alarms.DLQ, true
	}
	if c.Alarms.DLQ != nil {
		return *c.Alarms.DLQ, true
	}
	return DLQAlarm{}, false
}

// Notified reports whether alarms reach anyone: an e-mail address or an
// https endpoint (the stack makes the alarm topic then).
func (a Alarms) Notified() bool { return a.Email != "" || len(a.HTTPS) > 0 || len(a.HTTPSSecrets) > 0 }

// Endpoints is how many https endpoints the alarm topic has.
func (a Alarms) Endpoints() int { return len(a.HTTPS) + len(a.HTTPSSecrets) }

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
	seen := map[string]int{}
	for i, raw := range a.HTTPS {
		at := fmt.Sprintf("alarms.https[%d]", i)
		if j, dup := seen[raw]; dup {
			p.add(at, "%q is alarms.https[%d] again; list each endpoint once", redactURL(raw), j)
			continue
		}
		seen[raw] = i
		if msg := alarmEndpointProblem(raw); msg != "" {
			p.add(at, "%s", msg)
		}
	}
	named := map[string]int{}
	for i, name := range a.HTTPSSecrets {
		at := fmt.Sprintf("alarms.httpsSecrets[%d]", i)
		if j, dup := named[name]; dup {
			p.add(at, "%q is alarms.httpsSecrets[%d] again; list each secret once", name, j)
			continue
		}
		named[name] = i
		validSecretName(p, at, name)
	}
	if a.DLQ != nil {
		a.DLQ.validate(p, "alarms.dlq")
	}
}

// alarmEndpointProblem says why raw cannot be an alarm endpoint, "" when
// it can: SNS posts to public https URLs.
func alarmEndpointProblem(raw string) string {
	u, ok := parseAbsolute(raw)
	if !ok {
		return fmt.Sprintf("%q is not an absolute URL; use the https URL your incident tool gives for Amazon SNS", raw)
	}
	subject := fmt.Sprintf("%q", redactURL(raw))
	switch {
	case u.Scheme != "https":
		return subject + " does not use https; SNS sends alarms to https endpoints here (use the tool's https URL)"
	case u.User != nil:
		return subject + " carries credentials; remove user:password@ (the configuration holds no credentials: use the tool's integration URL, which carries its routing key)"
	case u.Fragment != "":
		return subject + " has a fragment; remove the #part"
	}
	if err := netguard.CheckHost(u.Hostname()); err != nil {
		return fmt.Sprintf("%s: host %v; SNS reaches public hosts only", subject, err)
	}
	return ""
}

// redactURL hides a URL's user information, for messages.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.User == nil {
		return raw
	}
	return redactUser(u)
}
