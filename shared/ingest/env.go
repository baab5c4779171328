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

// EnvGOGC is the Go runtime's GC target, read at process start: the
// contract sets it to GCPercent.
const EnvGOGC = "GOGC"

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
	// MetricsSink is config.SinkEMF or config.SinkCloudWatch.
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

// FunctionEnv is the ingest function's contract under cfg, given where its
// resources are (CDK tokens in the stack, the emulator's names locally).
// payloadBucket is "" without large payloads, archiveBucket "" without the
// archive; replayTable is used only when a source has replay protection.
func FunctionEnv(cfg *config.Config, topicARN, payloadBucket, archiveBucket, replayTable string) Env {
	e := Env{Sources: config.IngestSources(cfg.Sources), TopicARN: topicARN, APIType: cfg.API.Kind(),
		MetricsSink: cfg.Metrics.SinkName(), PayloadBucket: payloadBucket}
	if payloadBucket != "" {
		e.PayloadArchiveBucket = archiveBucket
	}
	if config.ReplayProtected(cfg.Sources) {
		e.ReplayTable = replayTable
	}
	if cfg.Functions.AppLog() != config.LogLevelInfo {
		e.LogLevel = cfg.Functions.AppLog()
	}
	return e
}

// WithOrdering is e with the ordered lanes' FIFO topic, when cfg has an
// ordered destination (else e unchanged).
func (e Env) WithOrdering(cfg *config.Config, orderedTopicARN string) Env {
	if cfg.AnyOrdered() {
		e.OrderedTopicARN = orderedTopicARN
		e.OrderingRoutes = cfg.OrderingRoutes()
	}
	return e
}

// Render returns the variables of the function's environment.
func (e Env) Render() map[string]string {
	env := map[string]string{
		config.EnvSources:     config.EncodeSources(e.Sources),
		config.EnvTopicARN:    e.TopicARN,
		config.EnvMetricsSink: e.MetricsSink,
		config.EnvAPIType:     e.APIType,
		EnvGOGC:               strconv.Itoa(GCPercent),
	}
	if e.PayloadBucket != "" {
		env[config.EnvPayloadBucket] = e.PayloadBucket
	}
	if e.PayloadArchiveBucket != "" {
		env[config.EnvPayloadArchiveBucket] = e.PayloadArchiveBucket
	}
	if e.ReplayTable != "" {
		env[config.EnvReplayTable] = e.ReplayTable
	}
	if e.OrderedTopicARN != "" {
		env[config.EnvOrderedTopicARN] = e.OrderedTopicARN
		env[config.EnvOrderingRoutes] = config.EncodeOrderingRoutes(e.OrderingRoutes)
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
		TopicARN: lookup(config.EnvTopicARN), APIType: lookup(config.EnvAPIType), MetricsSink: lookup(config.EnvMetricsSink),
		PayloadBucket: lookup(config.EnvPayloadBucket), PayloadArchiveBucket: lookup(config.EnvPayloadArchiveBucket),
		ReplayTable: lookup(config.EnvReplayTable), OrderedTopicARN: lookup(config.EnvOrderedTopicARN), LogLevel: lookup(config.EnvLogLevel),
	}
	if err := loglevel.Check(e.LogLevel); err != nil {
		errs = append(errs, err)
	}
	const byStack = "the stack sets it for the ingest function"
	if v := lookup(config.EnvSources); v == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the sources, as JSON) is not set; %s", config.EnvSources, byStack))
	} else {
		s, err := config.DecodeSources(v)
		if err != nil {
			errs = append(errs, err)
		}
		e.Sources = s
	}
	if e.TopicARN == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (the fan-out topic) is not set; %s", config.EnvTopicARN, byStack))
	}
	switch e.APIType {
	case "":
		e.APIType = config.APITypeREST
	case config.APITypeREST, config.APITypeHTTP:
	default:
		errs = append(errs, fmt.Errorf("%s = %q: unknown API type; want %q or %q (api.type)", config.EnvAPIType, e.APIType, config.APITypeREST, config.APITypeHTTP))
	}
	if err := metrics.CheckSink(e.MetricsSink); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (metrics.sink)", config.EnvMetricsSink, err))
	}
	if config.ReplayProtected(e.Sources) && e.ReplayTable == "" {
		errs = append(errs, fmt.Errorf("environment variable %s (replay protection's table) is not set, but a source has replay protection; %s when one does", config.EnvReplayTable, byStack))
	}
	routes := lookup(config.EnvOrderingRoutes)
	switch {
	case e.OrderedTopicARN != "" && routes == "":
		errs = append(errs, fmt.Errorf("environment variable %s (the ordering key specs) is not set, but %s is; %s for ordered destinations", config.EnvOrderingRoutes, config.EnvOrderedTopicARN, byStack))
	case e.OrderedTopicARN == "" && routes != "":
		errs = append(errs, fmt.Errorf("environment variable %s (the FIFO topic) is not set, but %s is; %s for ordered destinations", config.EnvOrderedTopicARN, config.EnvOrderingRoutes, byStack))
	case routes != "":
		r, err := config.DecodeOrderingRoutes(routes)
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
