package cost

import (
	"fmt"
	"strconv"
	"strings"
)

// Ordered lanes (docs/operations.md#fifo-limits-of-ordered-lanes): an
// ordered destination's lane is an SQS FIFO queue subscribed to the
// stack's SNS FIFO topic, which ingest publishes each event to once per
// ordering key spec that takes its source, beside its one publish to the
// fan-out topic. FIFO topics and queues are priced apart from standard
// ones; this file prices what ordering adds to the standard model.

// fifoUnverified marks a FIFO price the stored copies of the pricing page
// did not hold: the figure Amazon SNS pricing lists for FIFO topics, to be
// checked against the live page.
const fifoUnverified = "Amazon SNS pricing (FIFO topics); not in the stored copies read: to check on the live page"

// FIFOPrices are the FIFO prices in us-east-1, read with Prices.
var FIFOPrices = struct {
	SNSFIFOPublish, SNSFIFOPublishGB   Price
	SNSFIFODelivery, SNSFIFODeliveryGB Price
	SQSFIFORequest                     Price
}{
	SNSFIFOPublish:    Price{0.30, "per million Publish (and PublishBatch) requests to a FIFO topic", "Amazon SNS pricing (FIFO topics), as a 2026 pricing guide quotes it"},
	SNSFIFOPublishGB:  Price{0.017, "per GB of payload published to a FIFO topic", fifoUnverified},
	SNSFIFODelivery:   Price{0.01, "per million messages a FIFO topic delivers to a subscription (an SQS FIFO queue)", fifoUnverified},
	SNSFIFODeliveryGB: Price{0.001, "per GB of payload a FIFO topic delivers", fifoUnverified},
	SQSFIFORequest:    Price{0.50, "per million requests, each 64 KB chunk one (FIFO queues)", "Amazon SQS pricing"},
}

// FIFOFigures are the figures the FIFO lines use.
var FIFOFigures = struct {
	AttributesKB      Figure
	FIFOKMSRequests   Figure
	FIFOPublishPerKey Figure
}{
	AttributesKB:      Figure{1, "KB", "estimated: the message attributes published with each body (as chunks64 counts them), the ordering key's among them"},
	FIFOKMSRequests:   Figure{8640, "requests a month", "assumed: the FIFO topic, encrypted with the fan-out topic's key, takes a data key of its own every 5 minutes (SNS's data-key reuse)"},
	FIFOPublishPerKey: Figure{1, "publish per event and key spec", "ingest publishes each event once to the FIFO topic per distinct ordering key spec whose destinations take its source (config.OrderingRoutes)"},
}

// payloadGB is one message's payload in GB: the body and its attributes.
func payloadGB(bodyKB float64) float64 {
	return (bodyKB + FIFOFigures.AttributesKB.Value) * 1024 / gb
}

// FIFOTopicLines are what the FIFO topic's publishes cost for a scenario's
// events, with routes key specs taking every event: the requests and
// their payload. Zero without an ordered destination (routes 0).
func FIFOTopicLines(sc Scenario, routes int) []Line {
	p := FIFOPrices
	publishes := sc.Events * float64(routes) * FIFOFigures.FIFOPublishPerKey.Value
	return []Line{
		{"SNS FIFO publishes", publishes / million * p.SNSFIFOPublish.USD},
		{"SNS FIFO published payload", publishes * payloadGB(sc.BodyKB) * p.SNSFIFOPublishGB.USD},
	}
}

// OrderedLaneExtra is what one ordered lane costs beyond a standard lane
// for a scenario's events (each reaching the lane): the FIFO topic's
// deliveries to its queue (free from a standard topic) and their payload,
// and its SQS requests at the FIFO price. Its function, records, logs and
// bytes out are a standard lane's; without a batching window (which
// ordered lanes refuse) its batches are the defaults'.
func OrderedLaneExtra(sc Scenario, o Options) []Line {
	p := FIFOPrices
	n := sc.Events
	o.BatchWindow = 0
	batch := Batch(sc, o)
	invocations := n / batch
	requests := n*chunks64(sc.BodyKB) + 2*invocations*chunks64(sc.BodyKB*batch)
	return []Line{
		{"SNS FIFO deliveries to the lane's queue", n/million*p.SNSFIFODelivery.USD + n*payloadGB(sc.BodyKB)*p.SNSFIFODeliveryGB.USD},
		{"SQS FIFO requests, beyond the standard price", requests / million * (p.SQSFIFORequest.USD - Prices.SQSRequest.USD)},
	}
}

// OrderedFixed is what the FIFO topic adds a month whatever the traffic:
// its KMS requests, and each ordered lane's idle long polls at the FIFO
// price beyond the standard one.
func OrderedFixed(lanes int) []Line {
	a := Assumed
	idle := a.Pollers.Value * a.MonthSeconds.Value / a.LongPollSeconds.Value
	return []Line{
		{"KMS: the FIFO topic's data keys", FIFOFigures.FIFOKMSRequests.Value / 1e4 * Prices.KMSRequests.USD},
		{"SQS: the ordered lanes' idle long polls, beyond the standard price", float64(lanes) * idle / million * (FIFOPrices.SQSFIFORequest.USD - Prices.SQSRequest.USD)},
	}
}

// renderOrdered writes the page's section on ordered lanes.
func renderOrdered(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	def := Defaults()
	w("\n### Ordered lanes\n\n")
	w("An ordered destination (`ordering`) is an SQS FIFO lane on the SNS FIFO topic. Beside the defaults' lines above, per million events (each reaching the lane):\n\n")
	sizes := []float64{1, 16}
	w("| line item |")
	for _, kb := range sizes {
		w(" %s |", kb2(kb))
	}
	w("\n|---|")
	for range sizes {
		w("---:|")
	}
	w("\n")
	scs := make([]Scenario, len(sizes))
	for i, kb := range sizes {
		scs[i] = Scenario{Events: million, BodyKB: kb, Destinations: 1}
	}
	row := func(name string, f func(Scenario) float64) {
		w("| %s |", name)
		for _, sc := range scs {
			w(" %s |", usd(f(sc)))
		}
		w("\n")
	}
	item := func(lines func(Scenario) []Line, i int, suffix string) {
		row(lines(scs[0])[i].Item+suffix, func(sc Scenario) float64 { return lines(sc)[i].USD })
	}
	topic := func(sc Scenario) []Line { return FIFOTopicLines(sc, 1) }
	lane := func(sc Scenario) []Line { return OrderedLaneExtra(sc, def) }
	for i := range topic(scs[0]) {
		item(topic, i, " (once per key spec)")
	}
	for i := range lane(scs[0]) {
		item(lane, i, " (each ordered lane)")
	}
	row("**the first ordered destination, beyond a standard one**", func(sc Scenario) float64 { return Sum(topic(sc)) + Sum(lane(sc)) })
	row("each further one on the same key spec", func(sc Scenario) float64 { return Sum(lane(sc)) })
	fixed := OrderedFixed(1)
	w("\nA month, whatever the traffic: %s for the FIFO topic's key requests, and %s per ordered lane (its idle long polls at the FIFO price). ",
		usd(fixed[0].USD), usd(fixed[1].USD))
	w("An ordered lane that replaces a standard one keeps the standard lane's other lines; the standard topic still takes every event (the archive and the standard lanes read it).\n\n")
	writePrices(w, FIFOPrices)
	w("\n")
	writeFigures(w, FIFOFigures)
}

func kb2(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) + " KB events" }
