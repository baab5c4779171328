package transform

import "context"

// Charged applies p to body and reports what the event's evaluation
// charged: bytes against the budget, and steps.
func Charged(p *Program, body []byte) (used, steps int64, err error) {
	ev, cancel := newEvaluation(context.Background(), p.timeout, p.budget)
	defer cancel()
	_, err = p.apply(ev, body)
	return ev.used, ev.steps, err
}

// SetStepHook runs f at each step of every evaluation (nil: none).
func SetStepHook(f func()) { stepHook = f }
