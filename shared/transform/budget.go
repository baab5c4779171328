package transform

import (
	"context"
	"fmt"
	"time"
)

// The memory bound. One event's transform — the body it reads, the value
// decoded from it, what the expression builds and the encoded output — may
// use Budget(memoryMB, concurrency) bytes: half of the function's memory,
// shared by the events it works on at once. Every part is charged to one
// count per event before it is allocated, and the transform stops the
// moment the count passes the budget:
//
//   - the body, its length; the decoded value, an estimate of its Go size
//     per value (decode.go), charged token by token;
//   - each step of the evaluation (gojq checks its context once per
//     instruction: evaluation.Done), StepCost bytes, which covers what one
//     instruction can keep alive (a stack slot, an array element, an
//     object of a few keys);
//   - each string, array or object an operator or a builtin builds in one
//     call (+, *, /, tojson, join, …: bounded.go), its size, before it is
//     built;
//   - the output, byte by byte as it is encoded (encode.go).
//
// The count only grows: what became garbage is not given back, so the
// bound holds whatever the garbage collector does, and the same body and
// expression fail the same way on every attempt (the time bound aside).
const (
	// DefaultMemoryMB and DefaultConcurrency size the budget of a Program
	// compiled without WithBudget: the deliver function's default memory
	// and a whole batch at once.
	DefaultMemoryMB    = 128
	DefaultConcurrency = 10
	// StepCost is what one instruction of the evaluation is charged. What
	// an instruction keeps alive is about 100 bytes (a recursion's frame,
	// an array element); its growth leaves as much garbage again before
	// the collector runs: at 128, ten recursions at once (def f: [f]; f)
	// peaked at 51-67 MiB of heap beside a 16.5 MiB baseline, at the
	// limit of 64 MiB; at 256 they stay well under it
	// (BenchmarkTransformBounds).
	StepCost = 256
	// walkCost is what a builtin that walks a value (compares, sorts,
	// flattens) is charged per value it visits.
	walkCost = 128
	// MinBudget is the least budget a Program takes: below it not even a
	// small body and a chat message fit.
	MinBudget = 256 << 10
)

// Budget is the bytes one event's transform may use in a function of
// memoryMB that works on concurrency events at once: half the memory,
// shared equally (the other half is the runtime, the bodies' raw bytes
// in flight elsewhere, the HTTP client and the garbage collector's room).
func Budget(memoryMB, concurrency int) int64 {
	if memoryMB <= 0 {
		memoryMB = DefaultMemoryMB
	}
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	return max(int64(memoryMB)<<20/2/int64(concurrency), MinBudget)
}

// boundError is a bound crossed: the transform stopped before it used more.
type boundError struct{ msg string }

func (e *boundError) Error() string { return e.msg }

// closed is a channel that is always ready: Done's answer once a bound is
// crossed.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// evaluation is one event's transform: its deadline (the embedded
// context) and its memory count. gojq calls Done before each instruction
// and, when the channel is ready, stops with Err as the error; the
// bounded builtins (bounded.go) receive it as a hidden variable and charge
// what they build. It is used by one goroutine, the one calling Apply.
type evaluation struct {
	context.Context
	timeout     time.Duration
	used, limit int64
	steps       int64
	err         error
}

func newEvaluation(ctx context.Context, timeout time.Duration, limit int64) (*evaluation, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	return &evaluation{Context: ctx, timeout: timeout, limit: limit}, cancel
}

// stepHook, when set (by a test), runs at each step: a slow machine.
var stepHook func()

// Done is called by gojq before each instruction: each is charged
// StepCost.
func (e *evaluation) Done() <-chan struct{} {
	e.steps++
	if stepHook != nil {
		stepHook()
	}
	if e.err == nil {
		e.used += StepCost
		if e.used > e.limit {
			e.err = &boundError{fmt.Sprintf("the expression ran past the memory bound (%d steps; %s per event)", e.steps, size(e.limit))}
		}
	}
	if e.err != nil {
		return closed
	}
	return e.Context.Done()
}

// Err is the bound crossed first, or the context's error.
func (e *evaluation) Err() error {
	if e.err != nil {
		return e.err
	}
	if err := e.Context.Err(); err != nil {
		return &boundError{fmt.Sprintf("the transform ran longer than %s", e.timeout)}
	}
	return nil
}

// charge counts n bytes that what is about to allocate, or fails when they
// pass the budget (nothing is allocated then).
func (e *evaluation) charge(n int64, what string) error {
	if e.err != nil {
		return e.err
	}
	if n < 0 || e.used+n > e.limit || e.used+n < e.used {
		e.err = &boundError{fmt.Sprintf("%s needs %s, past the memory bound (%s per event)", what, sizeOf(n), size(e.limit))}
		return e.err
	}
	e.used += n
	return nil
}

// left is what remains of the budget.
func (e *evaluation) left() int64 { return max(e.limit-e.used, 0) }

// size writes a byte count for a person.
func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}

func sizeOf(n int64) string {
	if n < 0 {
		return "more than any count"
	}
	return size(n)
}
