package delivery

import (
	"net/http"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

var testNow = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestParseRetryAfter(t *testing.T) {
	tests := []struct {
		in     string
		want   time.Duration
		wantOK bool
	}{
		{"0", 0, true},
		{"120", 2 * time.Minute, true},
		{" 30 ", 30 * time.Second, true},
		{"99999999999999999999999", sender.MaxRetryAfter, true},
		{testNow.Add(90 * time.Second).Format(http.TimeFormat), 90 * time.Second, true},
		{"Monday, 30-Nov-26 12:05:00 GMT", 5 * time.Minute, true}, // RFC 850
		{"Mon Nov 30 12:10:00 2026", 10 * time.Minute, true},      // ANSI C asctime
		{testNow.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"", 0, false},
		{"-5", 0, false},
		{"+5", 0, false},
		{"1.5", 0, false},
		{"5s", 0, false},
		{"tomorrow", 0, false},
		{"Mon, 30 Nov 2026 12:00:00 PST", 0, false},
	}
	for _, tt := range tests {
		got, ok := sender.ParseRetryAfter(tt.in, testNow)
		if got != tt.want || ok != tt.wantOK {
			t.Errorf("ParseRetryAfter(%q) = %s, %v; want %s, %v", tt.in, got, ok, tt.want, tt.wantOK)
		}
	}
}

func TestDelay(t *testing.T) {
	p := RetryPolicyFor(config.Destination{})
	tests := []struct {
		attempt int
		r       float64
		want    time.Duration
	}{
		{1, 0.5, 5 * time.Second},
		{2, 0.5, 30 * time.Second},
		{9, 0.5, 8 * time.Hour},
		{1, 0, 4 * time.Second},     // -20%
		{1, 1, 6 * time.Second},     // +20% (r < 1 in practice)
		{2, 0.25, 27 * time.Second}, // -10%
		{0, 0.5, 5 * time.Second},   // clamped to the first delay
		{42, 0.5, 8 * time.Hour},    // clamped to the last delay
	}
	for _, tt := range tests {
		if got := p.Delay(tt.attempt, tt.r); got != tt.want {
			t.Errorf("Delay(%d, %g) = %s, want %s", tt.attempt, tt.r, got, tt.want)
		}
	}
	capped := RetryPolicy{Schedule: []time.Duration{12 * time.Hour}, Jitter: 0.5}
	if got := capped.Delay(1, 0.99); got != config.MaxVisibility {
		t.Errorf("Delay past 12h = %s, want %s", got, config.MaxVisibility)
	}
}

func TestFinal(t *testing.T) {
	p := RetryPolicyFor(config.Destination{})
	for attempt, want := range map[int]bool{1: false, 9: false, 10: true, 11: true} {
		if got := p.Final(attempt); got != want {
			t.Errorf("Final(%d) = %v, want %v", attempt, got, want)
		}
	}
	if p.Attempts() != (config.Destination{}).MaxReceiveCount() {
		t.Errorf("Attempts() = %d, want the queue's maxReceiveCount %d", p.Attempts(), (config.Destination{}).MaxReceiveCount())
	}
}

func TestBackoff(t *testing.T) {
	p := RetryPolicyFor(config.Destination{})
	tests := []struct {
		name       string
		attempt    int
		retryAfter time.Duration
		age        time.Duration
		want       time.Duration
	}{
		{"no Retry-After", 1, 0, 0, 5 * time.Second},
		{"shorter Retry-After keeps the schedule", 3, time.Second, 0, 2 * time.Minute},
		{"longer Retry-After wins", 1, 10 * time.Minute, 0, 10 * time.Minute},
		{"capped at 12h", 1, 48 * time.Hour, 0, 12 * time.Hour},
		{"cut so the rest of the schedule fits the retention", 1, 12 * time.Hour, p.Retention - p.remainingNeed(1) - time.Hour, time.Hour},
		{"never below the schedule even when retention is tight", 2, 12 * time.Hour, p.Retention, 30 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := p.Backoff(tt.attempt, 0.5, tt.retryAfter, tt.age); got != tt.want {
				t.Errorf("Backoff = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestVisibilitySeconds(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want int32
	}{
		{0, 0}, {-time.Second, 0}, {1500 * time.Millisecond, 2}, {5 * time.Second, 5}, {24 * time.Hour, 43200},
	}
	for _, tt := range tests {
		if got := visibilitySeconds(tt.in); got != tt.want {
			t.Errorf("visibilitySeconds(%s) = %d, want %d", tt.in, got, tt.want)
		}
	}
}

// FuzzParseRetryAfter: never panics, never negative, bounded, and a plain
// number of seconds reads back as itself.
func FuzzParseRetryAfter(f *testing.F) {
	for _, s := range []string{"0", "120", "  7 ", "Mon, 30 Nov 2026 12:01:00 GMT", "Monday, 30-Nov-26 12:05:00 GMT",
		"Mon Nov 30 12:10:00 2026", "-1", "1e3", "99999999999999999999", "", "\x00", "Fri, 31 Dec 9999 23:59:59 GMT"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := sender.ParseRetryAfter(v, testNow)
		if d < 0 || d > sender.MaxRetryAfter {
			t.Fatalf("ParseRetryAfter(%q) = %s, out of [0, %s]", v, d, sender.MaxRetryAfter)
		}
		if !ok && d != 0 {
			t.Fatalf("ParseRetryAfter(%q) = %s but not ok", v, d)
		}
		if isDigits(v) && len(v) < 8 && ok {
			var n int64
			for _, c := range v {
				n = n*10 + int64(c-'0')
			}
			if d != time.Duration(n)*time.Second {
				t.Fatalf("ParseRetryAfter(%q) = %s, want %ds", v, d, n)
			}
		}
		p := RetryPolicyFor(config.Destination{})
		if b := p.Backoff(3, 0.5, d, time.Hour); b < p.Delay(3, 0.5) || b > config.MaxVisibility {
			t.Fatalf("Backoff with Retry-After %s = %s, outside [schedule, 12h]", d, b)
		}
	})
}
