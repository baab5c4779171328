// Package config holds Hookfan's one typed configuration: the webhook sources,
// the destinations that subscribe to them, and the few stack-wide settings.
//
// The CDK app, the local stack and the Lambda functions all load and validate
// it through this package, and every value derived from it (SQS redrive and
// retention, visibility timeout, SNS filter policy) is computed here and
// nowhere else.
package config

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/hookfan/hookfan/shared/provider"
)

// Metrics sinks accepted in metrics.sink.
const (
	SinkEMF        = "emf"
	SinkCloudWatch = "cloudwatch"
)

// A source's body limits.
const (
	// MaxSNSMessageBytes is SNS's limit for one message, body and attributes together.
	MaxSNSMessageBytes = 256 * 1024
	// AttributeReserveBytes is kept free for the message attributes ingest adds.
	AttributeReserveBytes = 2 * 1024
	// MaxBodyBytesCeiling is the default body limit of a source and the
	// largest body that travels inside one SNS message. A source may accept
	// more (up to API.MaxBodyBytes): such bodies travel through S3.
	MaxBodyBytesCeiling = MaxSNSMessageBytes - AttributeReserveBytes
)

// A source's clock-skew tolerance, in seconds.
const (
	DefaultToleranceSeconds = int(provider.DefaultTolerance / time.Second)
	MaxToleranceSeconds     = 3600
)

// A destination's delivery deadline and event source mapping settings.
const (
	DefaultTimeoutSeconds = 10
	MinTimeoutSeconds     = 1
	MaxTimeoutSeconds     = 120

	DefaultMaxConcurrency = 5
	MinMaxConcurrency     = 2 // the SQS event source mapping's minimum
	MaxMaxConcurrency     = 1000

	DefaultBatchSize = 10
	MaxBatchSize     = 10

	MaxBatchWindowSeconds = 300
)

// DefaultJitter is the retry jitter when a destination sets none.
const DefaultJitter = 0.2

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

// MaxFilterCombinations is SNS's limit on the product of the value counts
// across the keys of one filter policy.
const MaxFilterCombinations = 150

// DefaultSchedule is the retry schedule used when a destination gives none:
// about a day in total.
var DefaultSchedule = []Duration{
	Duration(5 * time.Second), Duration(30 * time.Second), Duration(2 * time.Minute),
	Duration(10 * time.Minute), Duration(30 * time.Minute), Duration(time.Hour),
	Duration(2 * time.Hour), Duration(4 * time.Hour), Duration(8 * time.Hour),
}

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

// Source is one webhook sender with its own URL, /webhooks/{name}.
type Source struct {
	Name   string `json:"name"`
	Verify Verify `json:"verify"`
	// MaxBodyBytes caps the request body; bigger bodies get 413. Default
	// MaxBodyBytesCeiling (what one SNS message carries); up to
	// API.MaxBodyBytes, a body that does not fit one SNS message is stored in
	// S3 and published as a reference.
	MaxBodyBytes int `json:"maxBodyBytes,omitempty"`
	// Event says where the generic kinds (hmac, token) find the event id and
	// type. The provider kinds have fixed places and reject this block.
	Event EventFields `json:"event,omitzero"`
	// Limits are what the API enforces on this source's route before ingest
	// runs: throttling, the alarm on client errors, the WAF allow-list.
	Limits SourceLimits `json:"limits,omitzero"`
	// ReplayProtection remembers the source's verified requests so that a
	// copy is answered as the original: on by default for the kinds that
	// sign no timestamp.
	ReplayProtection ReplayProtection `json:"replayProtection,omitzero"`
}

// Verify says how a source's requests are authenticated.
type Verify struct {
	// Kind names a registered kind (shared/provider).
	Kind string `json:"kind"`
	// SecretName is the Secrets Manager name (or ARN) holding the secret: a
	// string, or a JSON array of strings while a secret rotates.
	SecretName string `json:"secretName"`
	// ToleranceSeconds bounds the clock skew accepted by timestamped kinds
	// (stripe, slack, standard-webhooks). Default 300.
	ToleranceSeconds int `json:"toleranceSeconds,omitempty"`
	// Header carries the signature (hmac) or the token (token).
	Header string `json:"header,omitempty"`
	// Algorithm is sha1, sha256 or sha512 (hmac only; default sha256).
	Algorithm string `json:"algorithm,omitempty"`
	// Encoding is hex or base64 (hmac only; default hex).
	Encoding string `json:"encoding,omitempty"`
	// Prefix precedes the encoded digest in the header, such as "sha256=" (hmac only).
	Prefix string `json:"prefix,omitempty"`
}

// EventFields locates a generic source's event id and type. Header and
// field are exclusive; field is a dot-separated path into a JSON body. With
// neither, the id is the SHA-256 of the body and the type is "webhook".
type EventFields struct {
	IDHeader   string `json:"idHeader,omitempty"`
	IDField    string `json:"idField,omitempty"`
	TypeHeader string `json:"typeHeader,omitempty"`
	TypeField  string `json:"typeField,omitempty"`
}

// Destination is one subscriber lane: queue, DLQ, deliver function, alarms.
type Destination struct {
	Name string `json:"name"`
	// URL is where deliveries are POSTed. Exactly one of URL and
	// URLSecretName is set.
	URL string `json:"url,omitempty"`
	// URLSecretName names a Secrets Manager secret whose whole value is
	// the URL, read at run time: for endpoints that carry a token in their
	// path or query, which would otherwise live in the configuration, the
	// template, the function's environment and the SSM index.
	URLSecretName string `json:"urlSecretName,omitempty"`
	Filter        Filter `json:"filter,omitzero"`
	Retry         Retry  `json:"retry,omitzero"`
	// TimeoutSeconds is the whole-request deadline of one delivery. Default 10.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// MaxConcurrency caps concurrent deliver functions (event source mapping).
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// BatchSize is the number of messages per invocation (1..10). Default 10.
	BatchSize int `json:"batchSize,omitempty"`
	// BatchWindowSeconds is the event source mapping's batching window.
	BatchWindowSeconds int `json:"batchWindowSeconds,omitempty"`
	// AllowPrivateNetworks lets deliveries reach private, loopback and
	// link-local addresses, and http:// URLs. For local development only.
	AllowPrivateNetworks bool `json:"allowPrivateNetworks,omitempty"`
	// SecretName names an existing signing secret; when empty the CDK stack
	// generates one.
	SecretName string `json:"secretName,omitempty"`
	// Headers are sent with every delivery, after Hookfan's own: a static
	// value from the config, or a secret's value read from Secrets Manager
	// (an Authorization or API-key header).
	Headers []Header `json:"headers,omitempty"`
	// Pause, when set, pauses the lane while the destination keeps failing
	// instead of spending every event's attempts (pause.go).
	Pause *Pause `json:"pause,omitempty"`
}

// Header is one header a destination gets with every delivery. Exactly one
// of Value and SecretName is set.
type Header struct {
	// Name is the header's name: an HTTP token, not one of the headers HTTP
	// or Hookfan itself sets.
	Name string `json:"name"`
	// Value is a static value. It lives in the configuration, the template
	// and the function's environment: use SecretName for credentials.
	Value string `json:"value,omitempty"`
	// SecretName is a Secrets Manager secret whose whole value is the
	// header's value, verbatim (for example "Bearer eyJ…").
	SecretName string `json:"secretName,omitempty"`
}

// Filter selects the events a destination receives. Empty means all.
type Filter struct {
	// Sources are exact source names.
	Sources []string `json:"sources,omitempty"`
	// Types are exact event types, or prefixes written with a trailing "*"
	// ("payment_intent.*").
	Types []string `json:"types,omitempty"`
	// ExcludeTypes receives every type but these (SNS anything-but): exact
	// types, or a single prefix with a trailing "*". Exclusive with Types.
	ExcludeTypes []string `json:"excludeTypes,omitempty"`
	// Body filters on fields of a JSON body, in SNS's filter-policy syntax
	// (shared/bodyfilter): exact strings and numbers, prefix, numeric
	// comparisons and ranges, exists, anything-but; keys nest.
	Body BodyFilter `json:"body,omitempty"`
}

// BodyFilter is a body filter policy as JSON, kept compact so that a
// destination's configuration reads back unchanged from the function's
// environment.
type BodyFilter []byte

// UnmarshalJSON keeps the policy compacted; null means none.
func (b *BodyFilter) UnmarshalJSON(data []byte) error {
	if string(data) == "null" {
		*b = nil
		return nil
	}
	var out bytes.Buffer
	if err := json.Compact(&out, data); err != nil {
		return err
	}
	*b = out.Bytes()
	return nil
}

// MarshalJSON writes the policy as it is.
func (b BodyFilter) MarshalJSON() ([]byte, error) {
	if len(b) == 0 {
		return []byte("null"), nil
	}
	return b, nil
}

// Retry is a destination's retry policy.
type Retry struct {
	// Schedule holds the delays before each retry, as Go durations ("30s",
	// "2m"); one attempt plus one per delay. Each delay at most
	// Destination.MaxDelay (12h less the function timeout, the batch window
	// and a minute).
	Schedule []Duration `json:"schedule,omitempty"`
	// Jitter spreads each delay by up to ±Jitter of itself (0..1). Default 0.2.
	Jitter *float64 `json:"jitter,omitempty"`
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
