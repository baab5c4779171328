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
}

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
