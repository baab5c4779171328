package delivery

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/metrics"
)

// Options configures a Handler. Destination, QueueURL, SecretID, Store,
// SQS, Secrets, Client and Metrics are required.
type Options struct {
	Destination config.Destination
	// QueueURL is the destination's queue, for ChangeMessageVisibility.
	QueueURL string
	// SecretID names the destination's signing secret in Secrets Manager.
	SecretID string
	// RecordTTL is how long delivery records are kept (default 30 days).
	RecordTTL time.Duration
	Store     Store
	SQS       VisibilityAPI
	Secrets   SecretSource
	Client    Doer
	Metrics   Metrics
	// Payloads reads bodies stored in S3; required when any source takes
	// large payloads (without it such a message is backed off).
	Payloads Payloads
	// HeaderSecrets reads the secrets of the destination's headers;
	// required when a header names a secret.
	HeaderSecrets HeaderSecrets
	// Logger receives one JSON line per attempt (default slog.Default()).
	Logger *slog.Logger
	// Concurrency bounds the records delivered at once (default 10).
	Concurrency int
	// Lane is the lane's pause machinery (*lane.Lane), and Requeue the
	// queue a paused lane sends fresh copies to: both required when the
	// destination pauses (Destination.Pause), and unused otherwise.
	Lane    Lane
	Requeue RequeueAPI
	// Now and Random replace the clock and the jitter source, for tests.
	Now    func() time.Time
	Random func() float64
	// Tracing adds a W3C traceparent header, derived from the message's
	// X-Ray trace header, to each delivery (config tracing on).
	Tracing bool
}

// NewHandler checks the options and returns a Handler.
func NewHandler(o Options) (*Handler, error) {
	required := []struct {
		name string
		ok   bool
	}{
		{"Destination.Name", o.Destination.Name != ""}, {"Destination.URL or URLSecretName", o.Destination.URL != "" || o.Destination.URLSecretName != ""},
		{"QueueURL", o.QueueURL != ""}, {"SecretID", o.SecretID != ""}, {"Store", o.Store != nil},
		{"SQS", o.SQS != nil}, {"Secrets", o.Secrets != nil}, {"Client", o.Client != nil}, {"Metrics", o.Metrics != nil},
		{"HeaderSecrets (the destination's headers or URL name secrets)", o.HeaderSecrets != nil || len(o.Destination.Secrets()) == 0},
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
	bf, err := compileBodyFilter(o.Destination)
	if err != nil {
		return nil, err
	}
	h := &Handler{
		dest: o.Destination, policy: PolicyFor(o.Destination), queueURL: o.QueueURL, secretID: o.SecretID,
		ttl: o.RecordTTL, store: o.Store, sqs: o.SQS, secrets: o.Secrets, client: o.Client, metrics: o.Metrics,
		payloads: o.Payloads, headerSecrets: o.HeaderSecrets, bodyFilter: bf,
		log: o.Logger, concurrency: o.Concurrency, now: o.Now, random: o.Random,
		dim:  metrics.Dimension{Name: metrics.DimDestination, Value: o.Destination.Name},
		lane: o.Lane, requeue: o.Requeue, tracing: o.Tracing,
	}
	h.pause, _ = o.Destination.PauseRule()
	if h.ttl <= 0 {
		h.ttl = config.DefaultRecordDays * 24 * time.Hour
	}
	if h.log == nil {
		h.log = slog.Default()
	}
	if h.concurrency <= 0 {
		h.concurrency = DefaultConcurrency
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
