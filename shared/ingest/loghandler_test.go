package ingest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/slogtest"
	"time"
)

// TestLogHandlerMatchesJSONHandler logs random records through both
// handlers and requires the same bytes.
func TestLogHandlerMatchesJSONHandler(t *testing.T) {
	strs := []string{"", "stripe", "evt_0123", "a\"b\\c", "tab\there\nnl\rcr", "\x00\x01\x1f\x7f", "<b>&amp;</b>", "café ünï 😀",
		"bad \xff utf8 \xc3", "line\u2028sep\u2029", "é\xe2\x80", strings.Repeat("x", 300),
		"abcdefgh\"ijklmnopq", "abcdefghijklmno\x01p", "abcdefghijklmnop\xff", "12345678é9", "1234567\\8", "abcdefgh\x7f"}
	floats := []float64{0, 0.123, -1.5, 1e-7, 123456.789, 1e21, 5e-324, math.MaxFloat64, 3, math.Inf(1), math.NaN()}
	times := []time.Time{time.Date(2026, 11, 30, 5, 0, 0, 123_456_789, time.UTC), time.Now(),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -7*3600)), {}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(2026, 12, 31, 23, 59, 59, 120_000_000, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 100, time.UTC),
		time.Date(2026, 6, 1, 0, 0, 0, 5, time.FixedZone("GMT", 0)), time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC)}
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError, slog.LevelDebug + 2}
	rng := rand.New(rand.NewPCG(5, 6))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for i := range 3000 {
		r := slog.NewRecord(times[rng.IntN(len(times))], levels[rng.IntN(len(levels))], pick(strs), 0)
		for range rng.IntN(12) {
			key := pick(strs)
			switch rng.IntN(8) {
			case 0, 1, 2:
				r.AddAttrs(slog.String(key, pick(strs)))
			case 3:
				r.AddAttrs(slog.Int64(key, rng.Int64()-math.MaxInt64/2))
			case 4:
				r.AddAttrs(slog.Uint64(key, rng.Uint64()))
			case 5:
				r.AddAttrs(slog.Bool(key, rng.IntN(2) == 0))
			case 6:
				r.AddAttrs(slog.Float64(key, floats[rng.IntN(len(floats))]))
			default:
				r.AddAttrs([]slog.Attr{slog.Duration(key, time.Second), slog.Any(key, []int{1}), slog.Group(key, slog.Int("n", 1)),
					slog.Any(key, errors.New("boom"))}[rng.IntN(4)])
			}
		}
		var want, got bytes.Buffer
		if err := slog.NewJSONHandler(&want, nil).Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if err := NewLogHandler(&got, nil).Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got.Bytes(), want.Bytes())
		}
	}
}

func TestLogHandlerSlogtest(t *testing.T) {
	var buf bytes.Buffer
	slogtest.Run(t, func(*testing.T) slog.Handler {
		buf.Reset()
		return NewLogHandler(&buf, nil)
	}, func(t *testing.T) map[string]any {
		var m map[string]any
		if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		return m
	})
}

func TestLogHandlerOptions(t *testing.T) {
	var got, want bytes.Buffer
	opts := &slog.HandlerOptions{Level: slog.LevelWarn, ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
		if a.Key == "secret" {
			a.Value = slog.StringValue("redacted")
		}
		return a
	}}
	for _, h := range []struct {
		h slog.Handler
		w *bytes.Buffer
	}{{NewLogHandler(&got, opts), &got}, {slog.NewJSONHandler(&want, opts), &want}} {
		l := slog.New(h.h)
		l.Info("dropped")
		l.Warn("kept", "secret", "x", "n", 1)
		l.With("a", 1).WithGroup("g").Error("grouped", "b", 2.5)
	}
	strip := func(s string) string { // the times differ
		var out []string
		for _, line := range strings.Split(strings.TrimSpace(s), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatal(err)
			}
			delete(m, "time")
			b, _ := json.Marshal(m)
			out = append(out, string(b))
		}
		return strings.Join(out, "\n")
	}
	if g, w := strip(got.String()), strip(want.String()); g != w {
		t.Errorf("with options:\n got %s\nwant %s", g, w)
	}
}

// TestRequestLogMatchesJSONHandler writes random request lines through
// NewLogHandler's encoder and through slog's JSONHandler, and requires the
// same bytes.
func TestRequestLogMatchesJSONHandler(t *testing.T) {
	strs := []string{"", "stripe", "evt_0123", "a\"b\\c", "tab\there\nnl", "\x00\x1f\x7f", "<b>&</b>", "café 😀",
		"bad \xff utf8", "line\u2028sep", strings.Repeat("x", 300)}
	latencies := []time.Duration{0, time.Microsecond, 999 * time.Microsecond, time.Millisecond, 1500 * time.Microsecond,
		1230 * time.Microsecond, 120 * time.Millisecond, 3*time.Second + 7*time.Microsecond, -5 * time.Microsecond,
		-1250 * time.Microsecond, 500 * time.Nanosecond, time.Hour, 277*time.Hour + time.Microsecond,
		999_999_999_999 * time.Microsecond, 1_000_000_000_000 * time.Microsecond, -1_000_000_000_001 * time.Microsecond,
		math.MaxInt64, math.MinInt64}
	times := []time.Time{time.Date(2026, 11, 30, 5, 0, 0, 123_456_789, time.UTC), time.Now(),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -7*3600)), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	levels := []slog.Level{slog.LevelInfo, slog.LevelWarn, slog.LevelError}
	rng := rand.New(rand.NewPCG(7, 8))
	pick := func(s []string) string { return s[rng.IntN(len(s))] }
	for i := range 5000 {
		l := requestLog{source: pick(strs), id: pick(strs), typ: pick(strs), outcome: pick(strs), status: rng.IntN(600),
			latency: latencies[rng.IntN(len(latencies))], code: pick(strs), providerID: pick(strs),
			apiRequestID: pick(strs), awsRequestID: pick(strs), err: pick(strs)}
		if i%3 == 0 {
			l.latency = time.Duration(rng.Int64N(int64(10 * time.Minute)))
		}
		tm, level := times[rng.IntN(len(times))], levels[rng.IntN(len(levels))]
		var got, want bytes.Buffer
		logRequest(context.Background(), NewLogHandler(&got, nil), tm, level, &l)
		var buf [maxRequestAttrs]slog.Attr
		r := slog.NewRecord(tm, level, "ingest", 0)
		r.AddAttrs(l.attrs(&buf)...)
		if err := slog.NewJSONHandler(&want, nil).Handle(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if got.String() != want.String() {
			t.Fatalf("case %d:\n got %s\nwant %s", i, got.Bytes(), want.Bytes())
		}
	}
}

// BenchmarkLogLine writes ingest's per-request line through NewLogHandler
// and through slog's JSONHandler, as Handler.record does.
func BenchmarkLogLine(b *testing.B) {
	l := requestLog{source: "stripe", id: "evt_0123456789abcdef0123456789abcdef", typ: "payment_intent.succeeded",
		outcome: "accepted", status: 202, latency: 123 * time.Microsecond, providerID: "evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R",
		apiRequestID: "local-stripe"}
	ctx := context.Background()
	b.Run("NewLogHandler", func(b *testing.B) {
		h := NewLogHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			logRequest(ctx, h, time.Now(), slog.LevelInfo, &l)
		}
	})
	b.Run("JSONHandler", func(b *testing.B) {
		h := slog.NewJSONHandler(io.Discard, nil)
		b.ReportAllocs()
		for b.Loop() {
			logRequest(ctx, h, time.Now(), slog.LevelInfo, &l)
		}
	})
}
