package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/hookfan/hookfan/shared/bodyfilter"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
)

// source is one reconciled source, ready to run.
type source struct {
	name, kind string
	rc         config.Reconcile
	api        string
	lookback   time.Duration
	retention  time.Duration
	// publishes: missing events are published (Stripe); else redelivered
	// by the provider (GitHub).
	publishes bool
	params    provider.Params
	wants     []want
	lister    lister
}

// want is a destination that takes the source's events, with its filter.
type want struct {
	name   string
	filter config.Filter
	body   *bodyfilter.Filter // nil without a body filter
}

func newSource(cfg *config.Config, s config.Source) (*source, error) {
	rc := *s.Reconcile
	src := &source{
		name: s.Name, kind: s.Verify.Kind, rc: rc, api: rc.API(s.Verify.Kind),
		lookback: rc.Window(), retention: rc.Retention(s.Verify.Kind), params: s.Params(),
	}
	for _, d := range cfg.Destinations {
		if len(d.Filter.Sources) > 0 && !contains(d.Filter.Sources, s.Name) {
			continue
		}
		w := want{name: d.Name, filter: d.Filter}
		if len(d.Filter.Body) > 0 {
			bf, err := bodyfilter.Compile(d.Filter.Body)
			if err != nil {
				return nil, fmt.Errorf("reconcile: destination %q: body filter: %w", d.Name, err)
			}
			w.body = bf
		}
		src.wants = append(src.wants, w)
	}
	switch s.Verify.Kind {
	case provider.Stripe:
		src.publishes = true
		src.lister = &stripeLister{types: stripeTypes(src.wants, s.Name)}
	case provider.GitHub:
		src.lister = &githubLister{hook: *rc.Hook}
	default:
		return nil, fmt.Errorf("reconcile: source %q: kind %q has no API that lists what it sent", s.Name, s.Verify.Kind)
	}
	return src, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// found is one event the provider listed, read and checked.
type found struct {
	// ProviderID is the provider's id (Stripe's evt_…, GitHub's guid);
	// ID the Hookfan event id ingest gives it; Type its type.
	ProviderID, ID, Type string
	// At is when the provider created it (Stripe) or last attempted it
	// (GitHub).
	At time.Time
	// Body is the event's body when the listing carries it (Stripe).
	Body []byte
	// Delivered: the provider got a 2xx for it (GitHub); always false
	// where the listing does not say.
	Delivered bool
	// Attempt is the provider's id of a delivery attempt, to redeliver
	// (GitHub).
	Attempt int64
}

// lister lists a source's events over a window, a batch at a time.
type lister interface {
	// list calls visit with each batch of events in [since, until];
	// events of one batch are decided together (one records read). It
	// returns a *stop when the API's answers stop the run; a skip
	// recorded through the run is not an error.
	list(ctx context.Context, rn *run, since, until time.Time, visit func([]found) error) error
	// bringIn brings one missing event in: publishes it, or asks the
	// provider to redeliver it.
	bringIn(ctx context.Context, rn *run, f found) error
}

// stop is what stops a run: a reason code and its detail.
type stop struct {
	code, detail string
}

func (s *stop) Error() string { return s.code + ": " + s.detail }

func stopf(code, format string, args ...any) *stop {
	return &stop{code: code, detail: fmt.Sprintf(format, args...)}
}

// skip is an event that is left out with a reason; the run goes on.
type skip struct {
	code, detail string
}

func (s *skip) Error() string { return s.code + ": " + s.detail }

// run is one reconciliation in progress.
type run struct {
	r      *Reconciler
	src    *source
	opts   Options
	key    string // the API credential
	auth   string // what the API is called with (GitHub: the token, or an App's JWT)
	now    time.Time
	floor  time.Time // now less the lookback: older events are not brought in
	report Report
}

// maxReasons bounds a report's reasons; the rest are counted.
const maxReasons = 50

func (rn *run) reason(code, detail string) {
	if len(rn.report.Reasons) < maxReasons {
		rn.report.Reasons = append(rn.report.Reasons, code+": "+detail)
	} else if len(rn.report.Reasons) == maxReasons {
		rn.report.Reasons = append(rn.report.Reasons, "more: further reasons left out")
	}
}

func (rn *run) skipEvent(code, detail string) {
	rn.report.Skipped++
	rn.reason(code, detail)
	rn.r.log.Warn("reconcile skipped", slog.String("source", rn.src.name), slog.String("reason", code), slog.String("detail", detail))
}

// Run reconciles one source: lists the window, brings in what is missing
// (unless opts.DryRun) and saves the watermark. The error is nil when the
// run went through, even with events skipped; it matches ErrStopped when
// the run stopped (the report says why), and the watermark is then left
// where it was.
func (r *Reconciler) Run(ctx context.Context, name string, opts Options) (Report, error) {
	src, ok := r.sources[name]
	if !ok {
		return Report{Source: name}, fmt.Errorf("%w %q; reconciled sources: %v", ErrUnknownSource, name, r.Sources())
	}
	now := r.now()
	rn := &run{r: r, src: src, opts: opts, now: now, floor: now.Add(-src.lookback)}
	rn.report = Report{Source: name, Kind: src.kind, DryRun: opts.DryRun, Until: now.Add(-Settle)}
	err := rn.do(ctx)
	var st *stop
	if errors.As(err, &st) {
		rn.report.Stopped = st.code
		rn.reason(st.code, st.detail)
		err = fmt.Errorf("%w: %s: %s", ErrStopped, name, st)
	}
	r.publishMetrics(ctx, &rn.report)
	level := slog.LevelInfo
	if err != nil || rn.report.Missing > 0 {
		level = slog.LevelWarn
	}
	r.log.Log(ctx, level, "reconcile", reportAttrs(&rn.report)...)
	return rn.report, err
}

func (rn *run) do(ctx context.Context) error {
	src, rep := rn.src, &rn.report
	stored, err := rn.r.c.Watermarks.Load(ctx, src.name)
	if err != nil {
		return stopf(ReasonWatermark, "load: %v", err)
	}
	rep.Since = rn.opts.Since
	switch {
	case !rep.Since.IsZero():
	case stored.IsZero():
		rep.Since = rn.floor
	default:
		rep.Since = stored.Add(-Overlap)
	}
	// The API lists nothing older than its retention.
	if oldest := rn.now.Add(-src.retention); rep.Since.Before(oldest) {
		rn.reason("window", fmt.Sprintf("since %s is past the provider's retention (%s); listing from %s", rep.Since.UTC().Format(time.RFC3339), src.retention, oldest.UTC().Format(time.RFC3339)))
		rep.Since = oldest
	}
	if !rep.Since.Before(rep.Until) {
		return nil // nothing has settled since the last run
	}
	key, err := rn.r.c.Secrets.Value(ctx, src.rc.SecretName)
	if err != nil {
		return stopf(ReasonSecret, "read %s: %v", src.rc.SecretName, err)
	}
	rn.key = key
	if err := src.lister.list(ctx, rn, rep.Since, rep.Until, func(batch []found) error { return rn.decide(ctx, batch) }); err != nil {
		return err
	}
	// The watermark moves only over a window that starts at or before it
	// (a run from the watermark, or an operator's from further back), so
	// nothing between the two is left unlooked at.
	if rn.opts.DryRun || (!stored.IsZero() && rep.Since.After(stored)) || !rep.Until.After(stored) {
		return nil
	}
	if err := rn.r.c.Watermarks.Save(ctx, src.name, rep.Until); err != nil {
		return stopf(ReasonWatermark, "save: %v", err)
	}
	rep.Watermark = rep.Until
	return nil
}

// decide sorts a batch into present, missing and unwanted, and brings in
// what is missing.
func (rn *run) decide(ctx context.Context, batch []found) error {
	rep := &rn.report
	rep.Listed += len(batch)
	keys := make([]string, 0, len(batch))
	verdicts := make([]verdict, len(batch))
	for i, f := range batch {
		v := &verdicts[i]
		v.keys, v.wanted, v.present = rn.src.candidates(f)
		keys = append(keys, v.keys...)
	}
	have, err := rn.present(ctx, keys)
	if err != nil {
		return err
	}
	for i, f := range batch {
		v := verdicts[i]
		if !v.wanted {
			rep.Unwanted++
			continue
		}
		for _, k := range v.keys {
			v.present = v.present || have[k]
		}
		if v.present {
			rep.Present++
			continue
		}
		rep.Missing++
		if f.At.Before(rn.floor) {
			rep.OutOfRetention++
			rn.r.log.Warn("reconcile past lookback", slog.String("source", rn.src.name), slog.String("id", f.ID),
				slog.String("provider_event_id", f.ProviderID), slog.String("type", f.Type), slog.Time("at", f.At))
			continue
		}
		if rn.opts.DryRun {
			continue
		}
		if err := rn.src.lister.bringIn(ctx, rn, f); err != nil {
			var sk *skip
			if errors.As(err, &sk) {
				rn.skipEvent(sk.code, sk.detail)
				continue
			}
			return err
		}
		rn.r.log.Info("reconcile brought in", slog.String("source", rn.src.name), slog.String("id", f.ID),
			slog.String("provider_event_id", f.ProviderID), slog.String("type", f.Type))
	}
	return nil
}

// verdict is what the records and the provider say of one event.
type verdict struct {
	keys    []string
	wanted  bool
	present bool
}

func (rn *run) present(ctx context.Context, keys []string) (map[string]bool, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	have, err := rn.r.c.Records.Present(ctx, keys)
	if err != nil {
		return nil, stopf(ReasonRecords, "%v", err)
	}
	return have, nil
}

// candidates are the record keys whose presence says Hookfan has the
// event: one per destination that would take it. wanted is false when no
// destination would (the event is unwanted: nothing is missing). A
// destination whose body filter cannot be checked (the listing carries no
// body: GitHub) is no witness, since its deliverer leaves no record of an
// event its body filter drops; when only such destinations would take the
// event, keys is nil and present says whether the provider got a 2xx,
// which ingest answers only once SNS accepted the event.
func (s *source) candidates(f found) (keys []string, wanted, present bool) {
	blind := false
	for _, w := range s.wants {
		if !w.filter.Matches(s.name, f.Type) {
			continue
		}
		if w.body != nil {
			if f.Body == nil {
				blind = true
				continue
			}
			if ok, err := w.body.Match(f.Body); err != nil || !ok {
				continue
			}
		}
		keys = append(keys, dedupe.Key(w.name, f.ID))
	}
	switch {
	case len(keys) > 0:
		return keys, true, false
	case blind:
		return nil, true, f.Delivered
	}
	return nil, false, false
}

// publishMetrics sends the run's counts, by Source: ReconcileMissing is
// what the alarm watches (events found missing, brought in or not),
// ReconcileStopped is 1 when the run stopped.
func (r *Reconciler) publishMetrics(ctx context.Context, rep *Report) {
	if r.c.Metrics == nil || rep.DryRun {
		return
	}
	dim := []metrics.Dimension{{Name: metrics.DimSource, Value: rep.Source}}
	stopped := 0.0
	if rep.Stopped != "" {
		stopped = 1
	}
	at := r.now()
	point := func(name string, v float64) metrics.Point {
		return metrics.Point{Name: name, Unit: metrics.Count, Value: v, Dimensions: dim, Time: at}
	}
	points := []metrics.Point{
		point(metrics.ReconcileListed, float64(rep.Listed)),
		point(metrics.ReconcileMissing, float64(rep.Missing)),
		point(metrics.ReconcileBroughtIn, float64(rep.BroughtIn+rep.Redelivered)),
		point(metrics.ReconcileOutOfRetention, float64(rep.OutOfRetention)),
		point(metrics.ReconcileSkipped, float64(rep.Skipped)),
		point(metrics.ReconcileStopped, stopped),
	}
	if err := r.c.Metrics.Publish(ctx, points); err != nil {
		r.log.Warn("reconcile metrics", slog.String("source", rep.Source), slog.String("error", err.Error()))
	}
}

func reportAttrs(rep *Report) []any {
	return []any{
		slog.String("source", rep.Source), slog.Time("since", rep.Since), slog.Time("until", rep.Until),
		slog.Int("listed", rep.Listed), slog.Int("present", rep.Present), slog.Int("missing", rep.Missing),
		slog.Int("brought_in", rep.BroughtIn), slog.Int("redelivered", rep.Redelivered),
		slog.Int("out_of_retention", rep.OutOfRetention), slog.Int("unwanted", rep.Unwanted), slog.Int("skipped", rep.Skipped),
		slog.String("stopped", rep.Stopped), slog.Any("reasons", rep.Reasons), slog.Bool("dry_run", rep.DryRun),
	}
}
