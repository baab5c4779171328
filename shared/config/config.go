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

// Limits and defaults. They are exported so docs, tests and the CDK code can
// quote them rather than repeat the numbers.
const (
	// MaxSNSMessageBytes is SNS's limit for one message, body and attributes together.
	MaxSNSMessageBytes = 256 * 1024
	// AttributeReserveBytes is kept free for the message attributes ingest adds.
	AttributeReserveBytes = 2 * 1024
	// MaxBodyBytesCeiling is the default body limit of a source and the
	// largest body that travels inside one SNS message. A source may accept
	// more (up to API.MaxBodyBytes): such bodies travel through S3.
	MaxBodyBytesCeiling = MaxSNSMessageBytes - AttributeReserveBytes

	// MaxLambdaPayloadBytes is Lambda's limit on a synchronous invocation's
	// request payload (6 MB: 6,291,456 bytes), which holds API Gateway's
	// whole event, the body inside it.
	MaxLambdaPayloadBytes = 6 * 1024 * 1024
	// LambdaEventReserveBytes is kept for the event's other fields. API
	// Gateway bounds the request line and headers together at 10,240 bytes;
	// the REST proxy event carries the headers twice (headers and
	// multiValueHeaders) and the path up to four times, each JSON-escaped
	// (at most 6 bytes per byte), plus the request context: under 250 KB.
	LambdaEventReserveBytes = 256 * 1024
	// MaxBodyBytesREST is the largest body a REST API delivers to the ingest
	// function: with binary media types */* the body is base64 in the event
	// (4 bytes per 3), so (6 MiB - 256 KiB) / 4 × 3 = 4,521,984 bytes.
	MaxBodyBytesREST = (MaxLambdaPayloadBytes - LambdaEventReserveBytes) / 4 * 3
	// MaxBodyBytesHTTP is the largest body an HTTP API delivers whatever its
	// bytes: an HTTP API passes a body whose content type it takes for text
	// as a JSON string, where a control character takes 6 bytes (\u0001), so
	// (6 MiB - 256 KiB) / 6 = 1,004,885 bytes.
	MaxBodyBytesHTTP = (MaxLambdaPayloadBytes - LambdaEventReserveBytes) / 6

	DefaultToleranceSeconds = int(provider.DefaultTolerance / time.Second)
	MaxToleranceSeconds     = 3600

	DefaultTimeoutSeconds = 10
	MinTimeoutSeconds     = 1
	MaxTimeoutSeconds     = 120

	DefaultMaxConcurrency = 5
	MinMaxConcurrency     = 2 // the SQS event source mapping's minimum
	MaxMaxConcurrency     = 1000

	DefaultBatchSize = 10
	MaxBatchSize     = 10

	MaxBatchWindowSeconds = 300

	DefaultJitter = 0.2

	// FunctionOverheadSeconds is added to a destination's timeout to get the
	// deliver function's timeout: claim, record and backoff calls around the POST.
	FunctionOverheadSeconds = 10
	// VisibilityFactor is how many deliver-function timeouts a queue's
	// visibility timeout spans (AWS recommends at least six).
	VisibilityFactor = 6

	MaxVisibility = 12 * time.Hour // SQS's ceiling for a message's visibility, counted from its receive
	// VisibilityCapMargin is kept below MaxVisibility for what may pass
	// between SQS handing a message to the event source mapping and the
	// invocation starting, beyond the batching window (the invoke call, a
	// cold start), and for clock differences.
	VisibilityCapMargin = time.Minute
	MaxRetention        = 14 * 24 * time.Hour // SQS's ceiling for message retention
	MinRetention        = time.Minute
	DLQRetention        = 14 * 24 * time.Hour
	RetentionMargin     = time.Hour
	DefaultRecordDays   = 30

	DefaultRateLimit  = 100
	DefaultBurstLimit = 200

	DefaultLogRetentionDays = 30

	DefaultOldestMessageAlarmSeconds = 3600

	// DefaultArchiveDays is how long accepted events stay in the archive;
	// MaxArchiveDays bounds archive.days.
	DefaultArchiveDays = 30
	MaxArchiveDays     = 3650

	// MaxFilterCombinations is SNS's limit on the product of the value counts
	// across the keys of one filter policy.
	MaxFilterCombinations = 150
)

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
	// Tracing is "off" (default), "sampled" or "all" (lean.go).
	Tracing string `json:"tracing,omitempty"`
	// Functions sets the functions' memory and system log level.
	Functions Functions `json:"functions,omitzero"`
	// TopicKey is "customer" (default: a customer managed KMS key, $1 a
	// month) or "aws-managed" (SNS's AWS managed key, alias/aws/sns) for
	// the fan-out topic (lean.go).
	TopicKey string `json:"topicKey,omitempty"`
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

// API holds the front door's settings: the API type, its stage throttling
// and access logs, the optional WAF and the optional custom domain.
type API struct {
	// Type is "http" (default: API Gateway HTTP API) or "rest" (API Gateway
	// REST API: what AWS WAF and IP allow-lists need). Changing it changes
	// the providers' URLs unless a custom domain fronts them.
	Type string `json:"type,omitempty"`
	// RateLimit and BurstLimit are the stage default: they throttle requests
	// to unknown sources and are each source's default (sources[].limits).
	RateLimit        float64 `json:"rateLimit,omitempty"`
	BurstLimit       int     `json:"burstLimit,omitempty"`
	LogRetentionDays int     `json:"logRetentionDays,omitempty"`
	// DetailedMetrics publishes each route's metrics (count, 4xx, 5xx,
	// latencies: five custom metrics a source, $1.50 a month), which each
	// source's ClientErrorsAlarm reads. Default true.
	DetailedMetrics *bool `json:"detailedMetrics,omitempty"`
	// WAF associates a web ACL with the REST stage.
	WAF WAF `json:"waf,omitzero"`
	// DomainName is a custom domain for the API (regional), so a recreated
	// API keeps its URLs. It needs CertificateArn, or HostedZoneID and
	// HostedZoneName to create a DNS-validated certificate.
	DomainName     string `json:"domainName,omitempty"`
	CertificateArn string `json:"certificateArn,omitempty"`
	// HostedZoneID and HostedZoneName name the Route 53 public zone holding
	// DomainName: the stack creates the alias record there (and the
	// certificate, when CertificateArn is empty).
	HostedZoneID   string `json:"hostedZoneId,omitempty"`
	HostedZoneName string `json:"hostedZoneName,omitempty"`
}

// WAF configures the web ACL in front of a REST API.
type WAF struct {
	// Enabled creates a regional web ACL associated with the stage.
	Enabled bool `json:"enabled,omitempty"`
	// RateLimit is how many requests one IP address may send in five
	// minutes before the web ACL blocks it. Default 2000.
	RateLimit int `json:"rateLimit,omitempty"`
}

// SourceLimits are one source's limits at the API.
type SourceLimits struct {
	// RateLimit and BurstLimit throttle this source's route; default the
	// stage's api.rateLimit and api.burstLimit, in a bucket of its own.
	RateLimit  float64 `json:"rateLimit,omitempty"`
	BurstLimit int     `json:"burstLimit,omitempty"`
	// ClientErrorAlarm is how many 4xx answers (throttling included) on
	// this source's route in five minutes raise its alarm. Default 50.
	ClientErrorAlarm int `json:"clientErrorAlarm,omitempty"`
	// AllowedIPs, when set, are the only addresses (CIDR blocks or single
	// addresses, IPv4 or IPv6) the web ACL lets reach this source's route.
	// Needs api.waf.enabled.
	AllowedIPs []string `json:"allowedIps,omitempty"`
}

// Dedupe holds the delivery-record table settings.
type Dedupe struct {
	// RecordDays is how long a delivery record is kept (DynamoDB TTL). It must
	// outlast queue retention plus the DLQ's, so a redriven message is still
	// deduplicated. Default 30.
	RecordDays int `json:"recordDays,omitempty"`
	// PointInTimeRecovery keeps the record table restorable to any second
	// of the last 35 days ($0.20 per GB-month). Default true.
	PointInTimeRecovery *bool `json:"pointInTimeRecovery,omitempty"`
}

// Detailed reports whether the API publishes per-route metrics.
func (a API) Detailed() bool { return a.DetailedMetrics == nil || *a.DetailedMetrics }

// PITR reports whether the record table has point-in-time recovery.
func (d Dedupe) PITR() bool { return d.PointInTimeRecovery == nil || *d.PointInTimeRecovery }

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
