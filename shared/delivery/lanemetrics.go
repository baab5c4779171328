package delivery

import (
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// AllLanes is the Destination dimension's value of the delivery metrics
// with metrics.laneDimensions false: one series for all lanes (no
// destination name can be it: names are lowercase letters, digits and
// hyphens).
const AllLanes = "(all)"

// meter records the lane's metrics under its Destination dimension.
type meter struct {
	m   Metrics
	dim metrics.Dimension
}

func (m meter) add(name string, unit metrics.Unit, value float64) { m.m.Add(name, unit, value, m.dim) }

// laneMetrics is the handler's metrics under the contract's
// metrics.laneDimensions: as recorded by default; with LaneMetrics
// "aggregate", the delivery metrics are published under Destination
// AllLanes, all but LanePaused, which the lane's PausedAlarm reads under
// its own name.
func laneMetrics(env Env, m Metrics) Metrics {
	if env.LaneMetrics != config.LaneMetricsAggregate {
		return m
	}
	return aggregated{m}
}

// aggregated publishes every metric but LanePaused under AllLanes.
type aggregated struct{ Metrics }

func (a aggregated) Add(name string, unit metrics.Unit, value float64, dims ...metrics.Dimension) {
	if name != metrics.LanePaused {
		out := make([]metrics.Dimension, len(dims))
		for i, d := range dims {
			if d.Name == metrics.DimDestination {
				d.Value = AllLanes
			}
			out[i] = d
		}
		dims = out
	}
	a.Metrics.Add(name, unit, value, dims...)
}
