package transform

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"unicode/utf8"
)

// errFull is returned by a bounded buffer's writes past its limit.
var errFull = errors.New("the output limit is reached")

// boundedBuffer collects encoded bytes up to limit; a write past it fails
// and keeps nothing of it, so the encoder stops there. Each time it grows,
// its new capacity is charged to ev (the old one becomes garbage the
// count does not give back): about twice the bytes written in all.
type boundedBuffer struct {
	b     []byte
	limit int
	ev    *evaluation
	err   error
}

func (w *boundedBuffer) room(n int) bool {
	if w.err != nil {
		return false
	}
	if len(w.b)+n > w.limit {
		w.err = errFull
		return false
	}
	if len(w.b)+n > cap(w.b) {
		c := min(max(2*cap(w.b), len(w.b)+n, 512), w.limit)
		if err := w.ev.charge(int64(c), "the encoded output"); err != nil {
			w.err = err
			return false
		}
		b := make([]byte, len(w.b), c)
		copy(b, w.b)
		w.b = b
	}
	return true
}

func (w *boundedBuffer) str(s string) {
	if w.room(len(s)) {
		w.b = append(w.b, s...)
	}
}

func (w *boundedBuffer) bytes(p []byte) {
	if w.room(len(p)) {
		w.b = append(w.b, p...)
	}
}

func (w *boundedBuffer) byte(c byte) {
	if w.room(1) {
		w.b = append(w.b, c)
	}
}

// encoder writes a gojq value as jq does (gojq.Marshal's output: object
// keys sorted, NaN as null, infinities as ±MaxFloat64, \b and \f escapes,
// no HTML escaping), into a bounded buffer: it stops at the limit as it
// writes, so a value that shares its parts (an array holding one array
// many times) costs no more than the limit in time and memory. Each object's
// sorted keys are charged to ev.
type encoder struct {
	w   boundedBuffer
	ev  *evaluation
	n   int
	tmp [64]byte
}

// encode writes v; ok is false when it stopped at the limit (or a bound).
func encodeBounded(v any, limit int, ev *evaluation) ([]byte, error) {
	e := &encoder{w: boundedBuffer{limit: limit, ev: ev}, ev: ev}
	e.value(v)
	if e.w.err != nil {
		return nil, e.w.err
	}
	return e.w.b, nil
}

func (e *encoder) value(v any) {
	if e.w.err != nil {
		return
	}
	if e.n++; e.n%checkEvery == 0 {
		if err := e.ev.Err(); err != nil {
			e.w.err = err
			return
		}
	}
	switch v := v.(type) {
	case nil:
		e.w.str("null")
	case bool:
		e.w.str(strconv.FormatBool(v))
	case int:
		e.w.bytes(strconv.AppendInt(e.tmp[:0], int64(v), 10))
	case float64:
		e.float(v)
	case *big.Int:
		e.w.str(v.String())
	case json.Number:
		e.w.str(v.String())
	case string:
		e.string(v)
	case []any:
		e.w.byte('[')
		for i, x := range v {
			if i > 0 {
				e.w.byte(',')
			}
			e.value(x)
			if e.w.err != nil {
				return
			}
		}
		e.w.byte(']')
	case map[string]any:
		if err := e.ev.charge(int64(len(v))*16, "the encoded output's keys"); err != nil {
			e.w.err = err
			return
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		e.w.byte('{')
		for i, k := range keys {
			if i > 0 {
				e.w.byte(',')
			}
			e.string(k)
			e.w.byte(':')
			e.value(v[k])
			if e.w.err != nil {
				return
			}
		}
		e.w.byte('}')
	default:
		e.w.err = fmt.Errorf("a value of Go type %T has no JSON form", v)
	}
}

// float writes f as jq does: the shortest form that reads back the same,
// in exponent form below 1e-6 and from 1e21.
func (e *encoder) float(f float64) {
	if math.IsNaN(f) {
		e.w.str("null")
		return
	}
	f = min(max(f, -math.MaxFloat64), math.MaxFloat64)
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		b := strconv.AppendFloat(e.tmp[:0], f, 'e', -1, 64)
		// A two-digit negative exponent loses its leading zero: e-07 → e-7.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b = append(b[:n-2], b[n-1])
		}
		e.w.bytes(b)
		return
	}
	e.w.bytes(strconv.AppendFloat(e.tmp[:0], f, 'f', -1, 64))
}

// string writes s quoted, escaping what JSON requires and jq escapes.
func (e *encoder) string(s string) {
	e.w.byte('"')
	from := 0
	flush := func(to int) {
		if from < to {
			e.w.str(s[from:to])
		}
	}
	for i := 0; i < len(s) && e.w.err == nil; {
		c := s[i]
		if c >= utf8.RuneSelf {
			r, n := utf8.DecodeRuneInString(s[i:])
			if r == utf8.RuneError && n == 1 {
				flush(i)
				e.w.str(`\ufffd`)
				from = i + 1
			}
			i += n
			continue
		}
		if c >= ' ' && c != '"' && c != '\\' && c != 0x7f {
			i++
			continue
		}
		flush(i)
		switch c {
		case '"', '\\':
			e.w.byte('\\')
			e.w.byte(c)
		case '\b':
			e.w.str(`\b`)
		case '\f':
			e.w.str(`\f`)
		case '\n':
			e.w.str(`\n`)
		case '\r':
			e.w.str(`\r`)
		case '\t':
			e.w.str(`\t`)
		default:
			e.w.str(`\u00`)
			e.w.byte("0123456789abcdef"[c>>4])
			e.w.byte("0123456789abcdef"[c&0xf])
		}
		i++
		from = i
	}
	flush(len(s))
	e.w.byte('"')
}
