// Package config holds Hookfan's one typed configuration: the webhook sources,
// the destinations that subscribe to them, and the few stack-wide settings.
//
// The CDK app, the local stack and the Lambda functions all load and validate
// it through this package, and every value derived from it (SQS redrive and
// retention, visibility timeout, SNS filter policy) is computed here and
// nowhere else.
package config

// Metrics sinks accepted in metrics.sink.
const (
	SinkEMF        = "emf"
	SinkCloudWatch = "cloudwatch"
)

// DefaultRecordDays is how long a delivery record is kept when
// dedupe.recordDays is not set.
const DefaultRecordDays = 30

// DefaultOldestMessageAlarmSeconds is the queue age that raises an alarm
// when alarms.oldestMessageSeconds is not set.
const DefaultOldestMessageAlarmSeconds = 3600

// DefaultArchiveDays is how long accepted events stay in the archive;
// MaxArchiveDays bounds archive.days.
const (
	DefaultArchiveDays = 30
	MaxArchiveDays     = 3650
)

// Config is the whole Hookfan configuration.
type Config struct {
	Sources      []Source      `json:"sources"`
	Destinations []Destination `json:"destinations"`
	Metrics      Metrics       `json:"metrics"`
	API          API           `json:"api"`
	Dedupe       Dedupe        `json:"dedupe"`
	Alarms       Alarms        `json:"alarms"`
	Archive      Archive       `json:"archive,omitzero"`
}

// Metrics selects where metrics go.
type Metrics struct {
	// Sink is "emf" (default: Embedded Metric Format in the logs) or
	// "cloudwatch" (PutMetricData once per invocation, for emulators).
	Sink string `json:"sink,omitempty"`
}

// Dedupe holds the delivery-record table settings.
type Dedupe struct {
	// RecordDays is how long a delivery record is kept (DynamoDB TTL). It must
	// outlast queue retention plus the DLQ's, so a redriven message is still
	// deduplicated. Default 30.
	RecordDays int `json:"recordDays,omitempty"`
}

// Alarms holds alarm settings.
type Alarms struct {
	// Email, when set, subscribes this address to the alarm topic.
	Email string `json:"email,omitempty"`
	// OldestMessageSeconds is the queue age that raises an alarm. Default 3600.
	OldestMessageSeconds int `json:"oldestMessageSeconds,omitempty"`
}

// Archive keeps every accepted event (body, attributes, received time) in
// S3, so an operator can replay it to a destination later.
type Archive struct {
	// Days is how long an archived event is kept (the bucket's lifecycle
	// expiration); 0 turns the archive off. Default DefaultArchiveDays.
	Days *int `json:"days,omitempty"`
}
