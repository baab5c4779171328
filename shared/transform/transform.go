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
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/itchyny/gojq"
)

// Bounds on one event's transform.
const (
	// MaxExpressionBytes bounds an expression's source: it travels in the
	// deliver function's environment, which Lambda caps at 4 KB in all.
	MaxExpressionBytes = 2048
	// DefaultTimeout bounds one event's transform in wall-clock time,
	// decoding and encoding included: a last resort. The memory bound
	// (Budget) counts steps and bytes, the same on a busy machine as on an
	// idle one, and stops a runaway expression (an endless recursion,
	// range(1e12)) first; what it does not count (the comparisons of
	// sort_by and group_by, fromstream) stops here. A reshaping takes
	// well under 1 ms of CPU, a few ms at 128 MB's share of a vCPU: an
	// ordinary event does not reach 2 s on a busy function, and 2 s fits
	// in the deliver function's 10 s of overhead beside the POST's timeout.
	DefaultTimeout = 2 * time.Second
	// DefaultMaxOutput bounds the transformed body: 1 MiB, more than any
	// chat message or API payload an expression builds.
	DefaultMaxOutput = 1 << 20
	// MaxInput is the largest body a transform reads (the largest body a
	// lane delivers, 4.5 MB with large payloads); the memory bound
	// (Budget) usually stops a large body before.
	MaxInput = 6 << 20
)

// ContentType is the Content-Type of a transformed body.
const ContentType = "application/json"

// ErrEvent matches every error Apply returns: the event cannot be
// transformed, now or on any later attempt.
var ErrEvent = errors.New("transform failed")

// Error is an event's transform failure. Its message says what kind of
// failure it was and never quotes the body (it goes into the delivery
// record and the log line); Detail is gojq's own message, which may
// preview the value it failed on, for a DEBUG log line only.
type Error struct {
	Kind   string
	Detail string
}

func (e *Error) Error() string { return ErrEvent.Error() + ": " + e.Kind }

// Unwrap makes every Error match ErrEvent.
func (e *Error) Unwrap() error { return ErrEvent }

// ErrInterrupted is what Apply returns when the caller's own context ended
// (the function reached its deadline) before the transform did: nothing is
// known of the event, so it does not match ErrEvent and the caller tries
// again later rather than give the event up.
var ErrInterrupted = errors.New("transform interrupted: the invocation ended first")

// Program is a compiled expression. It is safe for concurrent use.
type Program struct {
	code      *gojq.Code
	timeout   time.Duration
	maxOutput int
	budget    int64
	literals  map[string]bool // the expression's string literals
}

// Option changes a Program's bounds.
type Option func(*Program)

// WithTimeout sets the time bound of one event's transform.
func WithTimeout(d time.Duration) Option { return func(p *Program) { p.timeout = d } }

// WithMaxOutput sets the size bound of the transformed body.
func WithMaxOutput(n int) Option { return func(p *Program) { p.maxOutput = n } }

// WithBudget sets the memory bound of one event's transform, in bytes
// (Budget gives it for a function's memory and concurrency; at least
// MinBudget).
func WithBudget(bytes int64) Option {
	return func(p *Program) { p.budget = max(bytes, MinBudget) }
}

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
	literals := stringLiterals(q)
	if err := rewrite(q); err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	// No environment loader: $ENV and env are {}. No input iterator, module
	// loader or debug/stderr functions: those fail to compile.
	copts := append([]gojq.CompilerOption{gojq.WithEnvironLoader(func() []string { return nil }), gojq.WithVariables([]string{budgetVar})}, boundedFunctions()...)
	code, err := gojq.Compile(q, copts...)
	if err != nil {
		return nil, fmt.Errorf("does not compile: %w", err)
	}
	p := &Program{code: code, timeout: DefaultTimeout, maxOutput: DefaultMaxOutput, budget: Budget(DefaultMemoryMB, DefaultConcurrency), literals: literals}
	for _, o := range opts {
		o(p)
	}
	return p, nil
}

// Bound is the memory bound of one event's transform, in bytes.
func (p *Program) Bound() int64 { return p.budget }

// Apply evaluates the expression on a JSON body and returns the one JSON
// value it yields, encoded. Decoding, evaluation and encoding run under
// one bound in time (the timeout) and in memory (the budget); every
// error is an *Error and matches ErrEvent, except ErrInterrupted when ctx
// itself ended first.
func (p *Program) Apply(ctx context.Context, body []byte) ([]byte, error) {
	ev, cancel := newEvaluation(ctx, p.timeout, p.budget)
	defer cancel()
	out, err := p.apply(ev, body)
	if err != nil && ev.err == nil && ctx.Err() != nil {
		return nil, fmt.Errorf("%w (%w)", ErrInterrupted, ctx.Err())
	}
	return out, err
}

// apply is Apply under the evaluation ev.
func (p *Program) apply(ev *evaluation, body []byte) (out []byte, err error) {
	defer func() {
		// gojq panics on a value of a type it does not know: none reaches
		// it, but an event must not take the function down if one did.
		if r := recover(); r != nil {
			out, err = nil, &Error{Kind: "the expression failed inside the interpreter", Detail: fmt.Sprint(r)}
		}
	}()
	if len(body) > MaxInput {
		return nil, &Error{Kind: fmt.Sprintf("the body is %d bytes; a transform reads at most %d", len(body), MaxInput)}
	}
	in, err := decode(body, ev)
	if err != nil {
		return nil, &Error{Kind: err.Error()}
	}
	iter := p.code.RunWithContext(ev, in, ev)
	v, err := p.one(ev, iter)
	if err != nil {
		return nil, err
	}
	limit := p.maxOutput
	if left := ev.left(); left < int64(limit) {
		limit = int(left)
	}
	out, err = encodeBounded(v, limit, ev)
	switch {
	case errors.Is(err, errFull) && limit == p.maxOutput:
		return nil, &Error{Kind: fmt.Sprintf("the output is more than %d bytes; a transformed body may have at most %d", p.maxOutput, p.maxOutput)}
	case errors.Is(err, errFull) || errors.As(err, new(*boundError)):
		return nil, &Error{Kind: fmt.Sprintf("the output passes the memory bound (%s per event)", size(p.budget))}
	case err != nil:
		return nil, &Error{Kind: "the output does not encode as JSON: " + err.Error()}
	}
	return out, nil
}

// one takes the single value iter yields.
func (p *Program) one(ev *evaluation, iter gojq.Iter) (any, error) {
	v, ok := iter.Next()
	if !ok {
		return nil, &Error{Kind: "the expression yields no value; it must yield exactly one (the body to send)"}
	}
	if err := p.valueError(ev, v); err != nil {
		return nil, err
	}
	if w, more := iter.Next(); more {
		if err := p.valueError(ev, w); err != nil && ev.Err() != nil {
			return nil, err
		}
		return nil, &Error{Kind: "the expression yields more than one value; it must yield exactly one (collect them with [...])"}
	}
	return v, nil
}

// valueError is the error an iterator yielded in place of a value: its
// kind, without the value it failed on (errors.go).
func (p *Program) valueError(ev *evaluation, v any) error {
	err, ok := v.(error)
	if !ok {
		return nil
	}
	if bound := ev.Err(); bound != nil {
		return &Error{Kind: bound.Error()}
	}
	var be *boundError
	if errors.As(err, &be) {
		return &Error{Kind: be.Error()}
	}
	return &Error{Kind: p.kind(err), Detail: short(err.Error())}
}

// maxErrorText bounds the detail kept for a DEBUG line.
const maxErrorText = 160

func short(s string) string {
	if len(s) <= maxErrorText {
		return s
	}
	return strings.ToValidUTF8(s[:maxErrorText], "") + "…"
}
