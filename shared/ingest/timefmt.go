package ingest

// Both the received_at attribute and the log line's time start with the
// date and time of day; formatting them through time.Time's Date and Clock
// (each of which works out the date again) cost more than a small HMAC's
// worth of a request's budget. dateTime works them out once, from the Unix
// seconds.

// secondsPerDay is the length of a UTC day (Unix time has no leap seconds).
const secondsPerDay = 86400

// digitPairs holds "00" to "99", for writing two digits at once.
const digitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" +
	"90919293949596979899"

// putPair writes v, 0 to 99, as two digits.
func putPair(b []byte, v int) {
	b[0], b[1] = digitPairs[2*v], digitPairs[2*v+1]
}

// dateTime renders Unix time sec as "2006-01-02T15:04:05" in UTC; ok is
// false outside the years 0 to 9999, which the callers leave to
// time.Time's own formatting.
func dateTime(sec int64) (out [len("2006-01-02T15:04:05")]byte, ok bool) {
	days, rem := sec/secondsPerDay, sec%secondsPerDay
	if rem < 0 {
		days, rem = days-1, rem+secondsPerDay
	}
	year, month, day := civilDate(days)
	if year < 0 || year > 9999 {
		return out, false
	}
	putPair(out[0:], int(year/100))
	putPair(out[2:], int(year%100))
	out[4] = '-'
	putPair(out[5:], month)
	out[7] = '-'
	putPair(out[8:], day)
	out[10] = 'T'
	putPair(out[11:], int(rem/3600))
	out[13] = ':'
	putPair(out[14:], int(rem%3600/60))
	out[16] = ':'
	putPair(out[17:], int(rem%60))
	return out, true
}

// civilDate returns the proleptic Gregorian date of the day days after
// 1970-01-01: Howard Hinnant's civil_from_days, which counts 400-year eras
// from 0000-03-01 so that the leap day ends each year.
func civilDate(days int64) (year int64, month, day int) {
	const daysPerEra = 146097 // 400 years
	z := days + 719468        // days from 0000-03-01
	era := z / daysPerEra
	if z < 0 && z%daysPerEra != 0 {
		era--
	}
	doe := z - era*daysPerEra                                      // day of the era, 0 to 146096
	yoe := (doe - doe/1460 + doe/36524 - doe/(daysPerEra-1)) / 365 // year of the era, 0 to 399
	doy := doe - (365*yoe + yoe/4 - yoe/100)                       // day of the year from March 1, 0 to 365
	mp := (5*doy + 2) / 153                                        // month from March, 0 to 11
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
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

// appendMillis3 appends ms, 0 to 999, as three digits.
func appendMillis3(b []byte, ms int) []byte {
	return append(b, byte('0'+ms/100), digitPairs[2*(ms%100)], digitPairs[2*(ms%100)+1])
}
