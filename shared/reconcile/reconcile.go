// Package reconcile finds the events a source's provider sent that never
// reached Hookfan, and brings them in.
//
// A run asks the provider's API what it sent over a window (Stripe's
// events, GitHub's hook deliveries), decides for each event whether
// Hookfan has a trace of it from what it already keeps (the delivery
// records of the destinations the event would match: no write per
// ingested event), and brings in what is missing: a Stripe event is
// published through ingest's own publish path under the id ingest would
// have given it, marked reconciled, so destinations deduplicate it like a
// provider's retry; a GitHub delivery is redelivered through GitHub's API
// and arrives signed through ingest like any other.
//
// The window runs from the source's watermark less an overlap (or an
// operator's --since) to now less a settling time; the watermark is saved
// only after everything found missing was brought in, so a run that died
// is covered by the next, and the delivery records deduplicate what it
// had brought in already. An event older than the source's lookback is
// reported, never brought in.
//
// The provider's answers are not trusted: reads are bounded, pages are
// capped, every field that names an event is checked before use, and a
// page or event that does not parse stops or skips the run with a
// recorded reason; nothing malformed is published.
package reconcile

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
)

// Timing of a run's window.
const (
	// Overlap is how far before the watermark a scheduled run starts
	// again: an event the provider lists late (its listing is eventually
	// consistent; GitHub records a delivery when its attempt ends) is
	// still seen.
	Overlap = 10 * time.Minute
	// Settle is how far before now a run's window ends: an event younger
	// than that may still be on its way through the provider's first
	// delivery, and is left to the next run.
	Settle = 2 * time.Minute
)

// Options shape one run.
type Options struct {
	// Since starts the window; zero means the source's watermark less
	// Overlap (the lookback on a source's first run).
	Since time.Time
	// DryRun lists and compares but brings nothing in and saves no
	// watermark.
	DryRun bool
}

// Report is what one run found and did. It is the reconcile function's
// answer too (JSON).
type Report struct {
	Source string `json:"source"`
	Kind   string `json:"kind"`
	// Since and Until are the window the run listed.
	Since time.Time `json:"since"`
	Until time.Time `json:"until"`
	// Listed events in the window (GitHub: distinct deliveries by guid);
	// Present ones Hookfan has a trace of; Missing ones it has none of
	// (brought in, redelivered, past the lookback, or failed to).
	Listed  int `json:"listed"`
	Present int `json:"present"`
	Missing int `json:"missing"`
	// BroughtIn were published (Stripe), Redelivered asked of the
	// provider (GitHub).
	BroughtIn   int `json:"broughtIn"`
	Redelivered int `json:"redelivered"`
	// OutOfRetention were missing but older than the lookback: reported,
	// never brought in.
	OutOfRetention int `json:"outOfRetention"`
	// Unwanted events match no destination: nothing would be delivered,
	// so nothing is missing.
	Unwanted int `json:"unwanted"`
	// Skipped events could not be read or brought in (Reasons says why).
	Skipped int `json:"skipped"`
	// Reasons say why events were skipped or the run stopped: a stable
	// short code, a colon, and the detail (ReasonTimeout…).
	Reasons []string `json:"reasons,omitempty"`
	// Stopped is the code of what stopped the run before its end; ""
	// when it went through.
	Stopped string `json:"stopped,omitempty"`
	// Watermark is the end of the window saved for the next run; zero
	// when none was saved (a dry run, or one that stopped).
	Watermark time.Time `json:"watermark,omitzero"`
	// DryRun is the run's option.
	DryRun bool `json:"dryRun,omitempty"`
}

// Invocation is the reconcile function's event: the scheduled rule's
// input names the source; an operator's (ops reconcile on a deployed
// stack) adds since and dryRun.
type Invocation struct {
	Source string    `json:"source"`
	Since  time.Time `json:"since,omitzero"`
	DryRun bool      `json:"dryRun,omitempty"`
}

// Handle is the reconcile function's handler: it runs the invocation and
// answers its report. A run that stopped is answered with its report
// (Stopped says why; ReconcileStopped counts it for the alarm), not an
// error, so that an operator's invocation sees what happened; the error
// is for an invocation that names no reconciled source.
func (r *Reconciler) Handle(ctx context.Context, inv Invocation) (Report, error) {
	rep, err := r.Run(ctx, inv.Source, Options{Since: inv.Since, DryRun: inv.DryRun})
	if errors.Is(err, ErrStopped) {
		return rep, nil
	}
	return rep, err
}

// Reason codes, stable: logs, metrics and ops print them.
const (
	ReasonTimeout      = "timeout"        // the API did not answer in time
	ReasonUnauthorized = "unauthorized"   // 401 or 403: the credential is wrong or lacks the permission
	ReasonRateLimited  = "rate_limited"   // 429 (or GitHub's 403 with its rate headers)
	ReasonHTTPStatus   = "http_status"    // another status that is not 2xx
	ReasonPageCap      = "page_cap"       // more pages than MaxPages: the API pages forever
	ReasonBadPage      = "bad_page"       // a page that does not parse
	ReasonTooLarge     = "body_too_large" // an answer over MaxBodyBytes
	ReasonBadEvent     = "bad_event"      // an event that does not parse, or names itself wrongly
	ReasonSecret       = "secret"         // the API credential could not be read
	ReasonRecords      = "records"        // the delivery records could not be read
	ReasonPublish      = "publish"        // publishing a missing event failed
	ReasonRedeliver    = "redeliver"      // the provider refused a redelivery
	ReasonWatermark    = "watermark"      // the watermark could not be read or saved
	ReasonTransport    = "transport"      // the API could not be reached
)

// ErrStopped is the error of a run that stopped before its end; the
// report's Stopped and Reasons say why.
var ErrStopped = errors.New("reconciliation stopped")

// Doer sends an HTTP request: *http.Client.
type Doer interface {
	Do(req *http.Request) (*http.Response, error)
}

// Secrets reads the API credential verbatim: *secrets.Cache.
type Secrets interface {
	Value(ctx context.Context, name string) (string, error)
}

// Records tells which delivery records exist, by key
// (dedupe.Key(destination, event id)): DynamoDBRecords, or a memory
// store's.
type Records interface {
	Present(ctx context.Context, keys []string) (map[string]bool, error)
}

// Publisher publishes a missing event through ingest's publish path:
// *ingest.Handler.
type Publisher interface {
	PublishReconciled(ctx context.Context, r ingest.Reconciled) (ingest.Published, error)
}

// Watermarks keep each source's watermark: DynamoDBWatermarks (in the
// delivery-record table, under WatermarkKey), or MemoryWatermarks.
type Watermarks interface {
	// Load returns the source's watermark, zero when none was saved.
	Load(ctx context.Context, source string) (time.Time, error)
	Save(ctx context.Context, source string, at time.Time) error
}

// Clients are what a run calls, built once per process.
type Clients struct {
	// HTTP calls the providers' APIs; its own timeout bounds each call
	// too (default: NewHTTPClient(DefaultHTTPTimeout); a client of your
	// own should not follow redirects either).
	HTTP       Doer
	Secrets    Secrets
	Records    Records
	Publisher  Publisher
	Watermarks Watermarks
	// Metrics receives the run's counts (Reconcile* by Source); nil sends
	// none (an operator's run).
	Metrics metrics.Sink
	// Logger gets one line per run and one per event brought in, skipped
	// or past the lookback (default: discard).
	Logger *slog.Logger
	// Now replaces time.Now, for tests.
	Now func() time.Time
}

// NewHTTPClient is the HTTP client a run should call the APIs with: it
// follows no redirect (an API that answers with one is answered as a
// failure, and the credential never travels to where it points), and
// bounds each call by timeout.
func NewHTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{
		Timeout:       timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// DefaultHTTPTimeout bounds one call to a provider's API when Clients.HTTP
// is not set.
const DefaultHTTPTimeout = 20 * time.Second

// Reconciler runs reconciliations of the configured sources.
type Reconciler struct {
	cfg     *config.Config
	sources map[string]*source
	c       Clients
	log     *slog.Logger
	now     func() time.Time
}

// Assemble builds a Reconciler over the sources of cfg that have a
// reconcile block; cfg is expected to be validated.
func Assemble(cfg *config.Config, c Clients) (*Reconciler, error) {
	var errs []error
	if c.Secrets == nil || c.Records == nil || c.Watermarks == nil {
		errs = append(errs, errors.New("reconcile: Secrets, Records and Watermarks are required"))
	}
	if c.HTTP == nil {
		c.HTTP = NewHTTPClient(DefaultHTTPTimeout)
	}
	r := &Reconciler{cfg: cfg, sources: map[string]*source{}, c: c, log: c.Logger, now: c.Now}
	if r.log == nil {
		r.log = slog.New(slog.DiscardHandler)
	}
	if r.now == nil {
		r.now = time.Now
	}
	for _, s := range cfg.Reconciled() {
		src, err := newSource(cfg, s)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if src.publishes && c.Publisher == nil {
			errs = append(errs, fmt.Errorf("reconcile: source %q brings events in through ingest's publish path, but no Publisher was given", s.Name))
		}
		r.sources[s.Name] = src
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return r, nil
}

// Sources names the sources the Reconciler runs.
func (r *Reconciler) Sources() []string {
	var out []string
	for _, s := range r.cfg.Reconciled() {
		out = append(out, s.Name)
	}
	return out
}

// ErrUnknownSource means Run was asked for a source without a reconcile
// block.
var ErrUnknownSource = errors.New("no such reconciled source")
