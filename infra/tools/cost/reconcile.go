package cost

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/secrets"
)

// Reconciliation (a source's reconcile section): a scheduled function per
// source that runs every `every`, lists what the provider sent since its
// watermark less an overlap, checks each listed event against the delivery
// records of the destinations it matches, and brings in what has no trace.
// A run costs its schedule's invocation, the function's request and
// wall time (mostly waiting for the provider's pages), the record reads,
// the watermark's read and write, a read of the provider key whenever
// the secrets cache has expired, and its log lines; a month adds the
// provider key's secret, the run's metrics and its alarms. Nothing is
// paid per ingested event: presence is decided from the records delivery
// writes anyway.

// ReconcilePrices are what reconciliation adds to Prices.
var ReconcilePrices = struct {
	SchedulerInvocation Price
	SecretCalls         Price
}{
	SchedulerInvocation: Price{1.00, "per million scheduled invocations (the first 14 million a month free)", "Amazon EventBridge pricing (EventBridge Scheduler)"},
	SecretCalls:         Price{SecretCallsUSDPer10k, "per 10,000 API calls", "AWS Secrets Manager pricing"},
}

// ReconcileFigures are the figures a run is priced with.
var ReconcileFigures = struct {
	PageEvents       Figure
	ProviderPageMs   Figure
	ReconcileCPU     Figure
	BatchReadKeys    Figure
	ReadUnitsPerKey  Figure
	WatermarkCalls   Figure
	RunLogBytes      Figure
	ReconcileMetrics Figure
	ReconcileAlarms  Figure
	ReconcileMB      Figure
}{
	PageEvents:       Figure{100, "events a page", "Stripe's List events (limit at most 100) and GitHub's List deliveries (per_page at most 100)"},
	ProviderPageMs:   Figure{400, "ms a page", "assumed: one page of the provider's API from us-east-1, waited for"},
	ReconcileCPU:     Figure{0.05, "ms CPU per listed event", "estimated: decoding a listed event and its record keys"},
	BatchReadKeys:    Figure{100, "keys a BatchGetItem", "Amazon DynamoDB: BatchGetItem reads at most 100 items a call"},
	ReadUnitsPerKey:  Figure{0.5, "read request units per record looked up", "Amazon DynamoDB: an eventually consistent read (BatchGetItem's, as shared/reconcile reads) of an item up to 4 KB is half a read request unit (a record is under 1 KB)"},
	WatermarkCalls:   Figure{1, "read and 1 write a run", "the run's watermark: a consistent GetItem at the start (1 read unit), a conditional UpdateItem when the run ends (shared/reconcile)"},
	RunLogBytes:      Figure{1000, "bytes a run", "measured: a Stripe run's summary line and its EMF line (six metrics) with the requestId Lambda's JSON format adds, 930 bytes with one-digit counts (TestBuiltReconcileFunctionUnderRIE holds it); no platform lines at WARN, and a line more per event brought in"},
	ReconcileMetrics: Figure{6, "metrics per reconciled source", "ReconcileListed, ReconcileMissing, ReconcileBroughtIn, ReconcileOutOfRetention, ReconcileSkipped and ReconcileStopped by Source, a point each per run (shared/reconcile)"},
	ReconcileAlarms:  Figure{4, "alarms per reconciled source", "MissingAlarm, SkippedAlarm, StoppedAlarm and ErrorsAlarm (docs/operations.md)"},
	ReconcileMB:      Figure{256, "MB", "the reconcile function's memory (stack.ReconcileMemoryMB: room for one answer of up to 16 MB being decoded)"},
}

// ReconcileScenario is one reconciled source's month: its events, the
// destinations each matches, and its schedule.
type ReconcileScenario struct {
	Events       float64
	Destinations int
	Every        time.Duration
}

// Runs is the runs a month.
func (r ReconcileScenario) Runs() float64 { return Assumed.MonthSeconds.Value / r.Every.Seconds() }

// Listed is the events one run lists: those of its window (every and the
// overlap).
func (r ReconcileScenario) Listed() float64 {
	return r.Events * (r.Every + reconcile.Overlap).Seconds() / Assumed.MonthSeconds.Value
}

// Pages is the provider pages one run reads: at least one.
func (r ReconcileScenario) Pages() float64 {
	return math.Max(1, math.Ceil(r.Listed()/ReconcileFigures.PageEvents.Value))
}

// Lookups is the records one run looks up: each listed event's, one per
// destination it matches.
func (r ReconcileScenario) Lookups() float64 { return r.Listed() * float64(r.Destinations) }

// RunMs is one run's billed duration: the pages and the record reads
// waited for (BatchGetItem of up to 100 keys), the watermark's read and
// write, and the CPU of each listed event at the function's share of a
// vCPU.
func (r ReconcileScenario) RunMs() float64 {
	f := ReconcileFigures
	batches := math.Ceil(r.Lookups() / f.BatchReadKeys.Value)
	wait := r.Pages()*f.ProviderPageMs.Value + (batches+2*f.WatermarkCalls.Value)*Assumed.DynamoMs.Value
	return billedMs(f.ReconcileMB.Value, r.Listed()*f.ReconcileCPU.Value, wait)
}

// SecretReads is the provider key's reads a month: once a run, or once a
// cache TTL when runs come more often.
func (r ReconcileScenario) SecretReads() float64 {
	return r.Runs() * math.Min(1, r.Every.Seconds()/secrets.DefaultTTL.Seconds())
}

// ReconcileLines are a reconciled source's month, line by line.
func ReconcileLines(r ReconcileScenario) []Line {
	p, f := Prices, ReconcileFigures
	runs := r.Runs()
	reads := runs * (r.Lookups()*f.ReadUnitsPerKey.Value + f.WatermarkCalls.Value)
	return []Line{
		{"EventBridge Scheduler: invocations", runs / million * ReconcilePrices.SchedulerInvocation.USD},
		{"Lambda reconcile: requests and GB-s", runs/million*p.LambdaRequest.USD + runs*r.RunMs()/1000*gbs(f.ReconcileMB.Value)*p.LambdaGBSecond.USD},
		{"DynamoDB: record reads", reads / million * p.DynamoRead.USD},
		{"DynamoDB: watermark writes", runs * f.WatermarkCalls.Value / million * p.DynamoWrite.USD},
		{"Secrets Manager: the provider key and its reads", p.Secret.USD + r.SecretReads()/1e4*ReconcilePrices.SecretCalls.USD},
		{"CloudWatch Logs: run lines", runs * f.RunLogBytes.Value / gb * p.LogsIngest.USD},
		{"CloudWatch: metrics", f.ReconcileMetrics.Value * p.Metric.USD},
		{"CloudWatch: alarms", f.ReconcileAlarms.Value * p.Alarm.USD},
	}
}

// ReconcileScenarios are the page's columns: a 15-minute schedule at ten
// thousand and a million events a month, to one and to five destinations.
func ReconcileScenarios() []ReconcileScenario {
	var out []ReconcileScenario
	for _, n := range []float64{1e4, million} {
		for _, d := range []int{1, 5} {
			out = append(out, ReconcileScenario{Events: n, Destinations: d, Every: 15 * time.Minute})
		}
	}
	return out
}

// renderReconcile writes the page's section on reconciliation.
func renderReconcile(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	scs := ReconcileScenarios()
	w("\n### Reconciliation\n\n")
	w("A month of one source with `reconcile` on a %s schedule: %s runs, each listing its window (`every` and the %s overlap, ending %d minutes before the run) of the provider's events, a page of up to %s at a time, and looking up each one's delivery records, one per destination it matches, in one `BatchGetItem` per page. Nothing is paid per ingested event: presence is read from the records delivery writes anyway.\n\n",
		minutes(scs[0].Every), num(scs[0].Runs()), minutes(reconcile.Overlap), int(reconcile.Settle.Minutes()), num(ReconcileFigures.PageEvents.Value))
	w("| line item |")
	for _, sc := range scs {
		w(" %s × %d |", eventsName(sc.Events), sc.Destinations)
	}
	w("\n|---|")
	for range scs {
		w("---:|")
	}
	w("\n")
	rows := map[string][]float64{}
	var order []string
	for _, sc := range scs {
		for _, l := range ReconcileLines(sc) {
			if _, ok := rows[l.Item]; !ok {
				order = append(order, l.Item)
			}
			rows[l.Item] = append(rows[l.Item], l.USD)
		}
	}
	for _, item := range order {
		w("| %s |", item)
		for _, v := range rows[item] {
			w(" %s |", usd(v))
		}
		w("\n")
	}
	w("| **a month** |")
	for _, sc := range scs {
		w(" **%s** |", usd(Sum(ReconcileLines(sc))))
	}
	w("\n| listed a run, pages, record lookups |")
	for _, sc := range scs {
		w(" %s, %s, %s |", num(math.Round(sc.Listed()*10)/10), num(sc.Pages()), num(math.Round(sc.Lookups()*10)/10))
	}
	w("\n| billed ms a run |")
	for _, sc := range scs {
		w(" %s |", num(sc.RunMs()))
	}
	w("\n\n")
	hourly := ReconcileScenario{Events: million, Destinations: 5, Every: time.Hour}
	fast := ReconcileScenario{Events: million, Destinations: 5, Every: 5 * time.Minute}
	w("The metrics and alarms are most of it, whatever the traffic; the record reads grow with the events and the destinations they match, and a shorter `every` adds only runs (each reads its overlap again): at a million events to five destinations, `every` `1h` costs %s a month and `5m` %s. EventBridge Scheduler's first 14 million invocations a month are free (not counted above). The provider's API is free at Stripe and GitHub, within their rate limits. What a run brings in is then an ordinary event: its publish and deliveries are priced per event above (a redelivered GitHub event also passes the API and ingest again).\n\n",
		usd(Sum(ReconcileLines(hourly))), usd(Sum(ReconcileLines(fast))))
	writePrices(w, ReconcilePrices)
	w("\n")
	writeFigures(w, ReconcileFigures)
}

// minutes writes a duration of whole minutes as "15-minute".
func minutes(d time.Duration) string { return fmt.Sprintf("%d-minute", int(d.Minutes())) }

// eventsName is a month's events as the page's columns name them.
func eventsName(n float64) string {
	if n >= million {
		return num(n/million) + " M"
	}
	return num(n/1000) + " k"
}
