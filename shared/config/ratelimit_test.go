package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestRateLimitInvalid(t *testing.T) {
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"both units", `, "rateLimit": {"perSecond": 5, "perMinute": 300}`, []string{
			`destinations[0].rateLimit: sets both perSecond (5) and perMinute (300); keep one`,
		}},
		{"no unit", `, "rateLimit": {"burst": 5}`, []string{
			`destinations[0].rateLimit: sets no rate; set perSecond or perMinute, e.g. {"perSecond": 5}, or remove rateLimit (no limit)`,
		}},
		{"zero", `, "rateLimit": {"perSecond": 0}`, []string{
			`destinations[0].rateLimit: sets no rate; set perSecond or perMinute, e.g. {"perSecond": 5}, or remove rateLimit (no limit)`,
		}},
		{"negative per second", `, "rateLimit": {"perSecond": -2}`, []string{
			`destinations[0].rateLimit.perSecond: -2 is out of range; use 1 to 10000 requests a second (or perMinute for slower limits)`,
		}},
		{"negative per minute", `, "rateLimit": {"perMinute": -1}`, []string{
			`destinations[0].rateLimit.perMinute: -1 is out of range; use 1 to 600000 requests a minute`,
		}},
		{"too fast to enforce", `, "rateLimit": {"perSecond": 20000}`, []string{
			`destinations[0].rateLimit.perSecond: 20000 is out of range; use 1 to 10000 requests a second (or perMinute for slower limits)`,
		}},
		{"burst below the rate", `, "rateLimit": {"perSecond": 50, "burst": 10}`, []string{
			`destinations[0].rateLimit.burst: 10 is below the rate (50 a second): the lane could not send one second's worth at once after an idle spell; use 50 or more, or leave it out (default 50)`,
		}},
		{"burst below a per-minute rate's second", `, "rateLimit": {"perMinute": 150, "burst": 2}`, []string{
			`destinations[0].rateLimit.burst: 2 is below the rate (3 a second): the lane could not send one second's worth at once after an idle spell; use 3 or more, or leave it out (default 3)`,
		}},
		{"negative burst", `, "rateLimit": {"perSecond": 1, "burst": -1}`, []string{
			`destinations[0].rateLimit.burst: -1 is negative; use 1 or more, or leave it out (default 1)`,
		}},
		{"burst too large", `, "rateLimit": {"perSecond": 1, "burst": 20000}`, []string{
			`destinations[0].rateLimit.burst: 20000 is out of range; use 1 to 10000`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(paused(tt.extra)))
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestRateLimitDefaults(t *testing.T) {
	tests := []struct {
		extra string
		want  Pace
		ok    bool
	}{
		{``, Pace{}, false},
		{`, "rateLimit": {"perSecond": 5}`, Pace{N: 5, Per: time.Second, Burst: 5}, true},
		{`, "rateLimit": {"perSecond": 1, "burst": 4, "adaptive": true}`, Pace{N: 1, Per: time.Second, Burst: 4, Adaptive: true}, true},
		{`, "rateLimit": {"perMinute": 30}`, Pace{N: 30, Per: time.Minute, Burst: 1}, true},
		{`, "rateLimit": {"perMinute": 150}`, Pace{N: 150, Per: time.Minute, Burst: 3}, true},
	}
	for _, tt := range tests {
		c, err := Parse([]byte(paused(tt.extra)))
		if err != nil {
			t.Fatalf("%s: %v", tt.extra, err)
		}
		got, ok := c.Destinations[0].Pace()
		if ok != tt.ok || got != tt.want {
			t.Errorf("%s: Pace() = %+v, %v; want %+v, %v", tt.extra, got, ok, tt.want, tt.ok)
		}
	}
}

// TestPacedOrderedLaneReceiveRoom: a paced ordered lane gets SQS's
// ceiling of receives, half of it or more kept for pacing holds; one whose
// attempts × batchSize would leave less is refused.
func TestPacedOrderedLaneReceiveRoom(t *testing.T) {
	d := Destination{Name: "o", URL: "https://example.com", Ordering: &Ordering{Key: "body:id"}, RateLimit: &RateLimit{PerSecond: 1}}
	if d.MaxReceiveCount() != MaxFIFOReceiveCount || d.PacingRoom() != MaxFIFOReceiveCount-d.Attempts()*d.ReceiveBatch() {
		t.Errorf("maxReceiveCount %d, pacing room %d; want %d and %d", d.MaxReceiveCount(), d.PacingRoom(), MaxFIFOReceiveCount, MaxFIFOReceiveCount-d.Attempts()*d.ReceiveBatch())
	}
	d.RateLimit = nil
	if d.MaxReceiveCount() != d.Attempts()*d.ReceiveBatch() || d.PacingRoom() != 0 {
		t.Errorf("unpaced: maxReceiveCount %d, pacing room %d", d.MaxReceiveCount(), d.PacingRoom())
	}
	delays := strings.Repeat(`"1s", `, 49) + `"1s"` // 51 attempts × 10 = 510
	_, err := Parse([]byte(paused(`, "ordering": {"key": "body:id"}, "batchSize": 10, "retry": {"schedule": [` + delays + `]}, "rateLimit": {"perSecond": 1}`)))
	want := "destinations[0].rateLimit: paces an ordered lane whose attempts (51) × batchSize (10) = 510 leave too few receives for pacing holds; keep the product at most 500 (fewer retries or a smaller batchSize)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("got %v, want %q", err, want)
	}
	if _, err := Parse([]byte(paused(`, "ordering": {"key": "body:id"}, "batchSize": 5, "retry": {"schedule": [` + delays + `]}, "rateLimit": {"perSecond": 1}`))); err != nil {
		t.Errorf("51 attempts × 5 refused: %v", err)
	}
}
