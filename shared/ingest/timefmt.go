package ingest

import "time"

// appendDateTime appends t's "2006-01-02T15:04:05" (in t's own location)
// without the layout interpreter. The year must be 0 to 9999; callers check.
// Both the received_at attribute and the log line's time start with it.
func appendDateTime(b []byte, t time.Time) []byte {
	year, month, day := t.Date()
	hour, minute, sec := t.Clock()
	b = appendDigits(b, year, 4)
	b = append(b, '-')
	b = appendDigits(b, int(month), 2)
	b = append(b, '-')
	b = appendDigits(b, day, 2)
	b = append(b, 'T')
	b = appendDigits(b, hour, 2)
	b = append(b, ':')
	b = appendDigits(b, minute, 2)
	b = append(b, ':')
	return appendDigits(b, sec, 2)
}

// appendDigits appends v as exactly width decimal digits, zero-padded.
func appendDigits(b []byte, v, width int) []byte {
	var d [9]byte
	for i := width - 1; i >= 0; i-- {
		d[i] = byte('0' + v%10)
		v /= 10
	}
	return append(b, d[:width]...)
}
