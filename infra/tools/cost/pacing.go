package cost

import (
	"fmt"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

// Paced lanes (rateLimit): each request takes a token from the lane's
// bucket, one conditional UpdateItem on the lane's item; a deliver
// instance leases LeaseSpan's worth of tokens at once (at most half the
// burst), so a lane running at its rate writes about ten times a second
// whatever the rate. A token no instance spends within its lease is
// dropped; at worst (deliveries spaced wider than a lease) every delivery
// writes once. A deferral the last state seen already answers writes
// nothing; the item is read only by ops.

// PacingRates are the rates the page prices, in requests a second.
var PacingRates = []int{1, 5, 50, 500, 5000}

// LeaseSize is the tokens one take leases on a lane at perSecond with the
// default burst (pacing.Pacer's rule).
func LeaseSize(perSecond int) int {
	p := config.Pace{N: perSecond, Per: time.Second, Burst: perSecond}
	iv := time.Second / time.Duration(p.N)
	return max(1, min(int(pacing.LeaseSpan/iv), p.Burst/2))
}

// PacingWritesPerDelivery is the bucket writes per delivery of a lane
// running at perSecond (its deliveries using each lease whole).
func PacingWritesPerDelivery(perSecond int) float64 { return 1 / float64(LeaseSize(perSecond)) }

// PacingPerMillion is what the bucket costs per million deliveries of a
// lane running at perSecond.
func PacingPerMillion(perSecond int) float64 {
	return PacingWritesPerDelivery(perSecond) * Prices.DynamoWrite.USD
}

// AdaptiveMonthMax is the most an adaptive lane's level costs a month: a
// write per SpeedUpEvery while it climbs back, all month long (decreases
// are rarer still: one per SlowDownEvery while 429s come, which stop the
// climb).
func AdaptiveMonthMax() float64 {
	return Assumed.MonthSeconds.Value / pacing.SpeedUpEvery.Seconds() / million * Prices.DynamoWrite.USD
}

// renderPacing writes the page's section on paced lanes.
func renderPacing(b *strings.Builder) {
	w := func(format string, args ...any) { fmt.Fprintf(b, format, args...) }
	w("\n### Paced lanes\n\n")
	w("A destination with `rateLimit` takes a token from its lane's bucket before each request: a conditional write to the lane's item in the record table (1 write request unit while the item stays under 1 KB). ")
	w("An instance leases %s worth of tokens at once (at most half the burst), so a lane running at its rate writes at most about %d times a second, whatever the rate; deliveries spaced wider than a lease write once each, the most a delivery costs. ",
		pacing.LeaseSpan, int(time.Second/pacing.LeaseSpan))
	w("A message held back writes nothing when the state the instance last saw already says to wait (the common case in a backlog), and one refused write (billed as a write) when it does not. No reads: only `ops lanes` reads the item. Beside the defaults' lines:\n\n")
	w("| rate (burst = rate) | tokens per lease | bucket writes per delivery | per million deliveries at the rate | at worst (a write each) |\n|---|---:|---:|---:|---:|\n")
	for _, r := range PacingRates {
		w("| %d/s | %d | %s | %s | %s |\n", r, LeaseSize(r), num(PacingWritesPerDelivery(r)), usd(PacingPerMillion(r)), usd(Prices.DynamoWrite.USD))
	}
	w("\nWith `adaptive`, the level shared by the lane's instances is written at most once per %s while it climbs back and once per %s while 429s come: at most %s a month per lane. An operator's override (`ops pace`) is one write. ",
		pacing.SpeedUpEvery, pacing.SlowDownEvery, usd(AdaptiveMonthMax()))
	w("On a standard lane a message held back longer than a second is sent again as a delayed copy and the original deleted: a send, a receive and a delete, 3 SQS requests per hold (%s per million holds of a body up to 64 KB); an ordered lane hides it in place (1 ChangeMessageVisibility). ",
		usd(3*Prices.SQSRequest.USD))
	w("Pacing adds no resource: the bucket lives on the lane's item; with a paced destination the overview dashboard graphs %d metrics more (the dashboards' free tier counts them). A lane without `rateLimit` takes no token and pays nothing.\n", OverviewPacedMetrics)
}
