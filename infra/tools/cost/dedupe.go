package cost

import "github.com/hookfan/hookfan/shared/config"

// recordCalls is the DynamoDB line of each delivery under dedupe.mode:
// lease claims and finishes with two writes of a record under 1 KB; check
// reads it (strongly consistent, one read unit for a record under 4 KB)
// and writes it once after the attempt.
func recordCalls(o Options) (item string, perDelivery float64) {
	if o.DedupeMode == config.DedupeCheck {
		return "DynamoDB: a read and one write (dedupe.mode check)", Prices.DynamoRead.USD/million + Prices.DynamoWrite.USD/million
	}
	return "DynamoDB: claim and finish writes", 2 * Prices.DynamoWrite.USD / million
}
