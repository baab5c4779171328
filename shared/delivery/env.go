package delivery

import (
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/loglevel"
	"github.com/hookfan/hookfan/shared/metrics"
)

// The deliver function's environment: what Env renders and ReadEnv
// reads. EnvMetricsSink, EnvLogLevel and the two payload buckets' names
// are shared with ingest's contract (config).
const (
	EnvDestination = "HOOKFAN_DESTINATION"  // JSON of the lane's one destination
	EnvTableName   = "HOOKFAN_TABLE_NAME"   // the delivery-record table
	EnvQueueURL    = "HOOKFAN_QUEUE_URL"    // the lane's queue, for ChangeMessageVisibility
	EnvQueueARN    = "HOOKFAN_QUEUE_ARN"    // when the lane pauses: its queue's ARN, to find its event source mapping
	EnvSecretID    = "HOOKFAN_SECRET_ID"    // the signing secret's name or ARN
	EnvRecordDays  = "HOOKFAN_RECORD_DAYS"  // delivery-record TTL in days
	EnvTracing     = "HOOKFAN_TRACING"      // "sampled" or "all" when tracing is on (a traceparent header); unset when off
	EnvDedupeMode  = "HOOKFAN_DEDUPE_MODE"  // "check" for dedupe.mode check; unset for the default lease
	EnvLaneMetrics = "HOOKFAN_LANE_METRICS" // "aggregate" with metrics.laneDimensions false; unset for per-lane dimensions
	EnvTimeIndex   = "HOOKFAN_TIME_INDEX"   // "off" with dedupe.timeIndex false (the table has no time index); unset when it has one
	// EnvFunctionName is set by Lambda for every function: a lane that
	// pauses finds its event source mapping by it.
	EnvFunctionName = "AWS_LAMBDA_FUNCTION_NAME"
)

// EnvFunctionMemory is set by Lambda for every function: its memory in
// MB, which sizes a transform's memory bound.
const EnvFunctionMemory = "AWS_LAMBDA_FUNCTION_MEMORY_SIZE"

// Env is the deliver function's environment contract, written once: the
// CDK stack renders it for each lane's function (Render), the function
// reads it at start (ReadEnv), the cold-start harness and the RIE test run
// the built binary with what Render gives. Secrets never travel here, only
// their names.
type Env struct {
	Destination config.Destination
	// TableName is the delivery-record table (the lane's pause state
	// lives there too).
	TableName string
	// QueueURL is the lane's queue, for ChangeMessageVisibility and, when
	// the lane pauses, the fresh copies.
	QueueURL string
	// QueueARN is the lane's queue's ARN: rendered only when the
	// destination pauses, to find the lane's event source mapping.
	QueueARN string
	// SecretID is the signing secret's name or ARN.
	SecretID string
	// RecordDays is the delivery records' TTL in days.
	RecordDays int
	// MetricsSink is the config's metrics.sink; a function accepts only
	// config.SinkEMF (metrics.CheckFunctionSink), the one a deployed stack
	// renders.
	MetricsSink string
	// PayloadBucket holds the bodies larger than one SNS message; "" when
	// no source takes such bodies.
	PayloadBucket string
	// PayloadArchiveBucket keeps each large body's copy, read once the
	// payload object is gone; "" without the archive (or large bodies).
	PayloadArchiveBucket string
	// Tracing is config tracing ("sampled" or "all") when the lane's
	// function passes the trace on; "" (not rendered) when it is off.
	Tracing string
	// DedupeMode is config dedupe.mode: config.DedupeCheck, or "" (not
	// rendered) for the default config.DedupeLease.
	DedupeMode string
	// TimeIndex is TimeIndexOff with dedupe.timeIndex false: the record
	// table has no time index, so no record write sets its key; "" (not
	// rendered) by default.
	TimeIndex string
	// LaneMetrics is config.LaneMetricsAggregate with
	// metrics.laneDimensions false, "" (not rendered) by default.
	LaneMetrics string
	// LogLevel is config.LogLevelWarn with functions.logLevel WARN, ""
	// (not rendered) for the default INFO.
	LogLevel string
	// MemoryMB is the function's memory: set by Lambda, not rendered; 0
	// where it is not set (the local stack), which means
	// config.DefaultDeliverMemoryMB.
	MemoryMB int
	// FunctionName is the function's own name: set by Lambda, not
	// rendered; read only when the destination pauses.
	FunctionName string
}

// TimeIndexOff is EnvTimeIndex's one value: the table has no time index.
const TimeIndexOff = "off"

// Indexed reports whether the record table has the time index, so that a
// record's first write sets its key.
func (e Env) Indexed() bool { return e.TimeIndex != TimeIndexOff }

// LaneResources are where a lane's function finds what the stack made
// for it: names, URLs and ARNs (CDK tokens in the stack, the emulator's
// names locally).
type LaneResources struct {
	// Table is the delivery-record table.
	Table string
	// QueueURL and QueueARN are the lane's queue's.
	QueueURL, QueueARN string
	// SecretID is the signing secret's name or ARN; "" for an AWS target,
	// which is not signed.
	SecretID string
	// PayloadBucket holds the bodies larger than one SNS message; "" when
	// no source takes such bodies.
	PayloadBucket string
	// ArchiveBucket is the event archive's bucket; "" without the
	// archive. Rendered only with PayloadBucket.
	ArchiveBucket string
}

// LaneEnv is destination d's contract under cfg, given where its
// resources are: the whole environment, tracing included.
func LaneEnv(cfg *config.Config, d config.Destination, r LaneResources) Env {
	e := Env{Destination: d, TableName: r.Table, QueueURL: r.QueueURL, QueueARN: r.QueueARN, SecretID: r.SecretID,
		RecordDays: int(cfg.RecordTTL() / (24 * time.Hour)), MetricsSink: cfg.Metrics.SinkName(), PayloadBucket: r.PayloadBucket}
	if r.PayloadBucket != "" {
		e.PayloadArchiveBucket = r.ArchiveBucket
	}
	if m := cfg.TracingMode(); m != config.TracingOff {
		e.Tracing = m
	}
	if cfg.DedupeMode() != config.DedupeLease {
		e.DedupeMode = cfg.DedupeMode()
	}
	if !cfg.Dedupe.Indexed() {
		e.TimeIndex = TimeIndexOff
	}
	if !cfg.Metrics.PerLane() {
		e.LaneMetrics = config.LaneMetricsAggregate
	}
	if cfg.Functions.AppLog() != config.LogLevelInfo {
		e.LogLevel = cfg.Functions.AppLog()
	}
	return e
}

// Pauses reports whether the destination pauses (and so the function
// needs its lane's state and event source mapping).
func (e Env) Pauses() bool {
	_, pauses := e.Destination.PauseRule()
	return pauses
}

// Render returns the variables of the function's environment.
func (e Env) Render() map[string]string {
	env := map[string]string{
		EnvDestination:        config.EncodeDestination(e.Destination),
		EnvTableName:          e.TableName,
		EnvQueueURL:           e.QueueURL,
		EnvRecordDays:         strconv.Itoa(e.RecordDays),
		config.EnvMetricsSink: e.MetricsSink,
	}
	if e.SecretID != "" { // an AWS target is not signed
		env[EnvSecretID] = e.SecretID
	}
	if e.PayloadBucket != "" {
		env[config.EnvPayloadBucket] = e.PayloadBucket
	}
	if e.PayloadArchiveBucket != "" {
		env[config.EnvPayloadArchiveBucket] = e.PayloadArchiveBucket
	}
	if e.Pauses() {
		env[EnvQueueARN] = e.QueueARN
	}
	if e.Tracing != "" {
		env[EnvTracing] = e.Tracing
	}
	if e.DedupeMode != "" {
		env[EnvDedupeMode] = e.DedupeMode
	}
	if e.TimeIndex != "" {
		env[EnvTimeIndex] = e.TimeIndex
	}
	if e.LaneMetrics != "" {
		env[EnvLaneMetrics] = e.LaneMetrics
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
	require := func(name, what, fix string) string {
		v := lookup(name)
		if v == "" {
			errs = append(errs, fmt.Errorf("environment variable %s (%s) is not set; %s", name, what, fix))
		}
		return v
	}
	const byStack = "the stack sets it for every lane's function"
	e := Env{
		TableName:     require(EnvTableName, "the delivery-record table", byStack),
		QueueURL:      require(EnvQueueURL, "the lane's queue URL", byStack),
		SecretID:      lookup(EnvSecretID),
		MetricsSink:   lookup(config.EnvMetricsSink),
		PayloadBucket: lookup(config.EnvPayloadBucket),
		RecordDays:    config.DefaultRecordDays,
		// Read with the payload bucket only, as it is rendered.
		PayloadArchiveBucket: lookup(config.EnvPayloadArchiveBucket),
		Tracing:              lookup(EnvTracing),
		DedupeMode:           lookup(EnvDedupeMode),
		TimeIndex:            lookup(EnvTimeIndex),
		LaneMetrics:          lookup(EnvLaneMetrics),
		LogLevel:             lookup(config.EnvLogLevel),
	}
	if v := lookup(EnvFunctionMemory); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < config.MinMemoryMB || n > config.MaxMemoryMB {
			errs = append(errs, fmt.Errorf("%s = %q: want the function's memory in MB, %d to %d (Lambda sets it)", EnvFunctionMemory, v, config.MinMemoryMB, config.MaxMemoryMB))
		}
		e.MemoryMB = n
	}
	if err := loglevel.Check(e.LogLevel); err != nil {
		errs = append(errs, err)
	}
	if m := e.LaneMetrics; m != "" && m != config.LaneMetricsAggregate {
		errs = append(errs, fmt.Errorf("%s = %q: want %q, or unset for per-lane dimensions (metrics.laneDimensions)", EnvLaneMetrics, m, config.LaneMetricsAggregate))
	}
	if m := e.DedupeMode; m != "" && m != config.DedupeLease && m != config.DedupeCheck {
		errs = append(errs, fmt.Errorf("%s = %q: want %q or %q, or unset for %q (dedupe.mode)", EnvDedupeMode, m, config.DedupeCheck, config.DedupeLease, config.DedupeLease))
	}
	if v := e.TimeIndex; v != "" && v != TimeIndexOff {
		errs = append(errs, fmt.Errorf("%s = %q: want %q, or unset when the record table has its time index (dedupe.timeIndex)", EnvTimeIndex, v, TimeIndexOff))
	}
	if v := require(EnvDestination, "the destination, as JSON", byStack); v != "" {
		d, err := config.DecodeDestination(EnvDestination, v)
		if err != nil {
			errs = append(errs, err)
		}
		e.Destination = d
	}
	if e.SecretID == "" && e.Destination.Signs() {
		require(EnvSecretID, "the signing secret's name or ARN", "the stack sets it for every https lane's function")
	}
	if v := lookup(EnvRecordDays); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > config.MaxRecordDays {
			errs = append(errs, fmt.Errorf("%s = %q: want a whole number of days from 1 to %d (dedupe.recordDays)", EnvRecordDays, v, config.MaxRecordDays))
		}
		e.RecordDays = n
	}
	if err := metrics.CheckFunctionSink(e.MetricsSink); err != nil {
		errs = append(errs, fmt.Errorf("%s: %w (metrics.sink)", config.EnvMetricsSink, err))
	}
	if e.Pauses() {
		e.QueueARN = require(EnvQueueARN, "the lane's queue ARN", "the stack sets it when the destination pauses")
		e.FunctionName = require(EnvFunctionName, "the function's name, to find the lane's event source mapping", "Lambda sets it for every function")
	}
	return e, errors.Join(errs...)
}
