// Package transform reshapes a delivery's JSON body with a jq expression
// (github.com/itchyny/gojq): a destination's transform, compiled once when
// the deliver function is assembled and applied to each event's body
// before it is signed and sent.
//
// An expression that does not compile is a configuration error. One that
// fails on an event — the body is not JSON, the expression raises an error,
// yields no value or more than one, or runs past the time or size bound —
// fails for that event for good: the same body and expression fail the same
// way on every attempt, so the caller does not retry it.
//
// The expression sees the body alone: no environment ($ENV and env are
// empty objects, never the function's own variables, which hold its
// credentials), no input, input_filename, debug or stderr, no modules.
package transform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/itchyny/gojq"
)

// Bounds on one evaluation.
const (
	// MaxExpressionBytes bounds an expression's source: it travels in the
	// deliver function's environment, which Lambda caps at 4 KB in all.
	MaxExpressionBytes = 2048
	// DefaultTimeout bounds one evaluation: a reshaping takes microseconds;
	// a runaway expression (an endless recursion, range(1e12)) is stopped
	// long before it eats the attempt's budget.
	DefaultTimeout = 250 * time.Millisecond
	// DefaultMaxOutput bounds the transformed body: 1 MiB, more than any
	// chat message or API payload an expression builds.
	DefaultMaxOutput = 1 << 20
	// MaxInput is the largest body a transform reads (the largest body a
	// lane delivers, 4.5 MB with large payloads).
	MaxInput = 6 << 20
)

// ContentType is the Content-Type of a transformed body.
const ContentType = "application/json"

// ErrEvent matches every error Apply returns: the event cannot be
// transformed, now or on any later attempt.
var ErrEvent = errors.New("transform failed")

// Program is a compiled expression. It is safe for concurrent use.
type Program struct {
	code      *gojq.Code
	timeout   time.Duration
	maxOutput int
}

// Option changes a Program's bounds (tests use them).
type Option func(*Program)

// WithTimeout sets the time bound of one evaluation.
func WithTimeout(d time.Duration) Option { return func(p *Program) { p.timeout = d } }

// WithMaxOutput sets the size bound of the transformed body.
func WithMaxOutput(n int) Option { return func(p *Program) { p.maxOutput = n } }

// Compile parses and compiles a jq expression. The error says where the
// expression is wrong, in gojq's words, without the body of any event.
func Compile(expr string, opts ...Option) (*Program, error) {
	switch {
	case strings.TrimSpace(expr) == "":
		return nil, errors.New("the expression is empty")
	case len(expr) > MaxExpressionBytes:
		return nil, fmt.Errorf("the expression is %d bytes; use at most %d", len(expr), MaxExpressionBytes)
	}
	q, err := gojq.Parse(expr)
	if err != nil {
		var pe *gojq.ParseError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("does not parse: %w (near byte %d)", err, pe.Offset)
		}
		return nil, fmt.Errorf("does not parse: %w", err)
	}
	// No environment loader: $ENV and env are {}. No input iterator, module
	// loader or debug/stderr functions: those fail to compile.
	code, err := gojq.Compile(q, gojq.WithEnvironLoader(func() []string { return nil }))
	if err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	p := &Program{code: code, timeout: DefaultTimeout, maxOutput: DefaultMaxOutput}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Apply evaluates the expression on a JSON body and returns the one JSON
// value it yields, encoded. Every error matches ErrEvent. Errors about the
// body never quote it; an error the expression raises is gojq's, which may
// preview the value it failed on, cut to a short bound.
func (p *Program) Apply(ctx context.Context, body []byte) ([]byte, error) {
	in, err := decode(body)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEvent, err)
	}
	ctx, cancel := context.WithTimeout(ctx, p.timeout)
	defer cancel()
	iter := p.code.RunWithContext(ctx, in)
	v, err := one(ctx, iter, p.timeout)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEvent, err)
	}
	out, err := gojq.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("%w: the output does not encode as JSON: %w", ErrEvent, err)
	}
	if len(out) > p.maxOutput {
		return nil, fmt.Errorf("%w: the output is %d bytes; a transformed body may have at most %d", ErrEvent, len(out), p.maxOutput)
	}
	return out, nil
}

// decode reads exactly one JSON value (numbers kept exact).
func decode(body []byte) (any, error) {
	if len(body) > MaxInput {
		return nil, fmt.Errorf("the body is %d bytes; a transform reads at most %d", len(body), MaxInput)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("the body is not JSON (%s); a transform reshapes JSON bodies only", jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("the body is not JSON (more than one value, or data after the value); a transform reshapes JSON bodies only")
	}
	return v, nil
}

// jsonProblem describes a decoding error without quoting the body.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at byte %d", se.Offset)
	case errors.Is(err, io.EOF):
		return "empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "it ends early"
	default:
		return "unreadable"
	}
}

// one takes the single value iter yields.
func one(ctx context.Context, iter gojq.Iter, timeout time.Duration) (any, error) {
	v, ok := iter.Next()
	if !ok {
		return nil, errors.New("the expression yields no value; it must yield exactly one (the body to send)")
	}
	if err := valueError(ctx, v, timeout); err != nil {
		return nil, err
	}
	if w, more := iter.Next(); more {
		if err := valueError(ctx, w, timeout); err != nil && ctx.Err() != nil {
			return nil, err
		}
		return nil, errors.New("the expression yields more than one value; it must yield exactly one (collect them with [...])")
	}
	return v, nil
}

// valueError is the error an iterator yielded in place of a value.
func valueError(ctx context.Context, v any, timeout time.Duration) error {
	err, ok := v.(error)
	if !ok {
		return nil
	}
	if errors.Is(err, context.DeadlineExceeded) || ctx.Err() != nil {
		return fmt.Errorf("the expression ran longer than %s", timeout)
	}
	var he *gojq.HaltError
	if errors.As(err, &he) && he.Value() == nil {
		return errors.New("the expression halted without a value")
	}
	return fmt.Errorf("the expression failed: %s", short(err.Error()))
}

// maxErrorText bounds the expression's error as reported: an error value
// can quote a large part of the body (error(.)).
const maxErrorText = 160

func short(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}
