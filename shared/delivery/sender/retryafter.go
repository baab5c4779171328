package sender

import (
	"net/http"
	"strings"
	"time"
)

// MaxRetryAfter bounds a parsed Retry-After before any policy applies, so
// arithmetic on it cannot overflow.
const MaxRetryAfter = 365 * 24 * time.Hour

// ParseRetryAfter reads a Retry-After value: delay-seconds or an HTTP-date
// (RFC 9110 §10.2.3). A date in the past means no delay. ok is false when
// the value is neither.
func ParseRetryAfter(v string, now time.Time) (d time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if v != "" && strings.Trim(v, "0123456789") == "" {
		secs := 0.0
		for i := 0; i < len(v); i++ {
			secs = secs*10 + float64(v[i]-'0')
			if secs > MaxRetryAfter.Seconds() {
				return MaxRetryAfter, true
			}
		}
		return time.Duration(secs) * time.Second, true
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return 0, false
	}
	d = t.Sub(now)
	if d < 0 {
		return 0, true
	}
	return min(d, MaxRetryAfter), true
}
