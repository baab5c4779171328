// Package reconcilejob is the scheduled reconcile function's contract: the
// environment the CDK stack renders for one source's function and the
// function reads at start (Env), the input its schedule sends (Input),
// and the handler that runs one reconciliation (shared/reconcile) per
// invocation. functions/reconcile only wires it.
package reconcilejob

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/loglevel"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/reconcile"
)

// The reconcile function's environment: what Env renders and ReadEnv
// reads. A Stripe source's function publishes what it brings in through
// ingest's publish path, so it also gets ingest's variables (ingest.Env:
// the topic, the ordered lanes' topic and routes, the payload buckets),
// rendered and read by ingest's own contract.
const (
	// EnvSource is the JSON of the one source the function reconciles,
	// its reconcile block with it and without its limits.
	EnvSource = "HOOKFAN_RECONCILE_SOURCE"
	// EnvDestinations is the JSON of the destinations the source's events
	// may reach (Destinations): their names and filters, which say whose
	// delivery records witness an event.
	EnvDestinations = "HOOKFAN_RECONCILE_DESTINATIONS"
	// EnvTableName is the delivery-record table: the records a run reads
	// and the source's watermark.
	EnvTableName = "HOOKFAN_TABLE_NAME"
)

// Env is the reconcile function's environment contract, written once:
// the CDK stack renders it for each reconciled source's function
// (Render), the function reads it at start (ReadEnv). Secrets never
// travel here, only their names.
type Env struct {
	// Source is the source reconciled, with its reconcile block.
	Source config.Source
	// Destinations are those its events may reach: names and filters.
	Destinations []Route
	// TableName is the delivery-record table.
	TableName string
	// Ingest is ingest's contract for the publish path, for a source
	// whose missing events are published (Stripe); nil for one whose
	// provider redelivers them (GitHub).
	Ingest *ingest.Env
	// MetricsSink is the config's metrics.sink; a function accepts only
	// config.SinkEMF (metrics.CheckFunctionSink), the one a deployed stack
	// renders.
	MetricsSink string
	// LogLevel is config.LogLevelWarn with functions.logLevel WARN, ""
	// (not rendered) for the default INFO.
	LogLevel string
}

// Route is a destination as reconciliation sees it: its name (whose
// records it reads) and its filter (which events it takes).
type Route struct {
	Name   string        `json:"name"`
	Filter config.Filter `json:"filter,omitzero"`
}

// Resources are where the function finds what the stack made for it.
type Resources struct {
	// Table is the delivery-record table.
	Table string
	// TopicARN, OrderedTopicARN, PayloadBucket and ArchiveBucket are
	// ingest's (ingest.Resources); used only for a source that publishes.
	TopicARN, OrderedTopicARN, PayloadBucket, ArchiveBucket string
}

// Publishes says whether the source's missing events are published
// through ingest's path (Stripe), rather than redelivered by the
// provider (GitHub).
func Publishes(s config.Source) bool { return s.Verify.Kind == provider.Stripe }

// Destinations are the destinations of cfg whose filter may take
// source's events, as routes.
func Destinations(cfg *config.Config, source string) []Route {
	var out []Route
	for _, d := range cfg.Destinations {
		if len(d.Filter.Sources) > 0 && !slices.Contains(d.Filter.Sources, source) {
			continue
		}
		out = append(out, Route{Name: d.Name, Filter: d.Filter})
	}
	return out
}

// WatermarkKey is the key of source's watermark in the delivery-record
// table, which the function reads and writes.
func WatermarkKey(source string) string { return reconcile.WatermarkKey(source) }

// FunctionEnv is the contract of src's function under cfg, given where
// its resources are.
func FunctionEnv(cfg *config.Config, src config.Source, r Resources) Env {
	src.Limits = config.SourceLimits{}
	e := Env{Source: src, Destinations: Destinations(cfg, src.Name), TableName: r.Table, MetricsSink: cfg.Metrics.SinkName()}
	if cfg.Functions.AppLog() != config.LogLevelInfo {
		e.LogLevel = cfg.Functions.AppLog()
	}
	if Publishes(src) {
		one := *cfg
		one.Sources = []config.Source{src}
		ie := ingest.FunctionEnv(&one, ingest.Resources{TopicARN: r.TopicARN, OrderedTopicARN: r.OrderedTopicARN, PayloadBucket: r.PayloadBucket, ArchiveBucket: r.ArchiveBucket})
		// Replay protection guards requests, and a reconciled event is
		// none; a Stripe source has none anyway.
		ie.ReplayTable = ""
		e.Ingest = &ie
	}
	return e
}

// Config is the configuration the reconciler is assembled from: the one
// source and the destinations its events may reach.
func (e Env) Config() *config.Config {
	c := &config.Config{Sources: []config.Source{e.Source}}
	for _, d := range e.Destinations {
		c.Destinations = append(c.Destinations, config.Destination{Name: d.Name, Filter: d.Filter})
	}
	return c
}

// Render returns the variables of the function's environment.
func (e Env) Render() map[string]string {
	env := map[string]string{}
	if e.Ingest != nil {
		env = e.Ingest.Render()
		// Ingest's GC target trades memory for its hot path; a run holds
		// a provider's page (up to reconcile's answer cap) in a 256 MB
		// function, so it keeps Go's default.
		delete(env, ingest.EnvGOGC)
	}
	env[EnvSource] = mustJSON(e.Source)
	env[EnvDestinations] = mustJSON(e.Destinations)
	env[EnvTableName] = e.TableName
	env[config.EnvMetricsSink] = e.MetricsSink
	if e.LogLevel != "" {
		env[config.EnvLogLevel] = e.LogLevel
	}
	return env
}

// ReadEnv reads the contract through lookup (os.Getenv in the function)
// and reports every problem at once, each naming the variable, its value
// and the fix.
func ReadEnv(lookup func(string) string) (Env, error) {
	const byStack = "the stack sets it for the reconcile function"
	var errs []error
	e := Env{TableName: lookup(EnvTableName), MetricsSink: lookup(config.EnvMetricsSink), LogLevel: lookup(config.EnvLogLevel)}
	if err := loglevel.Check(e.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if err := metrics.CheckFunctionSink(e.MetricsSink); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (metrics.sink)", config.EnvMetricsSink, err))
	}
	if e.TableName == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the delivery-record table) is not set; %s", EnvTableName, byStack))
	}
	switch v := lookup(EnvSource); v {
	case "":
		errs = append(errs, fmt.Errorf("environment variable %s (the reconciled source, as JSON) is not set; %s", EnvSource, byStack))
	default:
		s, err := config.DecodeSources(EnvSource, "["+v+"]")
		switch {
		case err != nil:
			errs = append(errs, err)
		case s[0].Reconcile == nil:
			errs = append(errs, fmt.Errorf("%s: source %q has no reconcile block; %s from a source that has one", EnvSource, s[0].Name, byStack))
		default:
			e.Source = s[0]
		}
	}
	if v := lookup(EnvDestinations); v == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the destinations the source's events may reach, as JSON) is not set; %s", EnvDestinations, byStack))
	} else if d, err := decodeRoutes(v); err != nil {
		errs = append(errs, err)
	} else {
		e.Destinations = d
	}
	if e.Source.Reconcile != nil && Publishes(e.Source) {
		ie, err := ingest.ReadEnv(lookup)
		if err != nil {
			errs = append(errs, fmt.Errorf("source %q publishes what it brings in through ingest's path, whose environment is incomplete: %w", e.Source.Name, err))
		} else {
			e.Ingest = &ie
		}
	}
	return e, errors.Join(errs...)
}

// decodeRoutes reads EnvDestinations: a JSON array of routes, each named.
func decodeRoutes(v string) ([]Route, error) {
	var routes []Route
	dec := json.NewDecoder(strings.NewReader(v))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&routes); err != nil {
		return nil, fmt.Errorf("%s = %s: not a JSON array of {\"name\", \"filter\"}: %w; the stack renders it", EnvDestinations, quoteStart(v), err)
	}
	var errs []error
	seen := map[string]bool{}
	for i, r := range routes {
		switch {
		case r.Name == "":
			errs = append(errs, fmt.Errorf("%s[%d]: no name; each destination is named", EnvDestinations, i))
		case seen[r.Name]:
			errs = append(errs, fmt.Errorf("%s[%d]: destination %q twice; name each once", EnvDestinations, i, r.Name))
		}
		seen[r.Name] = true
	}
	return routes, errors.Join(errs...)
}

// quoteStart quotes the start of a value for an error.
func quoteStart(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q… (%d bytes)", s[:64], len(s))
	}
	return fmt.Sprintf("%q", s)
}

// mustJSON encodes v without escaping HTML's characters, so that a body
// filter's "<" and ">" read back as written (and take a byte each of
// Lambda's 4 KB).
func mustJSON(v any) string {
	var b strings.Builder
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // config types hold only JSON-encodable values
	}
	return strings.TrimSuffix(b.String(), "\n")
}
