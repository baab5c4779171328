// Package cost is Hookfan's cost model: what a deployment costs to run in
// us-east-1, per million events and per month, from the resources the
// stack creates (Resources, which a stack test checks against the
// synthesized templates), the prices AWS publishes (Prices) and the
// figures measured here or assumed (Assumed). docs/cost.md holds the
// tables Render writes; a test keeps the page equal to them.
package cost

import (
	"fmt"
	"math"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
)

// PricesRead is when the prices below were read, from stored copies of the
// pages each Price names.
const PricesRead = "2026-12-01"

// Region is the region of every price.
const Region = "us-east-1"

// Price is one published price.
type Price struct {
	USD  float64
	Unit string
	// Page names the page the price was read from.
	Page string
}

// Prices are the list prices in us-east-1, without free tiers (noted in
// the page) or volume discounts (which start far above these volumes).
var Prices = struct {
	APIRest, APIHTTP                     Price
	LambdaGBSecond, LambdaRequest        Price
	SNSPublish                           Price
	SQSRequest                           Price
	DynamoWrite, DynamoRead              Price
	DynamoStorage, PITR                  Price
	Firehose                             Price
	S3Put, S3Storage                     Price
	KMSKey, KMSRequests                  Price
	LogsIngest, Metric, Alarm, Dashboard Price
	Secret                               Price
	WAFACL, WAFRule, WAFRequests         Price
	XRayTrace                            Price
	DataOut                              Price
	EventBridgeEvent, APIDestination     Price
	SvixPro, SvixMessage                 Price
}{
	APIRest:          Price{3.50, "per million requests (first 333 million)", "Amazon API Gateway pricing"},
	APIHTTP:          Price{1.00, "per million requests of up to 512 KB (first 300 million)", "Amazon API Gateway pricing"},
	LambdaGBSecond:   Price{0.0000133334, "per GB-second, Arm", "AWS Lambda pricing"},
	LambdaRequest:    Price{0.20, "per million requests", "AWS Lambda pricing"},
	SNSPublish:       Price{0.50, "per million publishes, each 64 KB chunk one (deliveries to SQS: no charge)", "Amazon SNS pricing"},
	SQSRequest:       Price{0.40, "per million requests, each 64 KB chunk one (standard queues)", "Amazon SQS pricing"},
	DynamoWrite:      Price{0.625, "per million write request units (on demand; 1 KB each)", "Amazon DynamoDB pricing (on-demand, since November 2024)"},
	DynamoRead:       Price{0.125, "per million read request units (on demand; 4 KB each)", "Amazon DynamoDB pricing (on-demand, since November 2024)"},
	DynamoStorage:    Price{0.25, "per GB-month", "Amazon DynamoDB pricing"},
	PITR:             Price{0.20, "per GB-month (point-in-time recovery)", "Amazon DynamoDB pricing"},
	Firehose:         Price{0.029, "per GB ingested, each record rounded up to 5 KB (Direct PUT)", "Amazon Data Firehose pricing"},
	S3Put:            Price{0.005, "per 1,000 PUT requests", "Amazon S3 pricing"},
	S3Storage:        Price{0.023, "per GB-month (S3 Standard)", "Amazon S3 pricing"},
	KMSKey:           Price{1.00, "per customer managed key-month, plus $1 per rotated backing key", "AWS Key Management Service pricing"},
	KMSRequests:      Price{0.03, "per 10,000 requests (20,000 a month free)", "AWS Key Management Service pricing"},
	LogsIngest:       Price{0.50, "per GB of logs ingested (standard class)", "Amazon CloudWatch pricing"},
	Metric:           Price{0.30, "per custom metric-month (first 10,000)", "Amazon CloudWatch pricing"},
	Alarm:            Price{0.10, "per standard-resolution alarm metric-month (an alarm on a math expression counts each metric it reads)", "Amazon CloudWatch pricing"},
	Dashboard:        Price{3.00, "per dashboard-month (3 free per account)", "Amazon CloudWatch pricing"},
	Secret:           Price{0.40, "per secret-month ($0.05 per 10,000 calls)", "AWS Secrets Manager pricing"},
	WAFACL:           Price{5.00, "per web ACL-month", "AWS WAF pricing"},
	WAFRule:          Price{1.00, "per rule or rule group-month", "AWS WAF pricing"},
	WAFRequests:      Price{0.60, "per million requests", "AWS WAF pricing"},
	XRayTrace:        Price{5.00, "per million traces recorded (100,000 a month free)", "AWS X-Ray pricing"},
	DataOut:          Price{0.09, "per GB out to the internet (first 10 TB; 100 GB a month free across AWS)", "Amazon EC2 data transfer pricing, as the API Gateway and SQS pricing pages apply it"},
	EventBridgeEvent: Price{1.00, "per million custom events published, each 64 KB chunk one", "Amazon EventBridge pricing"},
	APIDestination:   Price{0.20, "per million API destination invocations", "Amazon EventBridge pricing"},
	SvixPro:          Price{490, "per month, Professional plan, 50,000 messages included", "Svix pricing (svix.com/pricing)"},
	SvixMessage:      Price{0.0001, "per message beyond those included", "Svix pricing (svix.com/pricing)"},
}

// Figure is one number the model uses that is not a price: measured here,
// documented by AWS, or assumed.
type Figure struct {
	Value float64
	Unit  string
	// Source says where it comes from: a benchmark, a page, or "assumed".
	Source string
}

// SizeSlack is how far above a measured line a size figure may be.
const SizeSlack = 1.2

// Covers checks a size figure (bytes) against a line of n bytes the code
// writes: never below it (the bill would be understated), and at most
// SizeSlack times it (overstated). The tests that measure the lines call it.
func (f Figure) Covers(n int) error {
	if f.Value < float64(n) || f.Value > SizeSlack*float64(n) {
		return fmt.Errorf("the figure is %v %s and the line written is %d bytes: set it between %d and %d", f.Value, f.Unit, n, n, int(SizeSlack*float64(n)))
	}
	return nil
}

// Assumed are the model's figures.
var Assumed = struct {
	FullCPUMemoryMB                    Figure
	IngestCPUSmall, IngestCPULarge     Figure
	DeliverCPUFresh, DeliverCPUReused  Figure
	DeliverCPUPerKB, ReuseRate         Figure
	SNSPublishMs, DynamoMs             Figure
	SubscriberMs                       Figure
	IngestLogBytes, IngestEMFBytes     Figure
	AccessLogBytes, RESTAccessLogBytes Figure
	PlatformLogBytes                   Figure
	DeliverLogBytes, DeliverEMFBytes   Figure
	RecordBytes, RecordDays            Figure
	IndexEntryBytes                    Figure
	ItemOverheadBytes                  Figure
	EnvelopeBytes, EscapeFactor        Figure
	ArchiveCompression, ArchiveDays    Figure
	ArchiveObjects                     Figure
	RequestOverheadBytes               Figure
	Pollers, LongPollSeconds           Figure
	TraceReservoir, TraceRate          Figure
	MonthSeconds                       Figure
	IngestMetrics, RouteMetrics        Figure
	LaneMetrics                        Figure
	KMSRequestsPerMonth                Figure
	ReplayWrites, ReplayRecordBytes    Figure
	SvixEventsPerMessage               Figure
	TickMs, TickLogBytes               Figure
	EventBridgeSecretsPerDestination   Figure
}{
	FullCPUMemoryMB:                  Figure{1769, "MB", "AWS Lambda: a function gets one vCPU at 1,769 MB, CPU in proportion below"},
	IngestCPUSmall:                   Figure{0.022, "ms CPU", "measured: BenchmarkIngest, 1 KiB base64 body (the deployed path), upper end of 14–22 µs"},
	IngestCPULarge:                   Figure{0.136, "ms CPU", "measured: BenchmarkIngest, 16 KiB base64 body, upper end of 79–136 µs"},
	DeliverCPUFresh:                  Figure{1.577, "ms CPU", "measured: BenchmarkDeliveryTLS/fresh (parse, sign, claim, POST over a new TCP connection with a full TLS 1.3 handshake, record, log, metrics; the subscriber in another process), 2026-12-02; a new connection that resumes the subscriber's TLS session (BenchmarkDeliveryTLS/resumed) took 1.342 ms in the same run, but not every subscriber issues tickets, so the model counts the full handshake"},
	DeliverCPUReused:                 Figure{0.268, "ms CPU", "measured: BenchmarkDeliveryTLS/reused (the same on a kept HTTPS connection), the same run"},
	DeliverCPUPerKB:                  Figure{0.0015, "ms CPU per KiB", "estimated: signing and copying a KiB more of body"},
	ReuseRate:                        Figure{1, "message a second per lane", "assumed: below it a deliver function finds its connection closed (subscribers close idle connections after seconds; Hookfan keeps them 90 s)"},
	SNSPublishMs:                     Figure{20, "ms", "assumed: one in-region SNS Publish, waited for before the 202"},
	DynamoMs:                         Figure{5, "ms", "assumed: one in-region DynamoDB UpdateItem"},
	SubscriberMs:                     Figure{100, "ms", "assumed: the subscriber answers in 100 ms (the figure BenchmarkBatch uses)"},
	IngestLogBytes:                   Figure{362, "bytes", "measured (the longest timestamp): the ingest function's line for an accepted Stripe event with the requestId Lambda's JSON format adds (TestCostLogFiguresHoldTheLines in shared/ingest holds it)"},
	IngestEMFBytes:                   Figure{199, "bytes", "measured: the EMF line of an accepted event (TestCostLogFiguresHoldTheLines in shared/ingest)"},
	AccessLogBytes:                   Figure{400, "bytes", "measured: the HTTP API stage's access log format filled with an accepted Stripe request's values (TestCostAccessLogFigures in infra/stack holds it)"},
	RESTAccessLogBytes:               Figure{440, "bytes", "measured: the REST stage's access log format filled the same way (api.type rest; TestCostAccessLogFigures)"},
	PlatformLogBytes:                 Figure{650, "bytes", "estimated: Lambda's platform.start and platform.report lines (JSON log format) per invocation, at system log level INFO or DEBUG; none at WARN"},
	DeliverLogBytes:                  Figure{350, "bytes", "measured (the longest timestamp and latency): the line of an attempt delivered in 100 ms, with a Stripe event id, an SQS message id and the requestId (TestCostLogFiguresHoldTheLines in shared/delivery holds it)"},
	DeliverEMFBytes:                  Figure{410, "bytes", "measured (a four-digit latency): the EMF line of a delivered event (four metrics, the lane's dimension; TestCostLogFiguresHoldTheLines in shared/delivery)"},
	RecordBytes:                      Figure{340, "bytes", "measured: TestRecordSizeIsBounded, a record delivered at its first attempt (one write unit per write)"},
	IndexEntryBytes:                  Figure{115, "bytes", "estimated: a time index entry (the record's pk, time_bucket and first_attempt_at, names included; ops events' index, docs/decisions.md#a-time-index-of-the-delivery-records), written once per record"},
	ItemOverheadBytes:                Figure{100, "bytes", "Amazon DynamoDB (item sizes and formats): every item is billed 100 bytes of storage overhead for indexing, beside its attributes"},
	RecordDays:                       Figure{30, "days", "the config's dedupe.recordDays default"},
	EnvelopeBytes:                    Figure{1150, "bytes", "estimated: SNS's notification envelope around the body (ids, signature, URLs, five attributes)"},
	EscapeFactor:                     Figure{1.1, "×", "estimated: a JSON body grows by about a tenth when escaped into the envelope's Message string"},
	ArchiveCompression:               Figure{4, "×", "assumed: gzip on newline-delimited JSON envelopes"},
	ArchiveDays:                      Figure{30, "days", "the config's archive.days default"},
	ArchiveObjects:                   Figure{43200, "objects a month", "the stream's 60 s buffer: one object a minute while events flow (5 MiB objects only above about 2,000 KiB/s)"},
	RequestOverheadBytes:             Figure{700, "bytes", "estimated: request line, Hookfan's headers (signature included) and TLS framing of one delivery"},
	Pollers:                          Figure{5, "long polls at a time", "AWS Lambda (SQS scaling): five concurrent batches at low traffic; not fewer with MaximumConcurrency set, which every lane sets; a lane's messages spread over them (Batch)"},
	LongPollSeconds:                  Figure{20, "s", "Amazon SQS: the longest long poll"},
	TraceReservoir:                   Figure{1, "trace a second per service", "AWS X-Ray: the default sampling rule"},
	TraceRate:                        Figure{0.05, "of the rest", "AWS X-Ray: the default sampling rule"},
	MonthSeconds:                     Figure{2592000, "s", "a 30-day month"},
	IngestMetrics:                    Figure{2, "metrics per source", "assumed: IngestAccepted and one IngestRejected reason in use"},
	RouteMetrics:                     Figure{5, "metrics per source route", "API Gateway detailed metrics (Count, 4XXError, 5XXError, Latency, IntegrationLatency)"},
	LaneMetrics:                      Figure{4, "metrics per destination", "DeliveryAttempts, DeliveryLatency, DeliverySucceeded, EventAge (more while deliveries fail)"},
	KMSRequestsPerMonth:              Figure{17280 + 43200, "requests", "Amazon SNS key management: 2 × (month ÷ 5 min data-key reuse) per publishing principal; the archive: a data key per object Firehose writes, one a minute (large bodies add one per write and one per read)"},
	ReplayWrites:                     Figure{2, "writes per accepted request", "measured: BenchmarkReplayCheck (claim and confirm)"},
	ReplayRecordBytes:                Figure{300, "bytes", "a replay record (docs/security.md#replay-protection): one item of about 300 bytes per event for the window"},
	SvixEventsPerMessage:             Figure{1, "message per event", "assumed: every destination is an endpoint of one Svix application"},
	TickMs:                           Figure{5, "ms", "assumed: a paused lane's probe tick with nothing to do (one read of the lane item)"},
	TickLogBytes:                     Figure{450, "bytes", "estimated: a tick's log line and its EMF line (no platform lines at WARN)"},
	EventBridgeSecretsPerDestination: Figure{1, "secret", "Amazon EventBridge: each connection keeps its credentials in a Secrets Manager secret"},
}

// Counts are the resources of a deployment that cost money or that the
// model relies on, each as the synthesized templates hold them.
type Counts struct {
	// Alarms: 4 per destination, 1 more per destination that pauses and 1
	// per paced destination with per-lane metrics (its event age), 4
	// per source (3 without api.detailedMetrics, and 1 on the stage's 5xx
	// for all of them), 2 on the ingest function, 2 for the archive (its
	// subscription's DLQ, its stream's writes to the bucket), 4 per
	// reconciled source.
	Alarms int
	// AlarmMetrics are the metrics the alarms read, which is what
	// CloudWatch bills: one for an alarm on a metric, one per metric for
	// an alarm on a math expression (a source's IngestFailed reads
	// IngestPublishFailed and IngestRejected under each other 5xx reason
	// the source can produce).
	AlarmMetrics int
	// Dashboards: the overview and one page per further LanesPerDashboard
	// destinations.
	Dashboards int
	// GeneratedSecrets are the destinations' signing secrets the stack
	// creates (AWS::SecretsManager::Secret).
	GeneratedSecrets int
	// EnsuredSecrets are the source secrets named by name, which a custom
	// resource creates when missing (Custom::AWS).
	EnsuredSecrets int
	// BilledSecrets are every secret the deployment reads: source secrets,
	// destination signing secrets (generated or named) and the secrets of
	// their URLs, headers, tls and auth.oauth2, each name once.
	BilledSecrets int
	KMSKeys       int
	LogGroups     int
	// Queues: each lane's queue, DLQ and subscription DLQ; the archive
	// subscription's DLQ.
	Queues              int
	Functions           int
	EventSourceMappings int
	// Subscriptions: one per lane, the archive's, the alarm e-mail's.
	Subscriptions   int
	Topics          int
	Tables          int
	Buckets         int
	DeliveryStreams int
	MetricFilters   int
	WebACLs         int
	// WAFRules are the web ACL's rules: one per allow-listed source, the
	// rate rule, AWS's common rule set.
	WAFRules int
	APIs     int
	// Rules are the probe schedules of the lanes that pause
	// (AWS::Events::Rule).
	Rules int
	// Schedules run the reconciled sources' functions, one each
	// (AWS::Scheduler::Schedule).
	Schedules int
}

// LanesPerDashboard mirrors stack.LanesPerDashboard (this package does not
// import the CDK); the stack test fails if they part.
const LanesPerDashboard = 40

// Resources counts what the stack creates for cfg.
func Resources(cfg *config.Config) Counts {
	d, s := len(cfg.Destinations), len(cfg.Sources)
	var c Counts
	archive, email, waf := cfg.Archive.Enabled(), cfg.Alarms.Email != "", cfg.API.WAF.Enabled
	notified := cfg.Alarms.Notified() // the alarm topic
	secrets := map[string]bool{}
	for _, src := range cfg.Sources {
		secrets["source:"+src.Verify.SecretName] = true
		if !strings.HasPrefix(src.Verify.SecretName, "arn:") {
			c.EnsuredSecrets++
		}
		if waf && len(src.Limits.AllowedIPs) > 0 {
			c.WAFRules++
		}
	}
	pausing, paced := 0, 0
	for i, dst := range cfg.Destinations {
		if _, ok := dst.PauseRule(); ok {
			pausing++
		}
		if _, ok := dst.Pace(); ok && cfg.Metrics.PerLane() {
			paced++ // its EventAgeAlarm
		}
		switch {
		case !dst.Signs(): // an AWS target: no signing secret
		case dst.SecretName == "":
			c.GeneratedSecrets++
			secrets[fmt.Sprintf("generated:%d", i)] = true
		default:
			secrets["destination:"+dst.SecretName] = true
		}
		// Its URL's, headers', client certificate's, CA's and OAuth 2.0
		// client's.
		for _, h := range dst.Secrets() {
			secrets["destination:"+h] = true
		}
	}
	// Each reconciled source: its function (and log group), its schedule,
	// four alarms on one metric each, and its provider credential.
	reconciled := len(cfg.Reconciled())
	for _, src := range cfg.Reconciled() {
		secrets["reconcile:"+src.Reconcile.SecretName] = true
	}
	c.BilledSecrets = len(secrets)
	// A source's ServerErrorsAlarm reads its route's metrics; without them
	// one alarm reads the stage's.
	serverErrors := s
	if !cfg.API.Detailed() {
		serverErrors = 1
	}
	c.Alarms = 4*d + pausing + paced + 3*s + serverErrors + 2 + 2*b(archive) + 4*reconciled
	c.AlarmMetrics = c.Alarms - s
	for _, src := range cfg.Sources {
		c.AlarmMetrics += len(ingest.ServerErrorCodes(cfg, src))
	}
	c.Rules = pausing
	c.Dashboards = len(DashboardMetrics(cfg))
	// The topic key (unless it is SNS's AWS managed one), and the data key
	// of the archive and payload buckets.
	c.KMSKeys = b(cfg.CustomerKey()) + b(archive || cfg.LargePayloads())
	// The ingest function's and the stage's access log, each lane's, the
	// archive stream's, and the secret-creating custom resource's.
	c.LogGroups = 2 + d + b(archive) + b(c.EnsuredSecrets > 0) + reconciled
	c.Queues = 3*d + b(archive)
	c.Functions = 1 + d + b(c.EnsuredSecrets > 0) + reconciled
	c.Schedules = reconciled
	c.EventSourceMappings = d
	c.Subscriptions = d + b(archive) + b(email) + cfg.Alarms.Endpoints()
	c.Topics = 1 + b(notified) + b(cfg.AnyOrdered()) // the FIFO topic (fifo.go)
	c.Tables = 1
	c.Buckets = b(archive) + b(cfg.LargePayloads())
	c.DeliveryStreams = b(archive)
	c.MetricFilters = 1
	if waf {
		c.WebACLs = 1
		c.WAFRules += 2
	}
	c.APIs = 1
	return c
}

func b(v bool) int {
	if v {
		return 1
	}
	return 0
}

// Reference is the deployment the page prices: one Stripe source (its
// secret named by name), n destinations with generated secrets and no
// filter (every event goes to each), and every default: the HTTP API, no
// tracing, the archive on, no WAF, no alarm e-mail.
func Reference(n int) *config.Config {
	cfg := &config.Config{Sources: []config.Source{{
		Name: "stripe", Verify: config.Verify{Kind: "stripe", SecretName: "hookfan/sources/stripe"},
	}}}
	for i := range n {
		cfg.Destinations = append(cfg.Destinations, config.Destination{
			Name: fmt.Sprintf("dest-%02d", i+1), URL: fmt.Sprintf("https://dest-%02d.example.com/hooks", i+1),
		})
	}
	return cfg
}

// ReferenceWith is Reference(n) with the options the fixed part follows
// from its resources: the dashboards and their metrics, the archive (its
// alarms and its data key), the routes' detailed metrics (their alarms)
// and the topic's key.
func ReferenceWith(n int, o Options) *config.Config {
	cfg := Reference(n)
	cfg.Metrics.Dashboard, cfg.Metrics.LaneDimensions = &o.Dashboard, &o.LaneDimensions
	if !o.Archive {
		off := 0
		cfg.Archive.Days = &off
	}
	cfg.API.DetailedMetrics = &o.DetailedMetrics
	if !o.CustomerKey {
		cfg.TopicKey = config.TopicKeyAWSManaged
	}
	return cfg
}

// Line is one line item of an estimate, in US dollars.
type Line struct {
	Item string
	USD  float64
}

// Scenario is a month of events of one size sent to every destination.
type Scenario struct {
	Events       float64
	BodyKB       float64
	Destinations int
}

func (sc Scenario) large() bool { return sc.BodyKB > 1 }

// rate is one lane's messages a second (every event goes to every lane).
func (sc Scenario) rate() float64 { return sc.Events / Assumed.MonthSeconds.Value }

// Options are the configuration choices the bill follows, as config holds
// them (OptionsOf).
type Options struct {
	Name string
	// API is Prices.APIHTTP (api.type http) or Prices.APIRest.
	API Price
	// Tracing is config's tracing: off, sampled or all.
	Tracing string
	// SystemLog is functions.systemLogLevel: WARN drops the platform lines.
	SystemLog string
	// IngestMB and DeliverMB are functions.ingestMemoryMB and deliverMemoryMB.
	IngestMB, DeliverMB float64
	// Archive is archive.days above 0.
	Archive bool
	// PITR is dedupe.pointInTimeRecovery.
	PITR bool
	// DetailedMetrics is api.detailedMetrics: five metrics per source route.
	DetailedMetrics bool
	// CustomerKey is whether the stack makes its KMS key (topicKey
	// "customer", or an alarm e-mail); requests are billed either way.
	CustomerKey bool
	// WAF is api.waf.enabled (REST only).
	WAF bool
	// BatchWindow is each destination's batchWindowSeconds (or, on a
	// batched lane, batch.windowSeconds).
	BatchWindow float64
	// BatchEvents is each destination's batch.maxEvents: a batched lane
	// sends the events of an invocation in one POST (batch.go); 0: one
	// POST per event.
	BatchEvents int
	// DedupeMode is dedupe.mode: lease (two writes a delivery) or check (a
	// read and a write).
	DedupeMode string
	// Dashboard is metrics.dashboard, LaneDimensions metrics.laneDimensions.
	Dashboard, LaneDimensions bool
	// AppLog is functions.logLevel: INFO writes a line per accepted
	// request and per delivered attempt, WARN only the others'.
	AppLog string
	// TimeIndex is dedupe.timeIndex: the records' time index, a write per
	// record and its entry kept (TimeIndexPerDelivery).
	TimeIndex bool
}

// OptionsOf reads the options of a configuration.
func OptionsOf(cfg *config.Config) Options {
	o := Options{
		API: Prices.APIHTTP, Tracing: cfg.TracingMode(), SystemLog: cfg.Functions.SystemLog(),
		IngestMB: float64(cfg.Functions.IngestMemory()), DeliverMB: float64(cfg.Functions.DeliverMemory()),
		Archive: cfg.Archive.Enabled(), PITR: cfg.Dedupe.PITR(), WAF: cfg.API.WAF.Enabled,
		DetailedMetrics: cfg.API.Detailed(), CustomerKey: cfg.CustomerKey(), DedupeMode: cfg.DedupeMode(),
		Dashboard: cfg.Metrics.Dashboards(), LaneDimensions: cfg.Metrics.PerLane(), AppLog: cfg.Functions.AppLog(),
		TimeIndex: cfg.Dedupe.Indexed(),
	}
	if cfg.API.Kind() == config.APITypeREST {
		o.API = Prices.APIRest
	}
	if len(cfg.Destinations) > 0 {
		d := cfg.Destinations[0]
		o.BatchWindow = d.BatchWindow().Seconds()
		if b, ok := d.Batching(); ok {
			o.BatchEvents = b.MaxEvents
		}
	}
	return o
}

// Defaults are the options of a configuration that sets none of them.
func Defaults() Options {
	o := OptionsOf(Reference(1))
	o.Name = "defaults"
	return o
}

// Cheapest keeps every guarantee given to subscribers (signed, at least
// once, the same webhook-id for every copy, copies one after another
// refused for the record's life, 410 final, dead letters) and every alarm,
// and drops what is optional: the archive (replay of delivered events),
// the record table's point-in-time recovery, the customer managed topic
// key, the dashboards, the per-lane metric dimensions, the records' time
// index (ops events and the console then scan the table) and the lines of
// what went well (functions.logLevel WARN: the records, ops status and the
// access log remain the trail); it keeps the
// record with dedupe.mode check (copies handled at the same moment can
// both be POSTed) and waits a second for batches to fill.
func Cheapest() Options {
	o := Defaults()
	o.Name = "cheapest with every guarantee"
	o.Archive, o.PITR, o.CustomerKey = false, false, false
	o.BatchWindow = 1
	o.DedupeMode = config.DedupeCheck
	o.Dashboard, o.LaneDimensions = false, false
	o.AppLog = config.LogLevelWarn
	o.TimeIndex = false
	return o
}

// Richest turns every priced option on: the REST API with the WAF, every
// trace, the platform's lines, 256 MB functions, the archive.
func Richest() Options {
	o := Defaults()
	o.Name = "richest"
	o.API, o.WAF = Prices.APIRest, true
	o.Tracing, o.SystemLog = config.TracingAll, config.SystemLogInfo
	o.IngestMB, o.DeliverMB = 256, 256
	return o
}

// chunks64 is how many 64 KB chunks SNS, SQS and EventBridge bill a message of
// the body's size as (attributes add well under a kilobyte).
func chunks64(bodyKB float64) float64 { return math.Ceil((bodyKB + 1) / 64) }

// billedMs is a function's billed duration: its CPU time stretched by the
// CPU share its memory buys, plus the time it waits, rounded up to the
// millisecond.
func billedMs(memoryMB, cpuMs, waitMs float64) float64 {
	share := memoryMB / Assumed.FullCPUMemoryMB.Value
	return math.Ceil(cpuMs/share + waitMs)
}

// IngestMs is the ingest function's billed duration per request.
func IngestMs(sc Scenario, o Options) float64 {
	cpu := Assumed.IngestCPUSmall.Value
	if sc.large() {
		cpu = Assumed.IngestCPULarge.Value
	}
	return billedMs(o.IngestMB, cpu, Assumed.SNSPublishMs.Value)
}

// Reused is whether a deliver function finds its connection to the
// subscriber open: when the lane's messages come at least ReuseRate a
// second (idle connections close after seconds at most subscribers).
func Reused(sc Scenario) bool { return sc.rate() >= Assumed.ReuseRate.Value }

// deliverCPU is one delivery's CPU: HTTPS on a new connection or a kept one.
func deliverCPU(sc Scenario) float64 {
	cpu := Assumed.DeliverCPUFresh.Value
	if Reused(sc) {
		cpu = Assumed.DeliverCPUReused.Value
	}
	if sc.large() {
		cpu += (sc.BodyKB - 1) * Assumed.DeliverCPUPerKB.Value
	}
	return cpu
}

// Batch is the messages per invocation: what arrives for one of the
// mapping's pollers while it waits (the window, or at least one
// invocation's time), between 1 and the batch size (batch.maxEvents on a
// batched lane).
func Batch(sc Scenario, o Options) float64 {
	a := Assumed
	size := float64(config.DefaultBatchSize)
	if o.BatchEvents > 0 {
		size = float64(o.BatchEvents)
	}
	wait := math.Max(o.BatchWindow, (2*a.DynamoMs.Value+a.SubscriberMs.Value)/1000)
	return math.Max(1, math.Min(size, math.Floor(sc.rate()*wait/a.Pollers.Value)))
}

// DeliverMs is the deliver function's billed duration per invocation of a
// batch: the messages' CPU, and one claim, POST and record waited for
// (the batch's messages are delivered at once; a batched lane's in one
// POST).
func DeliverMs(sc Scenario, o Options) float64 {
	return billedMs(o.DeliverMB, invocationCPU(sc, o), invocationWaitMs(sc, o, Assumed.SubscriberMs.Value))
}

const (
	gb      = 1 << 30
	million = 1e6
)

// traces is how many traces X-Ray records of a service receiving n
// requests a month under the default sampling rule.
func traces(n float64) float64 {
	reservoir := Assumed.TraceReservoir.Value * Assumed.MonthSeconds.Value
	return math.Min(n, reservoir) + Assumed.TraceRate.Value*math.Max(0, n-reservoir)
}

// sampledShare is the share of ingest requests traced under the tracing
// mode; with "sampled" the deliver functions trace the same share.
func sampledShare(sc Scenario, tracing string) float64 {
	switch tracing {
	case config.TracingAll:
		return 1
	case config.TracingSampled:
		return traces(sc.Events) / sc.Events
	}
	return 0
}

func b2f(v bool) float64 { return float64(b(v)) }

func gbs(mb float64) float64 { return mb / 1024 }

// appLogBytes is a function's own line for an accepted request or a
// delivered attempt: written at INFO, not at WARN (the page's events are
// all accepted and delivered at the first attempt).
func appLogBytes(o Options, line float64) float64 {
	if o.AppLog == config.LogLevelWarn {
		return 0
	}
	return line
}

// platformBytes is the platform's lines per invocation at the system log
// level (none at WARN).
func platformBytes(o Options) float64 {
	if o.SystemLog == config.SystemLogWarn {
		return 0
	}
	return Assumed.PlatformLogBytes.Value
}

// ingestLines are the ingest side's line items, which every alternative
// below keeps (a provider's signature must be checked somewhere).
func ingestLines(sc Scenario, o Options) []Line {
	n := sc.Events
	p, a := Prices, Assumed
	access := a.AccessLogBytes.Value
	if o.API == p.APIRest {
		access = a.RESTAccessLogBytes.Value
	}
	logs := n * (appLogBytes(o, a.IngestLogBytes.Value) + a.IngestEMFBytes.Value + access + platformBytes(o))
	lines := []Line{
		{"API Gateway (" + apiName(o.API) + ")", n / million * o.API.USD},
		{"Lambda ingest: requests and GB-s", n/million*p.LambdaRequest.USD + n*IngestMs(sc, o)/1000*gbs(o.IngestMB)*p.LambdaGBSecond.USD},
		{"CloudWatch Logs: ingest lines and access log", logs / gb * p.LogsIngest.USD},
		{"X-Ray: ingest traces", n * sampledShare(sc, o.Tracing) / million * p.XRayTrace.USD},
	}
	if o.WAF {
		lines = append(lines, Line{"WAF requests", n / million * p.WAFRequests.USD})
	}
	return lines
}

func apiName(api Price) string {
	if api == Prices.APIHTTP {
		return "HTTP API"
	}
	return "REST API"
}

// Variable is Hookfan's cost of a scenario's events, line by line, under
// the options given.
func Variable(sc Scenario, o Options) []Line {
	p, a := Prices, Assumed
	n, d := sc.Events, float64(sc.Destinations)
	deliveries := n * d
	batch := Batch(sc, o)
	invocations := deliveries / batch
	record := sc.BodyKB*1024*a.EscapeFactor.Value + a.EnvelopeBytes.Value
	firehoseBilled := math.Ceil(record/(5*1024)) * 5 * 1024
	lines := ingestLines(sc, o)
	recordItem, recordPerDelivery := recordCalls(o)
	lines = append(lines,
		Line{"SNS publishes", n * chunks64(sc.BodyKB) / million * p.SNSPublish.USD},
		// Per delivery: SNS's SendMessage; per batch the mapping's
		// ReceiveMessage and DeleteMessageBatch (of up to ten messages
		// each); ChangeMessageVisibility only on failures.
		Line{"SQS requests", sqsRequests(sc, deliveries, batch) / million * p.SQSRequest.USD},
		Line{"Lambda deliver: requests and GB-s", invocations/million*p.LambdaRequest.USD + invocations*DeliverMs(sc, o)/1000*gbs(o.DeliverMB)*p.LambdaGBSecond.USD},
		Line{recordItem, deliveries * recordPerDelivery},
		Line{"DynamoDB: records kept (and PITR)", deliveries * (a.RecordBytes.Value + batchRecordBytes(o) + a.ItemOverheadBytes.Value) / gb * (p.DynamoStorage.USD + b2f(o.PITR)*p.PITR.USD) * a.RecordDays.Value / 30},
	)
	if o.TimeIndex {
		lines = append(lines, Line{TimeIndexItem, TimeIndexPerDelivery() * deliveries})
	}
	if o.Archive {
		lines = append(lines,
			Line{"Firehose archive (5 KB steps)", n * firehoseBilled / gb * p.Firehose.USD},
			Line{"S3 archive storage", n * record / a.ArchiveCompression.Value / gb * p.S3Storage.USD * a.ArchiveDays.Value / 30},
		)
	}
	lines = append(lines,
		Line{"CloudWatch Logs: deliver lines", (deliveries*(appLogBytes(o, a.DeliverLogBytes.Value+batchLogBytes(o))+a.DeliverEMFBytes.Value) + invocations*platformBytes(o)) / gb * p.LogsIngest.USD},
		Line{"X-Ray: deliver traces", invocations * sampledShare(sc, o.Tracing) / million * p.XRayTrace.USD},
		Line{"Data transfer out to subscribers", bytesOut(sc, o, deliveries) / gb * p.DataOut.USD},
	)
	return lines
}

// TimeIndexItem is the time index's line, present only with it.
const TimeIndexItem = "DynamoDB: time index (a write per record, kept)"

// TimeIndexPerDelivery is what the records' time index (ops events, the
// console) costs a delivery: its entry's one write, at the record's first
// attempt, and the entry kept as long as the record (PITR does not back
// up indexes).
func TimeIndexPerDelivery() float64 {
	return Prices.DynamoWrite.USD/million + (Assumed.IndexEntryBytes.Value+Assumed.ItemOverheadBytes.Value)/gb*Prices.DynamoStorage.USD*Assumed.RecordDays.Value/30
}

// sqsRequests are the SQS requests of deliveries in invocations of batch
// messages each: SNS's send of each, and the mapping's receives and
// deletes, ten messages a call at most, each call billed per 64 KB chunk.
func sqsRequests(sc Scenario, deliveries, batch float64) float64 {
	invocations := deliveries / batch
	calls := math.Ceil(batch / config.MaxBatchSize)
	return deliveries*chunks64(sc.BodyKB) + 2*invocations*calls*chunks64(sc.BodyKB*math.Min(batch, config.MaxBatchSize))
}

// bytesOut is what the deliveries send to subscribers: each body with its
// request's overhead, or on a batched lane each body in the envelope,
// with one request's overhead per POST.
func bytesOut(sc Scenario, o Options, deliveries float64) float64 {
	body, overhead := sc.BodyKB*1024, Assumed.RequestOverheadBytes.Value
	if o.BatchEvents == 0 {
		return deliveries * (body + overhead)
	}
	return deliveries*(body+BatchAssumed.ItemBytes.Value) + deliveries/Batch(sc, o)*(overhead+BatchAssumed.EnvelopeBytes.Value)
}

// Floor is what no configuration of this architecture avoids: one API
// request (the HTTP API's price), one ingest invocation and one publish
// per event; per delivery the SQS send, the batch's receive and delete,
// its share of one deliver invocation, one DynamoDB write and the bytes
// out. The batch is the scenario's under the options given.
func Floor(sc Scenario, o Options) []Line {
	p := Prices
	n, d := sc.Events, float64(sc.Destinations)
	deliveries := n * d
	batch := Batch(sc, o)
	invocations := deliveries / batch
	return []Line{
		{"API request", n / million * p.APIHTTP.USD},
		{"ingest invocation", n / million * p.LambdaRequest.USD},
		{"SNS publish", n * chunks64(sc.BodyKB) / million * p.SNSPublish.USD},
		{"SQS send, receive, delete", sqsRequests(sc, deliveries, batch) / million * p.SQSRequest.USD},
		{"deliver invocation", invocations / million * p.LambdaRequest.USD},
		{"DynamoDB write", deliveries / million * p.DynamoWrite.USD},
		{"data out", bytesOut(sc, o, deliveries) / gb * p.DataOut.USD},
	}
}

// PerMillion is a total per million events.
func PerMillion(sc Scenario, lines []Line) float64 { return Sum(lines) / (sc.Events / million) }

// ReplayProtectionPerMillion is what replay protection adds per million
// accepted requests of a source that has it (GitHub, Shopify, hmac,
// token): two writes each, and an item kept for the default 7-day window.
func ReplayProtectionPerMillion() float64 {
	writes := Assumed.ReplayWrites.Value * Prices.DynamoWrite.USD
	storage := million * (Assumed.ReplayRecordBytes.Value + Assumed.ItemOverheadBytes.Value) / gb * (Prices.DynamoStorage.USD + Prices.PITR.USD) * 7 / 30
	return writes + storage
}

// FreeDashboards are the dashboards CloudWatch does not bill, per account.
const FreeDashboards = 3

// Fixed is the monthly part of the reference deployment with n
// destinations, whatever its traffic, under the options given. The
// dashboards line assumes the account's three free dashboards are not
// spent elsewhere.
func Fixed(n int, o Options) []Line {
	p, a := Prices, Assumed
	ref := ReferenceWith(n, o)
	c := Resources(ref)
	s := len(ref.Sources)
	idleReceives := a.Pollers.Value * a.MonthSeconds.Value / a.LongPollSeconds.Value
	metrics := float64(s)*(a.IngestMetrics.Value+b2f(o.DetailedMetrics)*a.RouteMetrics.Value) + laneMetricsCount(n, o)
	lines := []Line{
		{"Secrets Manager: secrets", float64(c.BilledSecrets) * p.Secret.USD},
		{"CloudWatch: alarms", float64(c.AlarmMetrics) * p.Alarm.USD},
		{"CloudWatch: dashboards (3 of up to 50 metrics free)", float64(DashboardsBilled(ref)) * p.Dashboard.USD},
		{"CloudWatch: custom metrics", metrics * p.Metric.USD},
		{"KMS: the topic key, the data key (archive, large bodies) and their requests", float64(c.KMSKeys)*p.KMSKey.USD + a.KMSRequestsPerMonth.Value/1e4*p.KMSRequests.USD},
		{"SQS: the event source mappings' idle long polls", float64(c.EventSourceMappings) * idleReceives / million * p.SQSRequest.USD},
	}
	if o.Archive {
		lines = append(lines, Line{"S3: archive objects, one a minute", a.ArchiveObjects.Value / 1000 * p.S3Put.USD})
	}
	if o.WAF {
		lines = append(lines, Line{"WAF: web ACL and two rules", WAFFixed()})
	}
	return lines
}

// PauseFixed is what `pause` adds to a lane a month, whatever its
// traffic: its alarm, and a probe tick every minute (an invocation, its
// log lines, a read of the lane item).
func PauseFixed() float64 {
	p, a := Prices, Assumed
	ticks := a.MonthSeconds.Value / 60
	perTick := p.LambdaRequest.USD/million + a.TickMs.Value/1000*gbs(config.DefaultDeliverMemoryMB)*p.LambdaGBSecond.USD +
		a.TickLogBytes.Value/gb*p.LogsIngest.USD + p.DynamoRead.USD/million
	return p.Alarm.USD + ticks*perTick
}

// PausePerMillionBatches is what `pause` adds per million batches that
// made attempts: one write to the lane item each.
func PausePerMillionBatches() float64 { return Prices.DynamoWrite.USD }

// WAFFixed is what api.waf.enabled adds a month (no allow-listed source),
// and WAFPerMillion per million requests.
func WAFFixed() float64      { return Prices.WAFACL.USD + 2*Prices.WAFRule.USD }
func WAFPerMillion() float64 { return Prices.WAFRequests.USD }

// EventBridge is the same events through EventBridge API destinations on a
// classic event bus: the same ingest (the defaults' HTTP API and function),
// since a classic bus takes no webhook itself, publishing to the bus whose
// rules send each event to D API destinations. It signs nothing per Standard
// Webhooks, keeps no delivery record to look up by event, waits at most 5 s
// for an answer and retries for 24 h at most (docs/cost.md). The new Custom
// Event Bus, which receives webhooks itself, has no published price and is
// not modelled (docs/decisions.md, "What EventBridge does now").
func EventBridge(sc Scenario) []Line {
	p := Prices
	n, d := sc.Events, float64(sc.Destinations)
	lines := ingestLines(sc, Defaults())
	lines = append(lines,
		Line{"EventBridge: events published", n * chunks64(sc.BodyKB) / million * p.EventBridgeEvent.USD},
		Line{"EventBridge: API destination invocations", n * d / million * p.APIDestination.USD},
		Line{"Secrets Manager: source secret and one per connection", (1 + d*Assumed.EventBridgeSecretsPerDestination.Value) * p.Secret.USD},
		Line{"Data transfer out to subscribers", n * d * (sc.BodyKB*1024 + Assumed.RequestOverheadBytes.Value) / gb * p.DataOut.USD},
	)
	return lines
}

// Svix is the same events sent through Svix's Professional plan, behind the
// same ingest (API Gateway and a function checking the provider's
// signature, then calling Svix).
func Svix(sc Scenario) []Line {
	p := Prices
	messages := sc.Events * Assumed.SvixEventsPerMessage.Value
	lines := ingestLines(sc, Defaults())
	lines = append(lines,
		Line{"Svix Professional", p.SvixPro.USD + math.Max(0, messages-50000)*p.SvixMessage.USD},
		Line{"Secrets Manager: the source secret", p.Secret.USD},
	)
	return lines
}

// Sum adds lines up.
func Sum(lines []Line) float64 {
	t := 0.0
	for _, l := range lines {
		t += l.USD
	}
	return t
}

// Scenarios are the page's columns: a million and a hundred million
// events of 1 KB a month to 1, 2 and 5 destinations, and a million of
// 16 KB to 5.
func Scenarios() []Scenario {
	var out []Scenario
	for _, n := range []float64{million, 100 * million} {
		for _, d := range []int{1, 2, 5} {
			out = append(out, Scenario{Events: n, BodyKB: 1, Destinations: d})
		}
	}
	return append(out, Scenario{Events: million, BodyKB: 16, Destinations: 5})
}

// PerExtraDestination is what one more destination adds per million
// events: the 2-destination total less the 1-destination one.
func PerExtraDestination(events, bodyKB float64, o Options) float64 {
	one := Scenario{Events: events, BodyKB: bodyKB, Destinations: 1}
	two := Scenario{Events: events, BodyKB: bodyKB, Destinations: 2}
	return PerMillion(two, Variable(two, o)) - PerMillion(one, Variable(one, o))
}

// PricedTypes are the CloudFormation resource types a deployment holds,
// each with the line of this model that prices it or why it costs nothing;
// a stack test fails on a type the default deployment holds that is not
// here.
var PricedTypes = map[string]string{
	"AWS::ApiGateway::RestApi":             "API Gateway (REST API), per request; api.type rest",
	"AWS::ApiGateway::Stage":               "no charge of its own; its access log is a CloudWatch Logs line, its tracing an X-Ray line",
	"AWS::ApiGateway::Resource":            "no charge (part of the REST API)",
	"AWS::ApiGateway::Method":              "no charge (part of the REST API)",
	"AWS::ApiGateway::Deployment":          "no charge (part of the REST API)",
	"AWS::ApiGateway::Account":             "no charge (the account's CloudWatch role for access logs)",
	"AWS::ApiGateway::RequestValidator":    "no charge (part of the REST API)",
	"AWS::ApiGateway::DomainName":          "no charge (custom domains are free; the certificate is ACM's, free)",
	"AWS::ApiGateway::BasePathMapping":     "no charge",
	"AWS::ApiGatewayV2::Api":               "API Gateway (HTTP API), per request",
	"AWS::ApiGatewayV2::Integration":       "no charge (part of the HTTP API)",
	"AWS::ApiGatewayV2::Route":             "no charge (part of the HTTP API)",
	"AWS::ApiGatewayV2::Stage":             "no charge of its own; its access log is a CloudWatch Logs line, detailed metrics the custom metrics line",
	"AWS::ApiGatewayV2::DomainName":        "no charge",
	"AWS::ApiGatewayV2::ApiMapping":        "no charge",
	"AWS::CertificateManager::Certificate": "no charge (public ACM certificates are free)",
	"AWS::Route53::RecordSet":              "no charge beyond the hosted zone the user owns (alias queries to API Gateway are free)",
	"AWS::CloudFormation::Stack":           "no charge (nested stacks of AWS resources)",
	"AWS::CloudWatch::Alarm":               "CloudWatch: alarms",
	"AWS::CloudWatch::Dashboard":           "CloudWatch: dashboards (3 free per account)",
	"AWS::DynamoDB::Table":                 "DynamoDB: writes, reads, records kept (and PITR)",
	"AWS::IAM::Policy":                     "no charge",
	"AWS::IAM::Role":                       "no charge",
	"AWS::KMS::Key":                        "KMS: the topic key and its requests",
	"AWS::KinesisFirehose::DeliveryStream": "Firehose archive (5 KB steps)",
	"AWS::Lambda::EventSourceMapping":      "SQS requests (its receives and deletes) and the idle long polls",
	"AWS::Lambda::Function":                "Lambda: requests and GB-s; the custom-resource provider runs at deployments only",
	"AWS::Lambda::Permission":              "no charge",
	"AWS::Logs::LogGroup":                  "CloudWatch Logs: ingest lines, access log, deliver lines (ingestion; storage not modelled)",
	"AWS::Logs::LogStream":                 "no charge (the archive stream's error log stream)",
	"AWS::Logs::MetricFilter":              "CloudWatch: custom metrics (the throttle count it publishes)",
	"AWS::Logs::QueryDefinition":           "no charge (saved Logs Insights queries; a query run is billed per GB scanned, by whoever runs it)",
	"AWS::S3::Bucket":                      "S3 archive storage and objects; large payloads per PUT",
	"AWS::S3::BucketPolicy":                "no charge",
	"AWS::SNS::Subscription":               "no charge (SNS to SQS deliveries are free; the Firehose subscription: not modelled, see the page)",
	"AWS::SNS::Topic":                      "SNS publishes",
	"AWS::SNS::TopicPolicy":                "no charge",
	"AWS::SQS::Queue":                      "SQS requests",
	"AWS::SQS::QueuePolicy":                "no charge",
	"AWS::SSM::Parameter":                  "no charge (standard parameters, the stack's index)",
	"AWS::SecretsManager::Secret":          "Secrets Manager: secrets",
	"AWS::Events::Rule":                    "no charge (scheduled rules); the probe ticks it starts are pause's line",
	"AWS::Scheduler::Schedule":             "EventBridge Scheduler: invocations (reconciliation's lines)",
	"AWS::Lambda::EventInvokeConfig":       "no charge (the retries of an asynchronous invocation: off)",
	"AWS::WAFv2::WebACL":                   "api.waf.enabled's line (web ACL, rules, requests)",
	"AWS::WAFv2::WebACLAssociation":        "no charge",
	"AWS::WAFv2::IPSet":                    "no charge (its rule is priced)",
	"Custom::AWS":                          "no charge (runs at deployments: creates missing source secrets)",
}
