package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// paused renders a config with one destination carrying extra settings.
func paused(extra string) string {
	return `{"sources": [{"name": "s", "verify": {"kind": "github", "secretName": "s"}}],
	  "destinations": [{"name": "d", "url": "https://d.example.com"` + extra + `}]}`
}

func TestPauseInvalid(t *testing.T) {
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"threshold out of range", `, "pause": {"afterFailures": -1}`, []string{
			`destinations[0].pause.afterFailures: -1 is out of range; use 1 to 10000 consecutive failed deliveries (default 5 when no failureRate is set)`,
		}},
		{"rate above one", `, "pause": {"failureRate": 1.5}`, []string{
			`destinations[0].pause.failureRate: 1.5 is out of range; use a share of failed attempts above 0 and at most 1 (0.9 pauses at 90% failures)`,
		}},
		{"negative rate", `, "pause": {"failureRate": -0.5}`, []string{
			`destinations[0].pause.failureRate: -0.5 is out of range; use a share of failed attempts above 0 and at most 1 (0.9 pauses at 90% failures)`,
		}},
		{"window without a rate", `, "pause": {"window": "10m", "minAttempts": 5}`, []string{
			`destinations[0].pause.window: 10m0s is set without failureRate; set failureRate too, or remove window`,
			`destinations[0].pause.minAttempts: 5 is set without failureRate; set failureRate too, or remove minAttempts`,
		}},
		{"window too short", `, "pause": {"failureRate": 0.5, "window": "30s"}`, []string{
			`destinations[0].pause.window: 30s is out of range; use 1m0s to 24h0m0s (default 5m0s)`,
		}},
		{"min attempts negative", `, "pause": {"failureRate": 0.5, "minAttempts": -3}`, []string{
			`destinations[0].pause.minAttempts: -3 is out of range; use 1 to 1000000 attempts (default 20)`,
		}},
		{"probe faster than a schedule runs", `, "pause": {"probeEvery": "30s"}`, []string{
			`destinations[0].pause.probeEvery: 30s is out of range; use 1m0s to 1h0m0s in whole minutes (default 1m0s)`,
		}},
		{"probe not whole minutes", `, "pause": {"probeEvery": "90s"}`, []string{
			`destinations[0].pause.probeEvery: 1m30s is not a whole number of minutes, which an EventBridge schedule needs; use 1m0s`,
		}},
		{"max pause shorter than a probe", `, "pause": {"probeEvery": "10m", "maxPause": "5m"}`, []string{
			`destinations[0].pause.maxPause: 5m0s is shorter than probeEvery (10m0s); a pause must last until at least one probe, use 10m0s or more`,
		}},
		{"negative max pause", `, "pause": {"maxPause": "-1h"}`, []string{
			`destinations[0].pause.maxPause: -1h0m0s is shorter than probeEvery (1m0s); a pause must last until at least one probe, use 1m0s or more`,
		}},
		// The default schedule needs 72666 s (20h11m6s): the queue keeps
		// twice that before any pause, and the DLQ's 14 days must leave 3
		// after the queue's retention: 336 h − 72 h − 40h22m12s leaves 223
		// whole hours for pauses.
		{"max pause eats the redrive window", `, "pause": {"maxPause": "224h"}`, []string{
			`destinations[0].pause.maxPause: 224h0m0s is too long: a message may stay in the queue up to its retention (264h23m0s: twice the retry schedule's 20h12m0s, plus the longest pause) before it reaches the DLQ, whose 336h0m0s count from the event's arrival, leaving it less than the 72h0m0s kept for a redrive; use at most 223h0m0s`,
		}},
		// Accepted before the redrive window was kept: a message paused that
		// long reached its DLQ with hours of its 14 days left.
		{"max pause leaving hours in the DLQ", `, "pause": {"maxPause": "315h"}`, []string{
			`destinations[0].pause.maxPause: 315h0m0s is too long: a message may stay in the queue up to its retention (355h23m0s: twice the retry schedule's 20h12m0s, plus the longest pause) before it reaches the DLQ, whose 336h0m0s count from the event's arrival, leaving it less than the 72h0m0s kept for a redrive; use at most 223h0m0s`,
		}},
		// 11 × 10 h + 3 h of waits, the visibility timeouts and the margin:
		// about 114 h of need; twice that plus the default 72 h pause
		// passes the 11 days the DLQ's redrive window leaves.
		{"schedule too long for the default pause", `, "retry": {"schedule": [` + strings.Repeat(`"10h",`, 11) + `"3h"], "jitter": 0}, "pause": {}`, []string{
			`destinations[0].pause.maxPause: 72h0m0s is too long: a message may stay in the queue up to its retention (300h52m0s: twice the retry schedule's 114h26m0s, plus the longest pause) before it reaches the DLQ, whose 336h0m0s count from the event's arrival, leaving it less than the 72h0m0s kept for a redrive; use at most 35h0m0s`,
		}},
		// 30 × 11 h + 3h55m30s, 32 attempts × 120 s and the 1 h margin: the
		// schedule needs all but 30 s of 14 days.
		{"schedule leaves no room", `, "retry": {"schedule": [` + strings.Repeat(`"11h",`, 30) + `"3h55m30s"], "jitter": 0}, "pause": {}`, []string{
			`destinations[0].pause.maxPause: 72h0m0s cannot fit: the queue keeps a message for twice its retry schedule (672h0m0s) before any pause, and the DLQ, whose 336h0m0s count from the event's arrival, must still keep it 72h0m0s for a redrive; shorten the schedule to make room for pauses`,
		}},
		{"unknown pause field", `, "pause": {"after": 3}`, []string{
			`destinations[0].pause.after: unknown field; did you mean afterFailures?`,
		}},
		{"not a duration", `, "pause": {"maxPause": 3600}`, []string{
			`destinations[0].pause.maxPause: 3600 is a number; want a duration string such as "30s", "2m" or "1h30m"`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(paused(tt.extra)))
			if err == nil {
				t.Fatalf("Parse accepted an invalid config: %+v", c.Destinations[0].Pause)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRecordTTLCoversPausedRetention: a pause as long as the room allows
// raises the queue's retention to 263h23m, so the delivery records must be
// kept 25 days.
func TestRecordTTLCoversPausedRetention(t *testing.T) {
	doc := strings.Replace(paused(`, "pause": {"maxPause": "223h"}`), `}]}`, `}], "dedupe": {"recordDays": 20}}`, 1)
	_, err := Parse([]byte(doc))
	want := `dedupe.recordDays: 20 days is shorter than the longest queue retention plus the DLQ's 14 days; use at least 25 so a redriven message is still deduplicated`
	if err == nil || err.Error() != want {
		t.Errorf("Parse = %v, want %q", err, want)
	}
	if _, err := Parse([]byte(strings.Replace(doc, `"recordDays": 20`, `"recordDays": 25`, 1))); err != nil {
		t.Errorf("Parse with 25 days: %v", err)
	}
}

func TestPauseRule(t *testing.T) {
	tests := []struct {
		name, extra string
		want        PauseRule
		on          bool
	}{
		{"absent: never pauses", ``, PauseRule{}, false},
		{"empty block: the defaults", `, "pause": {}`, PauseRule{AfterFailures: 5, ProbeEvery: time.Minute, MaxPause: 72 * time.Hour}, true},
		{"rate alone: no consecutive threshold", `, "pause": {"failureRate": 0.9}`,
			PauseRule{FailureRate: 0.9, Window: 5 * time.Minute, MinAttempts: 20, ProbeEvery: time.Minute, MaxPause: 72 * time.Hour}, true},
		{"both triggers, every field", `, "pause": {"afterFailures": 30, "failureRate": 0.5, "window": "15m", "minAttempts": 100, "probeEvery": "5m", "maxPause": "24h"}`,
			PauseRule{AfterFailures: 30, FailureRate: 0.5, Window: 15 * time.Minute, MinAttempts: 100, ProbeEvery: 5 * time.Minute, MaxPause: 24 * time.Hour}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(paused(tt.extra)))
			if err != nil {
				t.Fatal(err)
			}
			got, on := c.Destinations[0].PauseRule()
			if on != tt.on {
				t.Errorf("PauseRule() on = %v, want %v", on, tt.on)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("PauseRule() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRetentionCoversLongestPause: the queue keeps a message through the
// longest pause the config allows plus its whole schedule, and the retry
// policy's share of the retention leaves that pause untouched.
func TestRetentionCoversLongestPause(t *testing.T) {
	const scheduleNeed = 72666 * time.Second // the default schedule's (TestParseValidDerived)
	tests := []struct {
		extra                           string
		retention, reserve, forSchedule time.Duration
	}{
		{``, 145380 * time.Second, 0, 145380 * time.Second},
		// 2 × 72666 s + 72 h = 404532 s → 404580 s.
		{`, "pause": {}`, 404580 * time.Second, 72 * time.Hour, 145380 * time.Second},
		{`, "pause": {"maxPause": "24h"}`, 231780 * time.Second, 24 * time.Hour, 145380 * time.Second},
		// The longest pause allowed: 2 × need + 223 h leaves the DLQ its
		// 3 days' redrive window.
		{`, "pause": {"maxPause": "223h"}`, 948180 * time.Second, 223 * time.Hour, 145380 * time.Second},
	}
	for _, tt := range tests {
		c, err := Parse([]byte(paused(tt.extra)))
		if err != nil {
			t.Fatalf("%s: %v", tt.extra, err)
		}
		d := c.Destinations[0]
		got := []time.Duration{d.Retention(), d.PauseReserve(), d.ScheduleRetention()}
		if diff := cmp.Diff([]time.Duration{tt.retention, tt.reserve, tt.forSchedule}, got); diff != "" {
			t.Errorf("%s: retention, pause reserve, schedule's share (-want +got):\n%s", tt.extra, diff)
		}
		if d.retentionNeeded() != scheduleNeed {
			t.Errorf("%s: schedule need = %s, want %s", tt.extra, d.retentionNeeded(), scheduleNeed)
		}
		if d.Retention() < scheduleNeed+d.PauseReserve() {
			t.Errorf("%s: retention %s does not cover the schedule %s plus the longest pause %s", tt.extra, d.Retention(), scheduleNeed, d.PauseReserve())
		}
		if life := DLQRetention - d.Retention(); d.PauseReserve() > 0 && life < DLQRedriveWindow {
			t.Errorf("%s: a message reaching the DLQ at the end of the queue's retention %s has %s left there, less than the redrive window %s", tt.extra, d.Retention(), life, DLQRedriveWindow)
		}
		if d.ScheduleRetention() < scheduleNeed {
			t.Errorf("%s: the schedule's share %s is less than it needs (%s)", tt.extra, d.ScheduleRetention(), scheduleNeed)
		}
	}
}

func TestPauseRoundTripsThroughTheEnvironment(t *testing.T) {
	c, err := Parse([]byte(paused(`, "pause": {"afterFailures": 3, "failureRate": 0.75, "window": "2m", "probeEvery": "2m", "maxPause": "12h"}`)))
	if err != nil {
		t.Fatal(err)
	}
	d, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(c.Destinations[0]))
	if err != nil {
		t.Fatalf("DecodeDestination: %v", err)
	}
	if diff := cmp.Diff(c.Destinations[0], d); diff != "" {
		t.Errorf("round trip (-want +got):\n%s", diff)
	}
	_, err = DecodeDestination("HOOKFAN_DESTINATION", `{"name": "x", "url": "https://x.example.com", "pause": {"probeEvery": "10s"}}`)
	want := `HOOKFAN_DESTINATION: destination.pause.probeEvery: 10s is out of range; use 1m0s to 1h0m0s in whole minutes (default 1m0s)`
	if err == nil || err.Error() != want {
		t.Errorf("DecodeDestination(bad pause) = %v, want %q", err, want)
	}
}

func TestPauseRuleString(t *testing.T) {
	r := PauseRule{AfterFailures: 5, FailureRate: 0.9, Window: 5 * time.Minute, MinAttempts: 20, ProbeEvery: time.Minute, MaxPause: 72 * time.Hour}
	want := "pause after 5 consecutive failures or at 90% failures over 5m0s (at least 20 attempts); probe every 1m0s; at most 72h0m0s paused"
	if got := r.String(); got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
}
