package ingest

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestDateTime compares dateTime with time's own formatting across and just
// beyond the years it writes, at random instants and at every day boundary
// around the leap days and era ends where the calendar arithmetic turns.
func TestDateTime(t *testing.T) {
	const layout = "2006-01-02T15:04:05"
	check := func(sec int64) {
		t.Helper()
		tm := time.Unix(sec, 0).UTC()
		got, ok := dateTime(sec)
		if wantOK := tm.Year() >= 0 && tm.Year() <= 9999; ok != wantOK {
			t.Fatalf("dateTime(%d) ok = %v at %s", sec, ok, tm)
		}
		if want := tm.Format(layout); ok && string(got[:]) != want {
			t.Fatalf("dateTime(%d) = %s, want %s", sec, got, want)
		}
	}
	lo := time.Date(-2, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	hi := time.Date(10002, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200_000 {
		check(lo + rng.Int64N(hi-lo))
	}
	for _, year := range []int{-1, 0, 1, 4, 100, 399, 400, 1600, 1900, 1969, 1970, 2000, 2024, 2025, 2100, 2400, 9999, 10000} {
		for _, day := range []time.Time{time.Date(year, 2, 28, 0, 0, 0, 0, time.UTC), time.Date(year, 12, 31, 0, 0, 0, 0, time.UTC)} {
			for d := int64(-2); d <= 3; d++ {
				for _, s := range []int64{0, 1, 86399} {
					check(day.Unix() + d*secondsPerDay + s)
				}
			}
		}
	}
}
