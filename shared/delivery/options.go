package delivery

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/metrics"
)

// Options configures a Handler. Destination, QueueURL, Store, SQS, Sender
// and Metrics are required.
type Options struct {
	Destination config.Destination
	// QueueURL is the destination's queue, for ChangeMessageVisibility.
	QueueURL string
	// RecordTTL is how long delivery records are kept (default 30 days).
	RecordTTL time.Duration
	Store     Store
	SQS       VisibilityAPI
	// Sender is what reaches the destination, built for its kind
	// (NewSender).
	Sender  sender.Sender
	Metrics Metrics
	// Payloads reads bodies stored in S3; required when any source takes
	// large payloads (without it such a message is backed off).
	Payloads Payloads
	// Logger receives one JSON line per attempt (default slog.Default()).
	Logger *slog.Logger
	// Concurrency bounds the records delivered at once (default 10).
	Concurrency int
	// MemoryMB is the function's memory, which sizes the transform's
	// memory bound (default config.DefaultDeliverMemoryMB).
	MemoryMB int
	// Lane is the lane's pause machinery (*pausing.Controller), and Requeue
	// the queue a paused lane sends fresh copies to: both required when the
	// destination pauses (Destination.Pause), and unused otherwise.
	//
	// Requeue is also required on a paced standard lane: a message its rate
	// limit defers is sent again as a fresh copy.
	Lane    Pauser
	Requeue RequeueAPI
	// Pacer is the lane's rate limit (*pacing.Pacer, one per process):
	// required when the destination has a rateLimit, and nil otherwise
	// (an unpaced lane costs nothing).
	Pacer Pacer
	// HoldFor is how long a message received while the lane is paused
	// waits before it can be received again (default the pause's
	// probeEvery; a copy waits at most MaxHoldDelay).
	HoldFor time.Duration
	// Timeouts bound the calls to AWS; zero fields take the defaults, set
	// for AWS (the local stack lengthens them for an emulator on a busy
	// machine).
	Timeouts CallTimeouts
	// Now and Random replace the clock and the jitter source, and Sleep
	// the wait for a token, for tests.
	Now    func() time.Time
	Random func() float64
	Sleep  func(ctx context.Context, d time.Duration) error
}

// NewHandler checks the options and returns a Handler.
func NewHandler(o Options) (*Handler, error) {
	required := []struct {
		name string
		ok   bool
	}{
		{"Destination.Name", o.Destination.Name != ""}, {"QueueURL", o.QueueURL != ""}, {"Store", o.Store != nil},
		{"SQS", o.SQS != nil}, {"Sender", o.Sender != nil}, {"Metrics", o.Metrics != nil},
	}
	var missing []error
	for _, r := range required {
		if !r.ok {
			missing = append(missing, fmt.Errorf("delivery: option %s is required", r.name))
		}
	}
	missing = append(missing, checkPauseOptions(o)...)
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	concurrency := o.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	sh, err := newShape(o.Destination, o.Payloads, o.MemoryMB, concurrency)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		dest: o.Destination, policy: RetryPolicyFor(o.Destination), order: orderingOfBatched(o.Destination, orderingOf(o.Destination)), sender: o.Sender, shape: sh,
		store: o.Store, ttl: o.RecordTTL, queue: queue{url: o.QueueURL, api: o.SQS},
		metrics: meter{m: o.Metrics, dim: metrics.Dimension{Name: metrics.DimDestination, Value: o.Destination.Name}},
		log:     o.Logger, timeouts: o.Timeouts.withDefaults(), concurrency: concurrency, now: o.Now, random: o.Random,
		requeue: o.Requeue, pacer: o.Pacer, sleep: o.Sleep, shapeSlots: make(chan struct{}, concurrency),
	}
	if h.sleep == nil {
		h.sleep = sleepCtx
	}
	if o.Lane != nil {
		h.lane = &lane{Pauser: o.Lane, holdFor: o.HoldFor}
		if h.lane.holdFor <= 0 {
			rule, _ := o.Destination.PauseRule()
			h.lane.holdFor = rule.ProbeEvery
		}
	}
	if h.ttl <= 0 {
		h.ttl = config.DefaultRecordDays * 24 * time.Hour
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.random == nil {
		h.random = rand.Float64
	}
	h.log = h.log.With("destination", h.dest.Name)
	return h, nil
}

// CallTimeouts bound the handler's calls to AWS. Each zero field takes its
// default: ClaimTimeout, FinishTimeout, VisibilityCallTimeout,
// LaneReadTimeout, LaneTimeout, RequeueTimeout, PaceTimeout and
// PaceAlign (a paced request's send after its token, not a call's bound). The lease and the POST's
// budget leave room for them within the function's deadline, so longer
// ones leave less of it for the POST.
type CallTimeouts struct {
	Claim, Finish, Visibility, LaneRead, Lane, Requeue, Pace, PaceAlign time.Duration
}

// withDefaults fills the zero fields.
func (t CallTimeouts) withDefaults() CallTimeouts {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.Claim, ClaimTimeout}, {&t.Finish, FinishTimeout}, {&t.Visibility, VisibilityCallTimeout},
		{&t.LaneRead, LaneReadTimeout}, {&t.Lane, LaneTimeout}, {&t.Requeue, RequeueTimeout}, {&t.Pace, PaceTimeout}, {&t.PaceAlign, PaceAlign}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return t
}

// recordReserve is RecordReserve for these timeouts: the outcome's write
// and a second.
func (t CallTimeouts) recordReserve() time.Duration { return t.Finish + RecordReserve - FinishTimeout }
