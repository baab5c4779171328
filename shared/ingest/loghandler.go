package ingest

import (
	"context"
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// NewLogHandler returns a slog.Handler that writes exactly the lines
// slog.NewJSONHandler(w, opts) writes, faster for the records ingest logs
// on every request. A record whose attributes are all strings, integers,
// finite floats or booleans, logged without WithAttrs or WithGroup, and
// with neither opts.AddSource nor opts.ReplaceAttr set, is encoded here
// into a reused buffer and written at once: about a third of the cost of
// slog's general encoder (BenchmarkLogLine), which for instance marshals
// every float through encoding/json. Every other record, and every handler derived with
// WithAttrs or WithGroup, goes to slog's JSONHandler. Writes from both
// paths are serialized, one Write per line.
//
// The function's main should build its logger with it:
//
//	log := slog.New(ingest.NewLogHandler(os.Stdout, nil))
func NewLogHandler(w io.Writer, opts *slog.HandlerOptions) slog.Handler {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	lw := &lockedWriter{w: w}
	return &logHandler{
		out:  lw,
		json: slog.NewJSONHandler(lw, opts),
		fast: !opts.AddSource && opts.ReplaceAttr == nil,
	}
}

// lockedWriter serializes the writes of both encoders.
type lockedWriter struct {
	mu  sync.Mutex
	w   io.Writer
	buf []byte // logRequest's line, under mu
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

type logHandler struct {
	out  *lockedWriter
	json slog.Handler // slog's encoder, for everything the fast path leaves
	fast bool         // the options allow the fast path
}

// maxPooledLine bounds the buffers kept for reuse.
const maxPooledLine = 16 << 10

var lineBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func (h *logHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.json.Enabled(ctx, l)
}

func (h *logHandler) WithAttrs(as []slog.Attr) slog.Handler { return h.json.WithAttrs(as) }

func (h *logHandler) WithGroup(name string) slog.Handler { return h.json.WithGroup(name) }

func (h *logHandler) Handle(ctx context.Context, r slog.Record) error {
	if !h.fast {
		return h.json.Handle(ctx, r)
	}
	bp := lineBuffers.Get().(*[]byte)
	line, ok := appendLogLine((*bp)[:0], &r)
	if !ok {
		lineBuffers.Put(bp)
		return h.json.Handle(ctx, r)
	}
	_, err := h.out.Write(line)
	if cap(line) <= maxPooledLine {
		*bp = line
		lineBuffers.Put(bp)
	}
	return err
}

// appendLogLine appends r as slog's JSONHandler (without options) writes
// it, newline included; ok is false when r holds anything but plain
// attributes, or a time or float JSONHandler would report as an error.
func appendLogLine(b []byte, r *slog.Record) (_ []byte, ok bool) {
	if b, ok = appendLogHead(b, r.Time, r.Level, r.Message); !ok {
		return b, false
	}
	r.Attrs(func(a slog.Attr) bool {
		b, ok = appendLogAttr(b, a)
		return ok
	})
	return append(b, "}\n"...), ok
}

// appendLogHead opens a line with the time, level and message.
func appendLogHead(b []byte, t time.Time, level slog.Level, msg string) (_ []byte, ok bool) {
	b = append(b, '{')
	if !t.IsZero() {
		b = append(b, `"time":"`...)
		if b, ok = appendLogTime(b, t.Round(0)); !ok { // Round(0): without the monotonic clock, as slog does
			return b, false
		}
		b = append(b, `",`...)
	}
	b = append(b, `"level":`...)
	b = appendLogString(b, level.String())
	b = append(b, `,"msg":`...)
	return appendLogString(b, msg), true
}

// appendLogTime appends t as t.AppendFormat(b, time.RFC3339Nano) does,
// without the layout interpreter when t is at offset zero (Lambda's clock);
// ok is false for a year outside 0 to 9999, which slog reports as an error.
func appendLogTime(b []byte, t time.Time) (_ []byte, ok bool) {
	if _, offset := t.Zone(); offset != 0 {
		if y := t.Year(); y < 0 || y >= 10000 {
			return b, false
		}
		return t.AppendFormat(b, time.RFC3339Nano), true
	}
	dt, ok := dateTime(t.Unix()) // at offset zero, t's wall clock is UTC's
	if !ok {
		return b, false
	}
	b = append(b, dt[:]...)
	if ns := t.Nanosecond(); ns != 0 {
		var frac [9]byte
		digits := appendDigits(frac[:0], ns, 9)
		n := len(digits)
		for digits[n-1] == '0' { // RFC3339Nano drops trailing zeros
			n--
		}
		b = append(b, '.')
		b = append(b, digits[:n]...)
	}
	return append(b, 'Z'), true
}

// appendLogAttr appends ',' and a plain attribute; ok is false for any
// other.
func appendLogAttr(b []byte, a slog.Attr) (_ []byte, ok bool) {
	b = append(b, ',')
	b = appendLogString(b, a.Key)
	b = append(b, ':')
	switch v := a.Value; v.Kind() {
	case slog.KindString:
		b = appendLogString(b, v.String())
	case slog.KindInt64:
		b = strconv.AppendInt(b, v.Int64(), 10)
	case slog.KindUint64:
		b = strconv.AppendUint(b, v.Uint64(), 10)
	case slog.KindBool:
		b = strconv.AppendBool(b, v.Bool())
	case slog.KindFloat64:
		f := v.Float64()
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return b, false
		}
		b = appendLogFloat(b, f)
	default: // groups, times, durations, any values, LogValuers
		return b, false
	}
	return b, true
}

// appendLogFloat appends f as encoding/json encodes a finite float64,
// which is what slog's JSONHandler writes.
func appendLogFloat(b []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// encoding/json writes e-7, not e-07.
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// logSafe marks the ASCII bytes slog writes in a JSON string as they are.
var logSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

const lowerHex = "0123456789abcdef"

// appendLogString appends s quoted and escaped as slog's JSONHandler does:
// '"' and '\\' and control characters escaped (\n, \r, \t by name), invalid
// UTF-8 as \ufffd, U+2028 and U+2029 as \u2028 and \u2029; everything else,
// HTML characters included, as it is.
func appendLogString(b []byte, s string) []byte {
	b = append(b, '"')
	start, i := 0, 0
	// Eight bytes at a time while all are printable ASCII other than '"'
	// and '\\': the common case, copied as it is.
	for ; i+8 <= len(s); i += 8 {
		w := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if !plainWord(w) || w&msb != 0 {
			break
		}
	}
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if logSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', lowerHex[c>>4], lowerHex[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', lowerHex[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
