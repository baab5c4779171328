// Package metrics records Hookfan's CloudWatch metrics.
//
// A Recorder collects points during one invocation and Flush hands them to a
// Sink. The Lambda functions write Embedded Metric Format lines on stdout
// (EMF; CloudWatch Logs extracts the metrics; no API call on the hot path)
// and nothing else. PutMetricData (package putmetricdata) is the local
// stack's sink in its own process, for emulators that do not read EMF; it
// is apart so that the functions never link the CloudWatch client
// (docs/decisions.md).
package metrics

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/config"
)

// Namespace is the CloudWatch namespace of every Hookfan metric.
const Namespace = "Hookfan"

// Metric names (see the design's metrics section).
const (
	IngestAccepted      = "IngestAccepted"
	IngestRejected      = "IngestRejected"
	IngestPublishFailed = "IngestPublishFailed"
	// IngestReplayBlocked counts copies of published requests answered as the
	// original and not published again (replay protection).
	IngestReplayBlocked = "IngestReplayBlocked"
	DeliverySucceeded   = "DeliverySucceeded"
	DeliveryFailed      = "DeliveryFailed"
	DeliveryDuplicate   = "DeliveryDuplicate"
	DeliveryDead        = "DeliveryDead"
	DeliveryLatency     = "DeliveryLatency"
	EventAge            = "EventAge"
	DeliveryAttempts    = "DeliveryAttempts"
	// DeliveryFiltered counts events a destination's body filter refused:
	// acknowledged without a POST.
	DeliveryFiltered = "DeliveryFiltered"
	// LanePaused is 1 while a destination's lane is paused and 0 while it
	// delivers: written at every pause and resume and at every probe tick.
	LanePaused = "LanePaused"
	// LanePauses and LaneResumes count the lane's pauses and resumes.
	LanePauses  = "LanePauses"
	LaneResumes = "LaneResumes"
	// DeliveryPaced counts messages a paced lane held back (deferred
	// until a token is due, no attempt spent); LaneEffectiveRate is the
	// lane's rate in force, in requests a second (rateLimit lowered by the
	// adaptive level and an operator's override).
	DeliveryPaced     = "DeliveryPaced"
	LaneEffectiveRate = "LaneEffectiveRate"
	// DeliveryBatches counts a batched lane's batches sent (one request
	// each); DeliveryBatchSize is each one's number of events. The
	// per-event metrics (DeliveryAttempts, DeliverySucceeded, …) count
	// every event of a batch; DeliveryLatency is the batch's request.
	DeliveryBatches   = "DeliveryBatches"
	DeliveryBatchSize = "DeliveryBatchSize"
	// Reconciliation's counts per run, by Source (shared/reconcile):
	// events listed at the provider, found missing (the alarm's), brought
	// in or redelivered, missing but past the lookback, skipped; and 1
	// when the run stopped before its end, else 0.
	ReconcileListed         = "ReconcileListed"
	ReconcileMissing        = "ReconcileMissing"
	ReconcileBroughtIn      = "ReconcileBroughtIn"
	ReconcileOutOfRetention = "ReconcileOutOfRetention"
	ReconcileSkipped        = "ReconcileSkipped"
	ReconcileStopped        = "ReconcileStopped"
)

// Dimension names.
const (
	DimSource      = "Source"
	DimReason      = "Reason"
	DimDestination = "Destination"
)

// Unit is a CloudWatch unit.
type Unit string

// Units used by Hookfan.
const (
	Count        Unit = "Count"
	Milliseconds Unit = "Milliseconds"
	// CountPerSecond is a rate (LaneEffectiveRate).
	CountPerSecond Unit = "Count/Second"
)

// Dimension is one name/value pair.
type Dimension struct {
	Name  string
	Value string
}

// Point is one recorded value.
type Point struct {
	Name       string
	Unit       Unit
	Value      float64
	Dimensions []Dimension
	Time       time.Time
}

// Sink publishes points. Publish must not keep the points slice once it
// returns.
type Sink interface {
	Publish(ctx context.Context, points []Point) error
}

// Recorder collects points; it is safe for concurrent use.
type Recorder struct {
	sink Sink
	now  func() time.Time

	mu     sync.Mutex
	points []Point
}

// NewRecorder returns a Recorder that flushes to sink.
func NewRecorder(sink Sink) *Recorder { return &Recorder{sink: sink, now: time.Now} }

// Add records one value, now.
func (r *Recorder) Add(name string, unit Unit, value float64, dims ...Dimension) {
	p := Point{Name: name, Unit: unit, Value: value, Dimensions: dims, Time: r.now()}
	r.mu.Lock()
	r.points = append(r.points, p)
	r.mu.Unlock()
}

// Count records a count of 1, now.
func (r *Recorder) Count(name string, dims ...Dimension) { r.Add(name, Count, 1, dims...) }

// Flush publishes and forgets the points recorded so far.
func (r *Recorder) Flush(ctx context.Context) error {
	r.mu.Lock()
	points := r.points
	r.points = nil
	r.mu.Unlock()
	if len(points) == 0 {
		return nil
	}
	if err := r.sink.Publish(ctx, points); err != nil {
		return fmt.Errorf("flush %d metric points: %w", len(points), err)
	}
	return nil
}

// CheckFunctionSink refuses a function environment's metrics sink other
// than EMF ("" is EMF): a function writes EMF lines only. metrics.sink
// "cloudwatch" is the local stack's PutMetricData, in its own process; a
// deployed stack refuses it at synthesis.
func CheckFunctionSink(name string) error {
	switch name {
	case "", config.SinkEMF:
		return nil
	case config.SinkCloudWatch:
		return fmt.Errorf("metrics sink %q is the local stack's, in its own process; a function writes Embedded Metric Format lines only: set %q", name, config.SinkEMF)
	}
	return fmt.Errorf("unknown metrics sink %q; a function writes %q only", name, config.SinkEMF)
}
