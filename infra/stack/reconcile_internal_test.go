package stack

import (
	"testing"
	"time"
)

func TestShortDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		time.Minute: "1m", 15 * time.Minute: "15m", time.Hour: "1h", 90 * time.Minute: "1h30m", 24 * time.Hour: "24h", 10 * time.Hour: "10h",
	} {
		if got := shortDuration(d); got != want {
			t.Errorf("shortDuration(%v) = %q, want %q", d, got, want)
		}
	}
}
