package cost

import (
	"math"
	"strconv"

	"github.com/hookfan/hookfan/shared/config"
)

// Batched lanes (batch: maxEvents, windowSeconds): the event source
// mapping hands an invocation up to maxEvents messages gathered for up to
// the window, and the function sends them in one signed POST. Per event
// the lane still pays what makes delivery exactly once: SNS's send to the
// queue, the claim and the record (two writes with the lease), the
// attempt's lines and the bytes of its body; per batch it pays the
// invocation, the receives and deletes (ten messages a call), one POST's
// connection and its request overhead, and one wait for the subscriber.
// What it costs in latency is the window: an event waits up to
// windowSeconds for its batch, and the subscriber's answer covers the
// whole batch.

// BatchAssumed are the figures only batched lanes use.
var BatchAssumed = struct {
	ItemBytes, EnvelopeBytes    Figure
	RecordBytes, LogBytes       Figure
	ClaimsAtOnce, RecordsAtOnce Figure
}{
	ItemBytes:     Figure{180, "bytes per event", "measured: what the batch envelope adds around the data of a Stripe event (its id, type, source, accepted time, content type and a comma: 173 bytes; TestBatchFiguresHoldTheEnvelope)"},
	EnvelopeBytes: Figure{60, "bytes per POST", "estimated: the envelope's own object and array, and the count header"},
	RecordBytes:   Figure{45, "bytes per event", "estimated: the record's batch attribute (the batch's webhook-id, 38 characters, and its name); a record stays within one write unit"},
	LogBytes:      Figure{50, "bytes per event", "estimated: the attempt line's batch field"},
	ClaimsAtOnce:  Figure{64, "claims at a time", "shared/delivery: a batched invocation claims its events 64 at a time"},
	RecordsAtOnce: Figure{64, "records at a time", "shared/delivery: a batch's records are written 64 at a time once its answer came (TestBatchRecordsWrittenAtOnce)"},
}

// invocationWaitMs is what one deliver invocation waits for: a claim and
// a record around a wait of waitMs (the subscriber's answer, a target's
// call), the batch's messages delivered at once; on a batched lane its
// claims ClaimsAtOnce at a time, one wait, and its records RecordsAtOnce
// at a time.
func invocationWaitMs(sc Scenario, o Options, waitMs float64) float64 {
	a, b := Assumed, BatchAssumed
	if o.BatchEvents == 0 {
		return 2*a.DynamoMs.Value + waitMs
	}
	n := Batch(sc, o)
	return (math.Ceil(n/b.ClaimsAtOnce.Value)+math.Ceil(n/b.RecordsAtOnce.Value))*a.DynamoMs.Value + waitMs
}

// batchRecordBytes and batchLogBytes are what a batched lane adds to each
// event's record and attempt line: the batch's id.
func batchRecordBytes(o Options) float64 {
	return b2f(o.BatchEvents > 0) * BatchAssumed.RecordBytes.Value
}
func batchLogBytes(o Options) float64 { return b2f(o.BatchEvents > 0) * BatchAssumed.LogBytes.Value }

// invocationCPU is the CPU of one deliver invocation: each message's
// delivery (deliverCPU), or on a batched lane each event's share of the
// work but the POST (a delivery on a kept connection bounds it from
// above: the batch's envelope adds little) and the one POST's new
// connection when the lane's POSTs come too seldom to find it open.
func invocationCPU(sc Scenario, o Options) float64 {
	n := Batch(sc, o)
	if o.BatchEvents == 0 {
		return deliverCPU(sc) * n
	}
	a := Assumed
	perEvent := a.DeliverCPUReused.Value
	if sc.large() {
		perEvent += (sc.BodyKB - 1) * a.DeliverCPUPerKB.Value
	}
	connection := 0.0
	if sc.rate()/n < a.ReuseRate.Value {
		connection = a.DeliverCPUFresh.Value - a.DeliverCPUReused.Value
	}
	return n*perEvent + connection
}

// BatchConfig is one batched lane the page prices.
type BatchConfig struct {
	MaxEvents     int
	WindowSeconds float64
}

// BatchConfigs are the page's rows: from a short window and small batches
// to a minute's.
var BatchConfigs = []BatchConfig{{10, 1}, {100, 5}, {100, 20}, {500, 60}}

// Batched is o with every destination batched as b.
func Batched(o Options, b BatchConfig) Options {
	o.BatchEvents, o.BatchWindow = b.MaxEvents, b.WindowSeconds
	return o
}

// BatchSaving is what a lane batched as b saves per million events against
// one POST per event (the defaults), and the share of the lane's cost it
// is, each destination more, at events a month of 1 KB bodies.
func BatchSaving(events float64, b BatchConfig) (usd, share float64) {
	plain := PerExtraDestination(events, 1, Defaults())
	batched := PerExtraDestination(events, 1, Batched(Defaults(), b))
	return plain - batched, (plain - batched) / plain
}

// renderBatch writes the page's section on batched lanes.
func renderBatch(w func(format string, args ...any)) {
	def := Defaults()
	alone := func(b BatchConfig) Options {
		o := def
		o.BatchWindow = b.WindowSeconds
		return o
	}
	w("\n### Batched lanes\n\n")
	w("A destination with `batch` sends the events of an invocation in one signed POST. Per million 1 KB events, each destination (every event reaching it), with the defaults otherwise, against one POST per event; *per POST* is the events a batch holds at that rate (the lane's five pollers share its messages, as in *The batching window*), and *adds up to* the latency the window costs every event. ")
	w("Per event the lane still pays SNS's send, the claim and the record, the attempt's lines and the body's bytes; per batch the invocation, the receives and deletes (ten messages a call), one POST and one wait for the subscriber. ")
	w("The last column is the same window without `batch` (`batchWindowSeconds`: up to %d messages an invocation, each POSTed).\n\n", config.DefaultBatchSize)
	w("| `batch` | adds up to | 1 M: per POST | 1 M: each destination | 1 M: saving | 100 M: per POST | 100 M: each destination | 100 M: saving | 100 M: the window alone |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	w("| none: one POST per event | 0 s |")
	for _, n := range []float64{million, 100 * million} {
		w(" 1 | %s | — |", usd(PerExtraDestination(n, 1, def)))
	}
	w(" — |\n")
	for _, b := range BatchConfigs {
		o := Batched(def, b)
		w("| `maxEvents` %d, `windowSeconds` %s | %s s |", b.MaxEvents, num(b.WindowSeconds), num(b.WindowSeconds))
		for _, n := range []float64{million, 100 * million} {
			saving, share := BatchSaving(n, b)
			w(" %s | %s | %s |", num(Batch(Scenario{Events: n, BodyKB: 1, Destinations: 1}, o)), usd(PerExtraDestination(n, 1, o)), savingOf(saving, share))
		}
		w(" %s |\n", usd(PerExtraDestination(100*million, 1, alone(b))))
	}
	big := BatchConfigs[len(BatchConfigs)-1]
	sc := Scenario{Events: 100 * million, BodyKB: 1, Destinations: 1}
	w("\nWhat lowers the lane's bill is the window: it fills invocations, and with them the receives and deletes, whether or not the events then share a POST. ")
	w("The batch adds one POST's connection and request overhead instead of many, and costs in return its envelope's bytes, the batch id in each record and line, and the claims and records around the one wait (%s billed ms an invocation of %s events at 100 M, `maxEvents` %d); ",
		num(DeliverMs(sc, Batched(def, big))), num(Batch(sc, Batched(def, big))), big.MaxEvents)
	w("its gain is the subscriber's, which takes one request where it took %s. ", num(Batch(sc, Batched(def, big))))
	w("Where the window fills no batch (a million events a month over five pollers is 0.08 a second each), a batched lane POSTs one event at a time in the envelope, pays its bytes and only adds the latency.\n")
	w("\n| batch figure | value | where it comes from |\n|---|---:|---|\n")
	for _, f := range []struct {
		name string
		f    Figure
	}{{"ItemBytes", BatchAssumed.ItemBytes}, {"EnvelopeBytes", BatchAssumed.EnvelopeBytes}, {"RecordBytes", BatchAssumed.RecordBytes},
		{"LogBytes", BatchAssumed.LogBytes}, {"ClaimsAtOnce", BatchAssumed.ClaimsAtOnce}, {"RecordsAtOnce", BatchAssumed.RecordsAtOnce}} {
		w("| `%s` | %s %s | %s |\n", f.name, strconv.FormatFloat(f.f.Value, 'f', -1, 64), f.f.Unit, f.f.Source)
	}
}

// savingOf writes a saving and its share of the lane's cost, or what
// batching adds where it costs more.
func savingOf(v, share float64) string {
	if v < 0 {
		return usd(-v) + " more"
	}
	return usd(v) + " (" + strconv.FormatFloat(math.Round(share*100), 'f', 0, 64) + " %)"
}
