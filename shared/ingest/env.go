package ingest

import (
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/loglevel"
	"github.com/hookfan/hookfan/shared/metrics"
)

// The ingest function's environment: what Env renders and ReadEnv reads.
// EnvMetricsSink, EnvLogLevel and the two payload buckets' names are
// shared with the deliver function's contract (config).
const (
	EnvSources     = "HOOKFAN_SOURCES"      // JSON array of the sources, without their limits
	EnvTopicARN    = "HOOKFAN_TOPIC_ARN"    // where accepted events are published
	EnvAPIType     = "HOOKFAN_API_TYPE"     // "rest" (proxy event v1, default) or "http" (payload v2)
	EnvReplayTable = "HOOKFAN_REPLAY_TABLE" // replay protection's table (the delivery-record table, keys "replay:…"); unset when no source has it
	// EnvOrderedTopicARN names the FIFO topic of the ordered lanes; unset
	// without an ordered destination.
	EnvOrderedTopicARN = "HOOKFAN_ORDERED_TOPIC_ARN"
	// EnvOrderingRoutes holds the ordering routes as JSON, with
	// EnvOrderedTopicARN.
	EnvOrderingRoutes = "HOOKFAN_ORDERING_ROUTES"
	// EnvGOGC is the Go runtime's GC target, read at process start: the
	// contract sets it to GCPercent.
	EnvGOGC = "GOGC"
)

// Env is the ingest function's environment contract, written once: the
// CDK stack renders it for the function (Render), the function reads it
// at start (ReadEnv), the cold-start harness and the RIE test run the
// built binary with what Render gives. Secrets never travel here, only
// their names.
type Env struct {
	// Sources are the configured sources, as ingest receives them
	// (config.IngestSources: without their limits).
	Sources []config.Source
	// TopicARN is the fan-out topic accepted events are published to.
	TopicARN string
	// APIType is the event shape the function is invoked with:
	// config.APITypeREST (proxy event v1) or config.APITypeHTTP (payload
	// format 2.0).
	APIType string
	// MetricsSink is the config's metrics.sink; a function accepts only
	// config.SinkEMF (metrics.CheckFunctionSink), the one a deployed stack
	// renders.
	MetricsSink string
	// PayloadBucket holds the bodies larger than one SNS message; "" when
	// no source takes such bodies.
	PayloadBucket string
	// PayloadArchiveBucket is where ingest also writes each large body, so
	// the deliverers can read it once the payload object is gone; "" without
	// the archive (or large bodies).
	PayloadArchiveBucket string
	// ReplayTable keeps replay protection's records; "" when no source
	// has replay protection.
	ReplayTable string
	// OrderedTopicARN is the FIFO topic of the ordered lanes, where each
	// accepted event is published too, once per route of OrderingRoutes
	// that takes its source; "" when no destination is ordered.
	OrderedTopicARN string
	// OrderingRoutes are the ordering key specs with their sources
	// (config.OrderingRoutes), rendered with OrderedTopicARN.
	OrderingRoutes []config.OrderingRoute
	// LogLevel is config.LogLevelWarn with functions.logLevel WARN, ""
	// (not rendered) for the default INFO.
	LogLevel string
}

// Resources are where the ingest function finds what the stack made for
// it: names and ARNs (CDK tokens in the stack, the emulator's names
// locally).
type Resources struct {
	// TopicARN is the fan-out topic.
	TopicARN string
	// OrderedTopicARN is the ordered lanes' FIFO topic; used only when a
	// destination is ordered.
	OrderedTopicARN string
	// PayloadBucket holds the bodies larger than one SNS message; "" when
	// no source takes such bodies.
	PayloadBucket string
	// ArchiveBucket is the event archive's bucket; "" without the
	// archive. Rendered only with PayloadBucket.
	ArchiveBucket string
	// ReplayTable keeps replay protection's records; used only when a
	// source has replay protection.
	ReplayTable string
}

// FunctionEnv is the ingest function's contract under cfg, given where its
// resources are: the whole environment, ordering included.
func FunctionEnv(cfg *config.Config, r Resources) Env {
	e := Env{Sources: config.IngestSources(cfg.Sources), TopicARN: r.TopicARN, APIType: cfg.API.Kind(),
		MetricsSink: cfg.Metrics.SinkName(), PayloadBucket: r.PayloadBucket}
	if r.PayloadBucket != "" {
		e.PayloadArchiveBucket = r.ArchiveBucket
	}
	if config.ReplayProtected(cfg.Sources) {
		e.ReplayTable = r.ReplayTable
	}
	if cfg.AnyOrdered() {
		e.OrderedTopicARN = r.OrderedTopicARN
		e.OrderingRoutes = cfg.OrderingRoutes()
	}
	if cfg.Functions.AppLog() != config.LogLevelInfo {
		e.LogLevel = cfg.Functions.AppLog()
	}
	return e
}

// Render returns the variables of the function's environment.
func (e Env) Render() map[string]string {
	env := map[string]string{
		EnvSources:            config.EncodeSources(e.Sources),
		EnvTopicARN:           e.TopicARN,
		config.EnvMetricsSink: e.MetricsSink,
		EnvAPIType:            e.APIType,
		EnvGOGC:               strconv.Itoa(GCPercent),
	}
	if e.PayloadBucket != "" {
		env[config.EnvPayloadBucket] = e.PayloadBucket
	}
	if e.PayloadArchiveBucket != "" {
		env[config.EnvPayloadArchiveBucket] = e.PayloadArchiveBucket
	}
	if e.ReplayTable != "" {
		env[EnvReplayTable] = e.ReplayTable
	}
	if e.OrderedTopicARN != "" {
		env[EnvOrderedTopicARN] = e.OrderedTopicARN
		env[EnvOrderingRoutes] = config.EncodeOrderingRoutes(e.OrderingRoutes)
	}
	if e.LogLevel != "" {
		env[config.EnvLogLevel] = e.LogLevel
	}
	return env
}

// ReadEnv reads the contract through lookup (os.Getenv in the function)
// and reports every problem at once, each naming the variable, its value
// and the fix.
func ReadEnv(lookup func(string) string) (Env, error) {
	var errs []error
	e := Env{
		TopicARN: lookup(EnvTopicARN), APIType: lookup(EnvAPIType), MetricsSink: lookup(config.EnvMetricsSink),
		PayloadBucket: lookup(config.EnvPayloadBucket), PayloadArchiveBucket: lookup(config.EnvPayloadArchiveBucket),
		ReplayTable: lookup(EnvReplayTable), OrderedTopicARN: lookup(EnvOrderedTopicARN), LogLevel: lookup(config.EnvLogLevel),
	}
	if err := loglevel.Check(e.LogLevel); err != nil {
		errs = append(errs, err)
	}
	const byStack = "the stack sets it for the ingest function"
	if v := lookup(EnvSources); v == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the sources, as JSON) is not set; %s", EnvSources, byStack))
	} else {
		s, err := config.DecodeSources(EnvSources, v)
		if err != nil {
			errs = append(errs, err)
		}
		e.Sources = s
	}
	if e.TopicARN == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the fan-out topic) is not set; %s", EnvTopicARN, byStack))
	}
	switch e.APIType {
	case "":
		e.APIType = config.APITypeREST
	case config.APITypeREST, config.APITypeHTTP:
	default:
		errs = append(errs, fmt.Errorf("%s = %q: unknown API type; want %q or %q (api.type)", EnvAPIType, e.APIType, config.APITypeREST, config.APITypeHTTP))
	}
	if err := metrics.CheckFunctionSink(e.MetricsSink); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (metrics.sink)", config.EnvMetricsSink, err))
	}
	if config.ReplayProtected(e.Sources) && e.ReplayTable == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (replay protection's table) is not set, but a source has replay protection; %s when one does", EnvReplayTable, byStack))
	}
	routes := lookup(EnvOrderingRoutes)
	switch {
	case e.OrderedTopicARN != "" && routes == "":
		errs = append(errs, fmt.Errorf("environment variable %s (the ordering key specs) is not set, but %s is; %s for ordered destinations", EnvOrderingRoutes, EnvOrderedTopicARN, byStack))
	case e.OrderedTopicARN == "" && routes != "":
		errs = append(errs, fmt.Errorf("environment variable %s (the FIFO topic) is not set, but %s is; %s for ordered destinations", EnvOrderedTopicARN, EnvOrderingRoutes, byStack))
	case routes != "":
		r, err := config.DecodeOrderingRoutes(EnvOrderingRoutes, routes)
		if err != nil {
			errs = append(errs, err)
		}
		e.OrderingRoutes = r
	}
	return e, errors.Join(errs...)
}

// Clients are what the ingest function calls, built once per process: on
// the AWS SDK by its main (functions/ingest), on the emulator by the local
// stack (infra/local/devstack).
type Clients struct {
	Publisher Publisher
	Secrets   Secrets
	// Payloads stores the bodies in Env.PayloadBucket; required when it is set.
	Payloads Payloads
	// Replay keeps replay protection's records in Env.ReplayTable;
	// required when it is set.
	Replay ReplayGuard
	// Metrics is the sink Env.MetricsSink names.
	Metrics metrics.Sink
	Logger  *slog.Logger
}

// Assemble builds the ingest function from its contract and its clients:
// the one wiring the deployed function and the local stack share.
func Assemble(env Env, c Clients) (*Handler, error) {
	var errs []error
	if env.PayloadBucket != "" && c.Payloads == nil {
		errs = append(errs, fmt.Errorf("ingest: a payload bucket is set (%s) but no payload store was given", env.PayloadBucket))
	}
	if env.ReplayTable != "" && c.Replay == nil {
		errs = append(errs, fmt.Errorf("ingest: a replay table is set (%s) but no replay store was given", env.ReplayTable))
	}
	if c.Metrics == nil {
		errs = append(errs, errors.New("ingest: no metrics sink was given"))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return New(Options{Sources: env.Sources, TopicARN: env.TopicARN, Publisher: c.Publisher, Secrets: c.Secrets,
		Replay: c.Replay, Payloads: c.Payloads, Metrics: metrics.NewRecorder(c.Metrics), Logger: loglevel.AtLeast(c.Logger, env.LogLevel),
		OrderedTopicARN: env.OrderedTopicARN, OrderingRoutes: env.OrderingRoutes})
}
