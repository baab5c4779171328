package cost

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/hookfan/hookfan/shared/config"
)

// The AWS targets (docs/configuration.md#aws-targets): what a delivery to
// an sqs queue, an eventbridge bus or a lambda function costs, beside an
// https lane's. The lane itself — SNS, its queue, the deliver function,
// the record — is the same; what changes per delivery is the call the
// function waits for, no data out to the internet (the call stays in the
// region), and the target's own charge, billed to whoever owns the target.

// TargetPrices are the prices only the AWS targets use (the others are
// Prices').
var TargetPrices = struct {
	SQSFIFORequest Price
}{
	SQSFIFORequest: Price{0.50, "per million requests, each 64 KB chunk one (FIFO queues)", "Amazon SQS pricing"},
}

// TargetAssumed are the figures only the AWS targets use.
var TargetAssumed = struct {
	SQSSendMs, PutEventsMs, InvokeOverheadMs Figure
	TargetFunctionMs, TargetFunctionMB       Figure
}{
	SQSSendMs:        Figure{10, "ms", "assumed: one in-region SendMessage, waited for"},
	PutEventsMs:      Figure{20, "ms", "assumed: one in-region PutEvents of one entry, waited for"},
	InvokeOverheadMs: Figure{15, "ms", "assumed: a synchronous Invoke's own time around the function's run"},
	TargetFunctionMs: Figure{100, "ms", "assumed: the target function runs 100 ms (the figure SubscriberMs assumes of an https subscriber)"},
	TargetFunctionMB: Figure{128, "MB", "assumed: the target function has 128 MB on Arm"},
}

// Target is an AWS target type the page prices; FIFO an sqs target's
// FIFO queue.
type Target struct {
	Type string
	FIFO bool
}

// targetCosts is what the cost model knows of each AWS target kind
// (config.TargetKinds, TestEveryTargetKindIsPriced): how long the deliver
// function waits for one attempt, the target's own charge for deliveries
// of a body of bodyKB, and whether the kind has a FIFO variant priced on
// its own row.
var targetCosts = map[string]struct {
	waitMs func() float64
	charge func(t Target, deliveries, bodyKB float64) Line
	fifo   bool
}{
	config.TypeSQS: {func() float64 { return TargetAssumed.SQSSendMs.Value }, func(t Target, deliveries, bodyKB float64) Line {
		if t.FIFO {
			return Line{"target: SQS SendMessage (FIFO)", deliveries * chunks64(bodyKB) / million * TargetPrices.SQSFIFORequest.USD}
		}
		return Line{"target: SQS SendMessage", deliveries * chunks64(bodyKB) / million * Prices.SQSRequest.USD}
	}, true},
	config.TypeEventBridge: {func() float64 { return TargetAssumed.PutEventsMs.Value }, func(_ Target, deliveries, bodyKB float64) Line {
		return Line{"target: EventBridge PutEvents", deliveries * chunks64(bodyKB) / million * Prices.EventBridgeEvent.USD}
	}, false},
	config.TypeLambda: {func() float64 { return TargetAssumed.InvokeOverheadMs.Value + TargetAssumed.TargetFunctionMs.Value }, func(_ Target, deliveries, _ float64) Line {
		p, a := Prices, TargetAssumed
		run := math.Ceil(a.TargetFunctionMs.Value) / 1000 * gbs(a.TargetFunctionMB.Value) * p.LambdaGBSecond.USD
		return Line{"target: Lambda invoke and duration", deliveries / million * (p.LambdaRequest.USD + run*million)}
	}, false},
}

// Targets are the page's rows: each target kind, in the order the docs
// present them (a kind with a FIFO variant, sqs, a row for each).
func Targets() []Target {
	var out []Target
	for _, k := range config.TargetKinds() {
		out = append(out, Target{Type: k.Type})
		if targetCosts[k.Type].fifo {
			out = append(out, Target{Type: k.Type, FIFO: true})
		}
	}
	return out
}

func (t Target) String() string {
	if t.FIFO {
		return "`sqs` (FIFO queue)"
	}
	return "`" + t.Type + "`"
}

// targetWaitMs is how long the deliver function waits for one attempt.
func targetWaitMs(t Target) float64 { return targetCosts[t.Type].waitMs() }

// TargetCharge is the target's own charge for deliveries of a body of
// bodyKB: SendMessage (standard or FIFO, per 64 KB chunk), PutEvents ($1
// per million custom events, per 64 KB chunk), or an Invoke and the
// function's run (TargetFunctionMs at TargetFunctionMB).
func TargetCharge(t Target, deliveries, bodyKB float64) Line {
	return targetCosts[t.Type].charge(t, deliveries, bodyKB)
}

// TargetVariable is Variable for lanes that all deliver to an AWS target
// of type t: the deliver function waits for the target's call instead of
// a subscriber, nothing goes out to the internet, and the target's charge
// is added.
func TargetVariable(sc Scenario, o Options, t Target) []Line {
	p := Prices
	deliveries := sc.Events * float64(sc.Destinations)
	invocations := deliveries / Batch(sc, o)
	ms := billedMs(o.DeliverMB, invocationCPU(sc, o), invocationWaitMs(sc, o, targetWaitMs(t)))
	var out []Line
	for _, l := range Variable(sc, o) {
		switch {
		case strings.HasPrefix(l.Item, "Data transfer out"):
			continue
		case strings.HasPrefix(l.Item, "Lambda deliver"):
			l.USD = invocations/million*p.LambdaRequest.USD + invocations*ms/1000*gbs(o.DeliverMB)*p.LambdaGBSecond.USD
		}
		out = append(out, l)
	}
	return append(out, TargetCharge(t, deliveries, sc.BodyKB))
}

// renderTargets writes the AWS targets' table.
func renderTargets(w func(format string, args ...any)) {
	def := Defaults()
	sizes := []float64{1, 16}
	w("\n### AWS targets\n\n")
	w("Per million events to one destination, at a million a month, with the defaults: the whole variable bill, and the target's own charge in it (billed to the target's owner; cross-account, another account's bill). An AWS target's lane has no signing secret: %s a month less than an https lane's.\n\n", usd(Prices.Secret.USD))
	w("| type |")
	for _, kb := range sizes {
		w(" %s: total | %s: the target's charge |", kbOf(kb), kbOf(kb))
	}
	w("\n|---|")
	for range sizes {
		w("---:|---:|")
	}
	w("\n| `https` (for comparison; data out instead) |")
	for _, kb := range sizes {
		sc := Scenario{Events: million, BodyKB: kb, Destinations: 1}
		w(" %s | — |", usd(PerMillion(sc, Variable(sc, def))))
	}
	w("\n")
	for _, t := range Targets() {
		w("| %s |", t)
		for _, kb := range sizes {
			sc := Scenario{Events: million, BodyKB: kb, Destinations: 1}
			w(" %s | %s |", usd(PerMillion(sc, TargetVariable(sc, def, t))), usd(TargetCharge(t, million, kb).USD))
		}
		w("\n")
	}
	w("\n| target price or figure | value | where it comes from |\n|---|---:|---|\n")
	w("| `SQSFIFORequest` | %s %s | %s, read %s |\n", strconv.FormatFloat(TargetPrices.SQSFIFORequest.USD, 'f', -1, 64), TargetPrices.SQSFIFORequest.Unit, TargetPrices.SQSFIFORequest.Page, PricesRead)
	a := TargetAssumed
	for _, f := range []struct {
		name string
		f    Figure
	}{{"SQSSendMs", a.SQSSendMs}, {"PutEventsMs", a.PutEventsMs}, {"InvokeOverheadMs", a.InvokeOverheadMs}, {"TargetFunctionMs", a.TargetFunctionMs}, {"TargetFunctionMB", a.TargetFunctionMB}} {
		w("| `%s` | %s %s | %s |\n", f.name, strconv.FormatFloat(f.f.Value, 'f', -1, 64), f.f.Unit, f.f.Source)
	}
}

func kbOf(v float64) string { return fmt.Sprintf("%s KB", strconv.FormatFloat(v, 'f', -1, 64)) }
