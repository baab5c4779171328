package ingest

import (
	"context"
	"log/slog"
	"strconv"
	"time"
)

// requestLog holds the fields of ingest's one line per request. Empty
// optional fields are left out of the line.
type requestLog struct {
	source, id, typ, outcome string
	status                   int
	latency                  time.Duration
	// Optional.
	code, providerID, apiRequestID, awsRequestID, err string
}

// maxRequestAttrs is how many attributes a request line has at most.
const maxRequestAttrs = 11

// attrs lists the line's attributes in the order they are written, for a
// handler other than NewLogHandler's.
func (l *requestLog) attrs(buf *[maxRequestAttrs]slog.Attr) []slog.Attr {
	attrs := append(buf[:0],
		slog.String("source", l.source),
		slog.String("id", l.id),
		slog.String("type", l.typ),
		slog.String("outcome", l.outcome),
		slog.Int("status", l.status),
		slog.Float64("latency_ms", float64(l.latency.Microseconds())/1000),
	)
	for _, o := range [...]struct{ key, value string }{
		{"code", l.code}, {"provider_event_id", l.providerID}, {"api_request_id", l.apiRequestID},
		{"aws_request_id", l.awsRequestID}, {"error", l.err},
	} {
		if o.value != "" {
			attrs = append(attrs, slog.String(o.key, o.value))
		}
	}
	return attrs
}

// appendRequestLog appends the attributes of l as appendLogAttr appends
// l.attrs(), with the keys written as they are (they need no escaping).
func appendRequestLog(b []byte, l *requestLog) []byte {
	b = append(b, `,"source":`...)
	b = appendLogString(b, l.source)
	b = append(b, `,"id":`...)
	b = appendLogString(b, l.id)
	b = append(b, `,"type":`...)
	b = appendLogString(b, l.typ)
	b = append(b, `,"outcome":`...)
	b = appendLogString(b, l.outcome)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, `,"latency_ms":`...)
	b = appendMillis(b, l.latency.Microseconds())
	b = appendOptional(b, `,"code":`, l.code)
	b = appendOptional(b, `,"provider_event_id":`, l.providerID)
	b = appendOptional(b, `,"api_request_id":`, l.apiRequestID)
	b = appendOptional(b, `,"aws_request_id":`, l.awsRequestID)
	b = appendOptional(b, `,"error":`, l.err)
	return b
}

// appendOptional appends member (a key's `,"key":`) and value, unless the
// value is empty.
func appendOptional(b []byte, member, value string) []byte {
	if value == "" {
		return b
	}
	return appendLogString(append(b, member...), value)
}

// appendMillis appends micros/1000 as appendLogFloat(float64(micros)/1000)
// does, with integer arithmetic. Below 1e12 µs in magnitude the float's
// shortest form is the exact decimal: at most three fraction digits,
// trailing zeros dropped. Beyond that the float path is taken.
func appendMillis(b []byte, micros int64) []byte {
	if micros <= -1e12 || micros >= 1e12 {
		return appendLogFloat(b, float64(micros)/1000)
	}
	if micros < 0 {
		b = append(b, '-')
		micros = -micros
	}
	b = strconv.AppendInt(b, micros/1000, 10)
	frac := int(micros % 1000)
	if frac == 0 {
		return b
	}
	digits := 3
	for frac%10 == 0 {
		frac /= 10
		digits--
	}
	b = append(b, '.')
	return appendDigits(b, frac, digits)
}

// logRequest writes l as one line. Through NewLogHandler's handler it is
// encoded under the writer's lock, into its buffer (one lock, no pool, no
// slog.Record, which allocates past five attributes); any other handler
// gets a Record with l.attrs().
func logRequest(ctx context.Context, h slog.Handler, t time.Time, level slog.Level, l *requestLog) {
	const msg = "ingest"
	if fast, ok := h.(*logHandler); ok && fast.fast {
		out := fast.out
		out.mu.Lock()
		b, ok := appendLogHead(out.buf[:0], t, level, msg)
		if ok {
			b = append(appendRequestLog(b, l), "}\n"...)
			_, _ = out.w.Write(b)
		}
		if cap(b) <= maxPooledLine {
			out.buf = b[:0]
		}
		out.mu.Unlock()
		if ok {
			return
		}
		h = fast.json
	}
	// As Logger.LogAttrs does, without runtime.Callers: the line is always
	// this one, and a handler's AddSource would only name this function.
	var buf [maxRequestAttrs]slog.Attr
	r := slog.NewRecord(t, level, msg, 0)
	r.AddAttrs(l.attrs(&buf)...)
	_ = h.Handle(ctx, r)
}
