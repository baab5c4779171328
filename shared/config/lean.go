package config

import "slices"

// Tracing modes accepted in tracing.
const (
	// TracingOff records no traces (default).
	TracingOff = "off"
	// TracingSampled traces the ingest function actively under X-Ray's
	// sampling (the first request each second and 5 % of the rest); the
	// topic passes the decision on in each message's trace header, and the
	// deliver functions trace only the messages sampled upstream.
	TracingSampled = "sampled"
	// TracingAll traces every ingest request and every delivery invocation
	// actively, and the REST stage too.
	TracingAll = "all"
)

// TracingModes lists the tracing modes, the default first.
var TracingModes = []string{TracingOff, TracingSampled, TracingAll}

// Lambda system log levels accepted in functions.systemLogLevel: the
// platform's own lines (platform.start, platform.report…) come at INFO and
// DEBUG, so WARN keeps only the platform's warnings and errors.
const (
	SystemLogDebug = "DEBUG"
	SystemLogInfo  = "INFO"
	SystemLogWarn  = "WARN"
)

// SystemLogLevels lists the system log levels, the default first.
var SystemLogLevels = []string{SystemLogWarn, SystemLogInfo, SystemLogDebug}

// Function memory: the defaults were chosen by BenchmarkDeliveryTLS and
// BenchmarkIngest (docs/cost.md#memory); Lambda accepts 128 to 10,240 MB.
const (
	DefaultIngestMemoryMB  = 128
	DefaultDeliverMemoryMB = 128
	MinMemoryMB            = 128
	MaxMemoryMB            = 10240
)

// Functions holds the Lambda functions' settings that the bill follows.
type Functions struct {
	// IngestMemoryMB and DeliverMemoryMB are each function's memory, which
	// also buys its CPU share (1,769 MB is one vCPU). Default 128 each.
	IngestMemoryMB  int `json:"ingestMemoryMB,omitempty"`
	DeliverMemoryMB int `json:"deliverMemoryMB,omitempty"`
	// SystemLogLevel is the level of the platform's lines: "WARN" (default:
	// no START/END/REPORT lines), "INFO" or "DEBUG".
	SystemLogLevel string `json:"systemLogLevel,omitempty"`
	// LogLevel is the functions' own lines: "INFO" (default: one line per
	// ingest request and per delivery attempt) or "WARN" (only rejections,
	// failures and errors: the delivery records, ops status and the API's
	// access log remain the trail of what went well).
	LogLevel string `json:"logLevel,omitempty"`
}

// Application log levels accepted in functions.logLevel.
const (
	LogLevelInfo = "INFO"
	LogLevelWarn = "WARN"
)

// AppLog is the functions' application log level in force.
func (f Functions) AppLog() string {
	if f.LogLevel == "" {
		return LogLevelInfo
	}
	return f.LogLevel
}

// Topic keys accepted in topicKey.
const (
	TopicKeyCustomer   = "customer"
	TopicKeyAWSManaged = "aws-managed"
)

// TopicKeyKind is the fan-out topic's key in force.
func (c *Config) TopicKeyKind() string {
	if c.TopicKey == "" {
		return TopicKeyCustomer
	}
	return c.TopicKey
}

// CustomerKey reports whether the stack makes its customer managed key:
// for the fan-out topic, or for the alarm topic (CloudWatch alarms cannot
// publish to a topic under an AWS managed key).
func (c *Config) CustomerKey() bool {
	return c.TopicKeyKind() == TopicKeyCustomer || c.Alarms.Notified()
}

// TracingMode is the tracing mode in force.
func (c *Config) TracingMode() string {
	if c.Tracing == "" {
		return TracingOff
	}
	return c.Tracing
}

// IngestMemory is the ingest function's memory in MB.
func (f Functions) IngestMemory() int {
	if f.IngestMemoryMB == 0 {
		return DefaultIngestMemoryMB
	}
	return f.IngestMemoryMB
}

// DeliverMemory is each deliver function's memory in MB.
func (f Functions) DeliverMemory() int {
	if f.DeliverMemoryMB == 0 {
		return DefaultDeliverMemoryMB
	}
	return f.DeliverMemoryMB
}

// SystemLog is the system log level in force.
func (f Functions) SystemLog() string {
	if f.SystemLogLevel == "" {
		return SystemLogWarn
	}
	return f.SystemLogLevel
}

func (c *Config) validateLean(p *problems) {
	if c.Tracing != "" && !slices.Contains(TracingModes, c.Tracing) {
		p.add("tracing", "unknown mode %q; use %q (default), %q or %q", c.Tracing, TracingOff, TracingSampled, TracingAll)
	}
	if c.TopicKey != "" && c.TopicKey != TopicKeyCustomer && c.TopicKey != TopicKeyAWSManaged {
		p.add("topicKey", "unknown key %q; use %q (default: a customer managed KMS key) or %q (SNS's AWS managed key)", c.TopicKey, TopicKeyCustomer, TopicKeyAWSManaged)
	}
	f := &c.Functions
	for _, m := range []struct {
		field string
		mb    int
		def   int
	}{{"functions.ingestMemoryMB", f.IngestMemoryMB, DefaultIngestMemoryMB}, {"functions.deliverMemoryMB", f.DeliverMemoryMB, DefaultDeliverMemoryMB}} {
		if m.mb != 0 && (m.mb < MinMemoryMB || m.mb > MaxMemoryMB) {
			p.add(m.field, "%d is out of range; use %d to %d MB (default %d)", m.mb, MinMemoryMB, MaxMemoryMB, m.def)
		}
	}
	if f.LogLevel != "" && f.LogLevel != LogLevelInfo && f.LogLevel != LogLevelWarn {
		p.add("functions.logLevel", "unknown level %q; use %q (default: a line per ingest request and per delivery attempt) or %q (only rejections, failures and errors)", f.LogLevel, LogLevelInfo, LogLevelWarn)
	}
	if f.SystemLogLevel != "" && !slices.Contains(SystemLogLevels, f.SystemLogLevel) {
		p.add("functions.systemLogLevel", "unknown level %q; use %q (default: no START/END/REPORT lines), %q or %q", f.SystemLogLevel, SystemLogWarn, SystemLogInfo, SystemLogDebug)
	}
}
