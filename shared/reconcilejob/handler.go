package reconcilejob

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/reconcile"
)

// Input is what the function is invoked with: the source's schedule sends
// {"source": "<name>"}, ops reconcile a reconcile.Invocation, and an
// operator invoking it by hand may give since as a duration.
type Input struct {
	// Source names the source; it must be the function's own.
	Source string `json:"source"`
	// Since starts the window instead of the watermark less the overlap:
	// an RFC 3339 time (reconcile.Invocation's) or a Go duration back from
	// now ("24h").
	Since string `json:"since,omitempty"`
	// DryRun lists and compares, brings nothing in, saves no watermark.
	DryRun bool `json:"dryRun,omitempty"`
}

// Runner runs one reconciliation: *reconcile.Reconciler.
type Runner interface {
	Run(ctx context.Context, source string, opts reconcile.Options) (reconcile.Report, error)
}

// Reserve is the time a run leaves itself before the invocation's
// deadline: it stops with a recorded reason (the API did not answer in
// time), writes its metrics and log line, and returns, rather than being
// cut off by Lambda with nothing said.
const Reserve = 3 * time.Second

// Handler runs the reconciliation of its function's one source.
type Handler struct {
	source string
	run    Runner
	log    *slog.Logger
	now    func() time.Time
}

// NewHandler returns the handler of source's function over run.
func NewHandler(source string, run Runner, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{source: source, run: run, log: log, now: time.Now}
}

// ErrInput is the error of an invocation whose input is refused.
var ErrInput = errors.New("reconcile input")

// Handle runs one reconciliation and answers its report (what ops
// reconcile prints). A run that stopped (the provider refused, timed out,
// paged forever) is not an error of the invocation: its report says why,
// and its ReconcileStopped metric and log line carry it to the alarm; the
// error is for an input refused or a run that could not start.
func (h *Handler) Handle(ctx context.Context, in Input) (reconcile.Report, error) {
	opts, err := h.options(in)
	if err != nil {
		h.log.Error("reconcile", slog.String("outcome", "refused"), slog.String("source", in.Source), slog.String("error", err.Error()))
		return reconcile.Report{Source: in.Source}, err
	}
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline.Add(-Reserve))
		defer cancel()
	}
	rep, err := h.run.Run(ctx, h.source, opts)
	if err != nil && !errors.Is(err, reconcile.ErrStopped) {
		return rep, err
	}
	return rep, nil
}

// options checks the input against the function's source.
func (h *Handler) options(in Input) (reconcile.Options, error) {
	var opts reconcile.Options
	if in.Source != h.source {
		return opts, fmt.Errorf("%w: source %q: this function reconciles %q; invoke that source's own function", ErrInput, in.Source, h.source)
	}
	opts.DryRun = in.DryRun
	since := strings.TrimSpace(in.Since)
	if since == "" {
		return opts, nil
	}
	if d, err := time.ParseDuration(since); err == nil {
		if d <= 0 {
			return opts, fmt.Errorf("%w: since %q is not a positive duration; use e.g. \"24h\" or an RFC 3339 time", ErrInput, in.Since)
		}
		opts.Since = h.now().Add(-d)
		return opts, nil
	}
	t, err := time.Parse(time.RFC3339Nano, since)
	if err != nil {
		return opts, fmt.Errorf("%w: since %q is neither a duration nor an RFC 3339 time; use e.g. \"24h\" or \"2026-12-01T00:00:00Z\"", ErrInput, in.Since)
	}
	if !t.Before(h.now()) {
		return opts, fmt.Errorf("%w: since %q is not in the past", ErrInput, in.Since)
	}
	opts.Since = t
	return opts, nil
}
