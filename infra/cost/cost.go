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

// Assumed are the model's figures.
var Assumed = struct {
	MemoryGB                         Figure
	FullCPUMemoryMB                  Figure
	IngestCPUSmall, IngestCPULarge   Figure
	DeliverCPUSmall, DeliverCPULarge Figure
	SNSPublishMs, DynamoMs           Figure
	SubscriberMs                     Figure
	Batch                            Figure
	IngestLogBytes, IngestEMFBytes   Figure
	AccessLogBytes, PlatformLogBytes Figure
	DeliverLogBytes, DeliverEMFBytes Figure
	RecordBytes, RecordDays          Figure
	EnvelopeBytes, EscapeFactor      Figure
	ArchiveCompression, ArchiveDays  Figure
	ArchiveObjects                   Figure
	RequestOverheadBytes             Figure
	Pollers, LongPollSeconds         Figure
	TraceReservoir, TraceRate        Figure
	MonthSeconds                     Figure
	IngestMetrics, RouteMetrics      Figure
	LaneMetrics                      Figure
	KMSRequestsPerMonth              Figure
	ReplayWrites, ReplayRecordBytes  Figure
	SvixEventsPerMessage             Figure
	TickMs, TickLogBytes             Figure
	EventBridgeSecretsPerDestination Figure
}{
	MemoryGB:                         Figure{0.25, "GB", "the stack: both functions have 256 MB (stack.DefaultMemoryMB)"},
	FullCPUMemoryMB:                  Figure{1769, "MB", "AWS Lambda: a function gets one vCPU at 1,769 MB, CPU in proportion below"},
	IngestCPUSmall:                   Figure{0.022, "ms CPU", "measured: BenchmarkIngest, 1 KiB base64 body (the deployed path), upper end of 14–22 µs"},
	IngestCPULarge:                   Figure{0.136, "ms CPU", "measured: BenchmarkIngest, 16 KiB base64 body, upper end of 79–136 µs"},
	DeliverCPUSmall:                  Figure{0.173, "ms CPU", "measured: BenchmarkDeliveryCPU/loopback (parse, sign, claim, POST, record, log, metrics; the subscriber in the same process), upper end of 133–173 µs"},
	DeliverCPULarge:                  Figure{0.196, "ms CPU", "estimated: the 1 KiB figure plus signing and copying 15 KiB more (about 1.5 µs a KiB)"},
	SNSPublishMs:                     Figure{20, "ms", "assumed: one in-region SNS Publish, waited for before the 202"},
	DynamoMs:                         Figure{5, "ms", "assumed: one in-region DynamoDB UpdateItem"},
	SubscriberMs:                     Figure{100, "ms", "assumed: the subscriber answers in 100 ms (the figure BenchmarkBatch uses)"},
	Batch:                            Figure{1, "messages per invocation", "assumed: at a million events a month (0.4 a second) the event source mapping finds one message per receive"},
	IngestLogBytes:                   Figure{383, "bytes", "measured: the ingest function's line for an accepted Stripe event (333 bytes) plus the requestId Lambda adds"},
	IngestEMFBytes:                   Figure{199, "bytes", "measured: the EMF line of an accepted event"},
	AccessLogBytes:                   Figure{530, "bytes", "estimated: the stage's access log format filled with typical values"},
	PlatformLogBytes:                 Figure{650, "bytes", "estimated: Lambda's platform.start and platform.report lines (JSON log format, tracing on) per invocation"},
	DeliverLogBytes:                  Figure{350, "bytes", "measured: 240 bytes with test ids, plus a real event id, message id and requestId"},
	DeliverEMFBytes:                  Figure{403, "bytes", "measured: the EMF line of a delivered event (four metrics)"},
	RecordBytes:                      Figure{340, "bytes", "measured: TestRecordSizeIsBounded, a record delivered at its first attempt (one write unit per write)"},
	RecordDays:                       Figure{30, "days", "the config's dedupe.recordDays default"},
	EnvelopeBytes:                    Figure{1150, "bytes", "estimated: SNS's notification envelope around the body (ids, signature, URLs, five attributes)"},
	EscapeFactor:                     Figure{1.1, "×", "estimated: a JSON body grows by about a tenth when escaped into the envelope's Message string"},
	ArchiveCompression:               Figure{4, "×", "assumed: gzip on newline-delimited JSON envelopes"},
	ArchiveDays:                      Figure{30, "days", "the config's archive.days default"},
	ArchiveObjects:                   Figure{43200, "objects a month", "the stream's 60 s buffer: one object a minute while events flow (5 MiB objects only above about 2,000 KiB/s)"},
	RequestOverheadBytes:             Figure{700, "bytes", "estimated: request line, Hookfan's headers (signature included) and TLS framing of one delivery"},
	Pollers:                          Figure{5, "long polls at a time", "AWS Lambda (SQS scaling): five concurrent batches at low traffic; not fewer with MaximumConcurrency set, which every lane sets"},
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
	TickLogBytes:                     Figure{1100, "bytes", "estimated: a tick's platform lines, its log line and its EMF line"},
	EventBridgeSecretsPerDestination: Figure{1, "secret", "Amazon EventBridge: each connection keeps its credentials in a Secrets Manager secret"},
}

// Counts are the resources of a deployment that cost money or that the
// model relies on, each as the synthesized templates hold them.
type Counts struct {
	// Alarms: 4 per destination and 1 more per destination that pauses, 4
	// per source, 2 on the ingest function, 1 for the archive.
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
	// destination signing secrets (generated or named) and header secrets,
	// each name once.
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
}

// LanesPerDashboard mirrors stack.LanesPerDashboard (this package does not
// import the CDK); the stack test fails if they part.
const LanesPerDashboard = 40

// Resources counts what the stack creates for cfg.
func Resources(cfg *config.Config) Counts {
	d, s := len(cfg.Destinations), len(cfg.Sources)
	var c Counts
	archive, email, waf := cfg.Archive.Enabled(), cfg.Alarms.Email != "", cfg.API.WAF.Enabled
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
	pausing := 0
	for i, dst := range cfg.Destinations {
		if _, ok := dst.PauseRule(); ok {
			pausing++
		}
		if dst.SecretName == "" {
			c.GeneratedSecrets++
			secrets[fmt.Sprintf("generated:%d", i)] = true
		} else {
			secrets["destination:"+dst.SecretName] = true
		}
		for _, h := range dst.HeaderSecrets() {
			secrets["destination:"+h] = true
		}
	}
	c.BilledSecrets = len(secrets)
	c.Alarms = 4*d + pausing + 4*s + 2 + b(archive)
	c.AlarmMetrics = c.Alarms - s
	for _, src := range cfg.Sources {
		c.AlarmMetrics += len(ingest.ServerErrorCodes(src))
	}
	c.Rules = pausing
	c.Dashboards = 1 + max(0, d-1)/LanesPerDashboard
	// The topic key, and the data key of the archive and payload buckets.
	c.KMSKeys = 1 + b(archive || cfg.LargePayloads())
	// The ingest function's and the stage's access log, each lane's, the
	// archive stream's, and the secret-creating custom resource's.
	c.LogGroups = 2 + d + b(archive) + b(c.EnsuredSecrets > 0)
	c.Queues = 3*d + b(archive)
	c.Functions = 1 + d + b(c.EnsuredSecrets > 0)
	c.EventSourceMappings = d
	c.Subscriptions = d + b(archive) + b(email)
	c.Topics = 1 + b(email)
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
// filter (every event goes to each), the archive on, a REST API, no WAF,
// no alarm e-mail.
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

// chunks64 is how many 64 KB chunks SNS, SQS and EventBridge bill a message of
// the body's size as (attributes add well under a kilobyte).
func chunks64(bodyKB float64) float64 { return math.Ceil((bodyKB + 1) / 64) }

// billedMs is a function's billed duration: its CPU time stretched by the
// CPU share its memory buys, plus the time it waits, rounded up to the
// millisecond.
func billedMs(cpuMs, waitMs float64) float64 {
	share := Assumed.MemoryGB.Value * 1024 / Assumed.FullCPUMemoryMB.Value
	return math.Ceil(cpuMs/share + waitMs)
}

// IngestMs is the ingest function's billed duration per request.
func IngestMs(sc Scenario) float64 {
	cpu := Assumed.IngestCPUSmall.Value
	if sc.large() {
		cpu = Assumed.IngestCPULarge.Value
	}
	return billedMs(cpu, Assumed.SNSPublishMs.Value)
}

// DeliverMs is the deliver function's billed duration per invocation of one
// message: claim, POST, record.
func DeliverMs(sc Scenario) float64 {
	cpu := Assumed.DeliverCPUSmall.Value
	if sc.large() {
		cpu = Assumed.DeliverCPULarge.Value
	}
	return billedMs(cpu, 2*Assumed.DynamoMs.Value+Assumed.SubscriberMs.Value)
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

// ingestLines are the ingest side's line items, which every alternative
// below keeps (a provider's signature must be checked somewhere).
func ingestLines(sc Scenario, api Price) []Line {
	n := sc.Events
	p := Prices
	logs := n * (Assumed.IngestLogBytes.Value + Assumed.IngestEMFBytes.Value + Assumed.AccessLogBytes.Value + Assumed.PlatformLogBytes.Value)
	return []Line{
		{"API Gateway (" + apiName(api) + ")", n / million * api.USD},
		{"Lambda ingest: requests and GB-s", n/million*p.LambdaRequest.USD + n*IngestMs(sc)/1000*Assumed.MemoryGB.Value*p.LambdaGBSecond.USD},
		{"CloudWatch Logs: ingest lines and access log", logs / gb * p.LogsIngest.USD},
		{"X-Ray: ingest traces", traces(n) / million * p.XRayTrace.USD},
	}
}

func apiName(api Price) string {
	if api == Prices.APIHTTP {
		return "HTTP API"
	}
	return "REST API"
}

// Variable is Hookfan's cost of a scenario's events, line by line, with
// the API type given (Prices.APIRest or Prices.APIHTTP).
func Variable(sc Scenario, api Price) []Line {
	p, a := Prices, Assumed
	n, d := sc.Events, float64(sc.Destinations)
	deliveries := n * d
	invocations := deliveries / a.Batch.Value
	bodyBytes := sc.BodyKB * 1024
	record := bodyBytes*a.EscapeFactor.Value + a.EnvelopeBytes.Value
	firehoseBilled := math.Ceil(record/(5*1024)) * 5 * 1024
	lines := ingestLines(sc, api)
	lines = append(lines,
		Line{"SNS publishes", n * chunks64(sc.BodyKB) / million * p.SNSPublish.USD},
		// Per delivery: SNS's SendMessage, the mapping's ReceiveMessage and
		// DeleteMessageBatch per batch; ChangeMessageVisibility only on failures.
		Line{"SQS requests", (deliveries*chunks64(sc.BodyKB) + 2*invocations*chunks64(sc.BodyKB*a.Batch.Value)) / million * p.SQSRequest.USD},
		Line{"Lambda deliver: requests and GB-s", invocations/million*p.LambdaRequest.USD + invocations*DeliverMs(sc)/1000*a.MemoryGB.Value*p.LambdaGBSecond.USD},
		// Claim and finish: two writes of a record under 1 KB.
		Line{"DynamoDB: claim and finish writes", deliveries * 2 / million * p.DynamoWrite.USD},
		Line{"DynamoDB: records kept, with PITR", deliveries * a.RecordBytes.Value / gb * (p.DynamoStorage.USD + p.PITR.USD) * a.RecordDays.Value / 30},
		Line{"Firehose archive (5 KB steps)", n * firehoseBilled / gb * p.Firehose.USD},
		Line{"S3 archive storage", n * record / a.ArchiveCompression.Value / gb * p.S3Storage.USD * a.ArchiveDays.Value / 30},
		Line{"CloudWatch Logs: deliver lines", (deliveries*(a.DeliverLogBytes.Value+a.DeliverEMFBytes.Value) + invocations*a.PlatformLogBytes.Value) / gb * p.LogsIngest.USD},
		Line{"X-Ray: deliver traces", d * traces(n/a.Batch.Value) / million * p.XRayTrace.USD},
		Line{"Data transfer out to subscribers", deliveries * (bodyBytes + a.RequestOverheadBytes.Value) / gb * p.DataOut.USD},
	)
	return lines
}

// ReplayProtectionPerMillion is what replay protection adds per million
// accepted requests of a source that has it (GitHub, Shopify, hmac,
// token): two writes each, and an item kept for the default 7-day window.
func ReplayProtectionPerMillion() float64 {
	writes := Assumed.ReplayWrites.Value * Prices.DynamoWrite.USD
	storage := million * Assumed.ReplayRecordBytes.Value / gb * (Prices.DynamoStorage.USD + Prices.PITR.USD) * 7 / 30
	return writes + storage
}

// Fixed is the monthly part of the reference deployment with n
// destinations, whatever its traffic.
func Fixed(n int) []Line {
	p, a := Prices, Assumed
	c := Resources(Reference(n))
	s := len(Reference(n).Sources)
	idleReceives := a.Pollers.Value * a.MonthSeconds.Value / a.LongPollSeconds.Value
	metrics := float64(s)*(a.IngestMetrics.Value+a.RouteMetrics.Value) + float64(n)*a.LaneMetrics.Value
	return []Line{
		{"Secrets Manager: secrets", float64(c.BilledSecrets) * p.Secret.USD},
		{"CloudWatch: alarms", float64(c.AlarmMetrics) * p.Alarm.USD},
		{"CloudWatch: dashboards", float64(c.Dashboards) * p.Dashboard.USD},
		{"CloudWatch: custom metrics", metrics * p.Metric.USD},
		{"KMS: the topic key, the data key (archive, large bodies) and their requests", float64(c.KMSKeys)*p.KMSKey.USD + a.KMSRequestsPerMonth.Value/1e4*p.KMSRequests.USD},
		{"SQS: the event source mappings' idle long polls", float64(c.EventSourceMappings) * idleReceives / million * p.SQSRequest.USD},
		{"S3: archive objects, one a minute", a.ArchiveObjects.Value / 1000 * p.S3Put.USD},
	}
}

// PauseFixed is what `pause` adds to a lane a month, whatever its
// traffic: its alarm, and a probe tick every minute (an invocation, its
// trace, its log lines, a read of the lane item).
func PauseFixed() float64 {
	p, a := Prices, Assumed
	ticks := a.MonthSeconds.Value / 60
	perTick := p.LambdaRequest.USD/million + a.TickMs.Value/1000*a.MemoryGB.Value*p.LambdaGBSecond.USD +
		p.XRayTrace.USD/million + a.TickLogBytes.Value/gb*p.LogsIngest.USD + p.DynamoRead.USD/million
	return p.Alarm.USD + ticks*perTick
}

// PausePerMillionBatches is what `pause` adds per million batches that
// made attempts: one write to the lane item each.
func PausePerMillionBatches() float64 { return Prices.DynamoWrite.USD }

// WAFFixed is what api.waf.enabled adds a month (no allow-listed source),
// and WAFPerMillion per million requests.
func WAFFixed() float64      { return Prices.WAFACL.USD + 2*Prices.WAFRule.USD }
func WAFPerMillion() float64 { return Prices.WAFRequests.USD }

// EventBridge is the same events through EventBridge API destinations: the
// same ingest, publishing to an event bus whose rules send each event to D
// API destinations. It signs nothing per Standard Webhooks, keeps no
// delivery record and waits at most 5 s for an answer (docs/cost.md).
func EventBridge(sc Scenario) []Line {
	p := Prices
	n, d := sc.Events, float64(sc.Destinations)
	lines := ingestLines(sc, p.APIRest)
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
	lines := ingestLines(sc, p.APIRest)
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

// Scenarios are the page's columns: a million events of 1 KB and of 16 KB,
// to 1, 5 and 20 destinations.
func Scenarios() []Scenario {
	var out []Scenario
	for _, kb := range []float64{1, 16} {
		for _, d := range []int{1, 5, 20} {
			out = append(out, Scenario{Events: million, BodyKB: kb, Destinations: d})
		}
	}
	return out
}
