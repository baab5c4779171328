package config

// Metrics sinks accepted in metrics.sink.
const (
	SinkEMF        = "emf"
	SinkCloudWatch = "cloudwatch"
)

// Metrics selects where metrics go.
type Metrics struct {
	// Sink is "emf" (default: Embedded Metric Format in the logs) or
	// "cloudwatch" (PutMetricData once per invocation, for emulators).
	Sink string `json:"sink,omitempty"`
	// Dashboard makes the operations dashboards (the overview, and a page
	// per further 40 destinations). Default true; no alarm reads them.
	Dashboard *bool `json:"dashboard,omitempty"`
	// LaneDimensions publishes each destination's delivery metrics under
	// its Destination dimension (four custom metrics a lane, more while
	// deliveries fail). false publishes them once for all lanes, without
	// the dimension: no alarm reads them (a lane's alarms read its queues,
	// its function and its LanePaused gauge, which keeps the dimension),
	// but the dashboard's rows then show no per-destination deliveries.
	// Default true.
	LaneDimensions *bool `json:"laneDimensions,omitempty"`
}

// Dashboards reports whether the stack makes the dashboards.
func (m Metrics) Dashboards() bool { return m.Dashboard == nil || *m.Dashboard }

// PerLane reports whether delivery metrics carry the Destination dimension.
func (m Metrics) PerLane() bool { return m.LaneDimensions == nil || *m.LaneDimensions }

// LaneMetricsAggregate is delivery.EnvLaneMetrics' value with
// metrics.laneDimensions false.
const LaneMetricsAggregate = "aggregate"

// Sink is the metrics sink in force.
func (m Metrics) SinkName() string {
	if m.Sink == "" {
		return SinkEMF
	}
	return m.Sink
}

func (m *Metrics) validate(p *problems) {
	if m.Sink != "" && m.Sink != SinkEMF && m.Sink != SinkCloudWatch {
		p.add("metrics.sink", "unknown sink %q; use %q (Embedded Metric Format, default) or %q (PutMetricData)", m.Sink, SinkEMF, SinkCloudWatch)
	}
}
