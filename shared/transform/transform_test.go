package transform

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestApply(t *testing.T) {
	tests := []struct {
		name, expr, body, want string
	}{
		{"identity keeps big numbers exact", ".", `{"id":12345678901234567890,"a":[1,2.5]}`, `{"a":[1,2.5],"id":12345678901234567890}`},
		{"object construction", `{text: "paid \(.data.object.amount / 100) \(.data.object.currency | ascii_upcase)"}`,
			`{"data":{"object":{"amount":2000,"currency":"usd"}}}`, `{"text":"paid 20 USD"}`},
		{"no HTML escaping", `{t: .s}`, `{"s":"<a&b>"}`, `{"t":"<a&b>"}`},
		{"env is empty", `{e: $ENV, f: env}`, `{}`, `{"e":{},"f":{}}`},
		{"a scalar", `.n + 1`, `{"n":1}`, `2`},
		{"null input field", `.missing`, `{}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.expr)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			got, err := p.Apply(context.Background(), []byte(tt.body))
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if string(got) != tt.want {
				t.Errorf("Apply = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCompileRefuses(t *testing.T) {
	tests := []struct{ name, expr, want string }{
		{"empty", "  ", "empty"},
		{"syntax", "{a: }", "does not parse"},
		{"unknown function", "nosuch(1)", "does not compile"},
		{"unknown variable", "$nope", "does not compile"},
		{"input is not allowed", "input", "does not compile"},
		{"debug is not defined", "debug", "does not compile"},
		{"stderr is not defined", "stderr", "does not compile"},
		{"modules are not loaded", `import "m" as m; .`, "does not compile"},
		{"too long", strings.Repeat(" ", MaxExpressionBytes) + ".", "bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Compile(tt.expr)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Compile(%q) = %v, want an error with %q", tt.expr, err, tt.want)
			}
		})
	}
}

func TestApplyFailsForTheEvent(t *testing.T) {
	tests := []struct {
		name, expr, body, want string
		opts                   []Option
	}{
		{"not JSON", ".", `id=1&x=2`, "not JSON (syntax error at byte 0)", nil},
		{"empty body", ".", ``, "not JSON (empty)", nil},
		{"truncated", ".", `{"a":`, "not JSON", nil},
		{"two values", ".", `{} {}`, "more than one value, or data after", nil},
		{"runtime error", `.a | keys`, `{"a":1}`, "the expression failed", nil},
		{"error()", `error("no")`, `{}`, "the expression raised an error: no", nil},
		{"no value", `empty`, `{}`, "yields no value", nil},
		{"several values", `.[]`, `[1,2]`, "more than one value", nil},
		{"halt", `halt`, `{}`, "halted", nil},
		{"endless", `def f: f; f`, `{}`, "ran longer than", []Option{WithTimeout(20 * time.Millisecond), WithBudget(1 << 50)}},
		{"endless, in steps", `def f: f; f`, `{}`, "ran past the memory bound", nil},
		{"endless range", `[range(1e15)] | length`, `{}`, "ran past the memory bound", nil},
		{"too large", `[range(100)]`, `{}`, "a transformed body may have at most 10", []Option{WithMaxOutput(10)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := Compile(tt.expr, tt.opts...)
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			_, err = p.Apply(context.Background(), []byte(tt.body))
			if !errors.Is(err, ErrEvent) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Apply = %v, want ErrEvent with %q", err, tt.want)
			}
		})
	}
}

func TestErrorTextIsBounded(t *testing.T) {
	p, err := Compile(`error(.s)`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Apply(context.Background(), []byte(`{"s":"`+strings.Repeat("é", 1000)+`"}`))
	if err == nil || len(err.Error()) > maxErrorText+64 {
		t.Fatalf("error of %d bytes, want at most about %d: %v", len(err.Error()), maxErrorText, err)
	}
}

func TestConcurrentUse(t *testing.T) {
	p, err := Compile(`{n: (.n * 2)}`)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 8)
	for i := range 8 {
		go func() {
			out, err := p.Apply(context.Background(), []byte(`{"n":`+strconv.Itoa(i)+`}`))
			if want := `{"n":` + strconv.Itoa(2*i) + `}`; err == nil && string(out) != want {
				err = errors.New("got " + string(out) + ", want " + want)
			}
			done <- err
		}()
	}
	for range 8 {
		if err := <-done; err != nil {
			t.Error(err)
		}
	}
}

func FuzzApply(f *testing.F) {
	for _, s := range []struct{ expr, body string }{
		{".", `{"a":1}`}, {`{t: .a}`, `{"a":"x"}`}, {`.[]`, `[1,2]`}, {`error`, `"e"`},
		{`def f: f; f`, `{}`}, {`[range(1e9)]`, `0`}, {`.a.b.c`, `not json`}, {`nan`, `1`}, {`$ENV`, `{}`},
	} {
		f.Add(s.expr, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, expr string, body []byte) {
		p, err := Compile(expr, WithTimeout(50*time.Millisecond), WithMaxOutput(1<<16))
		if err != nil {
			return
		}
		out, err := p.Apply(context.Background(), body)
		if err != nil {
			if !errors.Is(err, ErrEvent) {
				t.Fatalf("error %v does not match ErrEvent", err)
			}
			return
		}
		if !json.Valid(out) || len(out) > 1<<16 {
			t.Fatalf("output %q is not one JSON value within the bound", out)
		}
	})
}
