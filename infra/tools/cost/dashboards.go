package cost

import "github.com/hookfan/hookfan/shared/config"

// Dashboards' free tier: CloudWatch bills no dashboard of up to
// FreeDashboardMetrics metrics, FreeDashboards of them per account; every
// other dashboard is Prices.Dashboard a month.
const FreeDashboardMetrics = 50

// Metrics each dashboard graphs, as infra/stack/dashboard.go builds them
// (a metric or a math expression counts one; a search expression may show
// more series than that).
const (
	// OverviewSourceMetrics: accepted, publish failures, requests and 4xx.
	OverviewSourceMetrics = 4
	// OverviewFixedMetrics: the API's requests, 4xx, 5xx and latency, and
	// eight searches (replays, rejections, throttles, and every
	// destination's succeeded, failed, dead, event age and paused).
	OverviewFixedMetrics = 4 + 8
	// LaneRowMetrics: a destination's row with metrics.laneDimensions on
	// (deliveries, failures, dead, duplicates, latency p50 and p99, event
	// age, paused; its function's errors; four queue depths and the oldest
	// message's age).
	LaneRowMetrics = 14
	// LaneRowMetricsAggregate: the row without the lane's delivery metrics.
	LaneRowMetricsAggregate = 7
	// OverviewPacedMetrics: with a paced destination, two searches more
	// (messages held back, the rate in force).
	OverviewPacedMetrics = 2
	// OverviewBatchedMetrics: with a batched destination, two searches
	// more (batches sent, events per batch).
	OverviewBatchedMetrics = 2
	// OverviewReconciledMetrics: with a reconciled source, four searches
	// more (listed, missing, brought in, stopped runs).
	OverviewReconciledMetrics = 4
)

// DashboardMetrics are the metrics of each dashboard the stack makes for
// cfg (none with metrics.dashboard false), the overview first.
func DashboardMetrics(cfg *config.Config) []int {
	if !cfg.Metrics.Dashboards() {
		return nil
	}
	row := LaneRowMetrics
	if !cfg.Metrics.PerLane() {
		row = LaneRowMetricsAggregate
	}
	d := len(cfg.Destinations)
	out := []int{OverviewSourceMetrics*len(cfg.Sources) + OverviewFixedMetrics + row*min(d, LanesPerDashboard)}
	if cfg.Paced() {
		out[0] += OverviewPacedMetrics
	}
	if cfg.Batched() {
		out[0] += OverviewBatchedMetrics
	}
	if len(cfg.Reconciled()) > 0 {
		out[0] += OverviewReconciledMetrics
	}
	for i := LanesPerDashboard; i < d; i += LanesPerDashboard {
		out = append(out, row*min(LanesPerDashboard, d-i))
	}
	return out
}

// DashboardsBilled is how many of cfg's dashboards CloudWatch bills:
// those over FreeDashboardMetrics metrics, and those within it past the
// account's FreeDashboards (assuming the account spends none elsewhere).
func DashboardsBilled(cfg *config.Config) int {
	billed, free := 0, 0
	for _, n := range DashboardMetrics(cfg) {
		switch {
		case n > FreeDashboardMetrics:
			billed++
		case free < FreeDashboards:
			free++
		default:
			billed++
		}
	}
	return billed
}

// laneMetricsCount is the custom metrics the lanes publish: LaneMetrics a
// lane, or LaneMetrics once for all with metrics.laneDimensions false.
func laneMetricsCount(n int, o Options) float64 {
	if !o.LaneDimensions {
		return Assumed.LaneMetrics.Value
	}
	return float64(n) * Assumed.LaneMetrics.Value
}
