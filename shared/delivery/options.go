package delivery

import (
	"errors"

	"fmt"
	"github.com/aws/aws-sdk-go-v2/aws"
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
	// MemoryMB is the function's memory, which sizes the transform's
	// memory bound (default config.DefaultDeliverMemoryMB).
	MemoryMB int
	// Lane is the lane's pause machinery (*pausing.Controller), and Requeue
	// the queue a paused lane sends fresh copies to: both required when the
	// destination pauses (Destination.Pause), and unused otherwise.
	Lane    Pauser
	Requeue RequeueAPI
	// HoldFor is how long a message received while the lane is paused
	// waits before it can be received again (default the pause's
	// probeEvery; a copy waits at most MaxHoldDelay).
	HoldFor time.Duration
	// Timeouts bound the calls to AWS; zero fields take the defaults, set
	// for AWS (the local stack lengthens them for an emulator on a busy
	// machine).
	Timeouts CallTimeouts
	// Now and Random replace the clock and the jitter source, for tests.
	Now    func() time.Time
	Random func() float64
	// Credentials sign the requests of a destination with auth.sigv4 (the
	// lane role's); required for such a destination.
	Credentials aws.CredentialsProvider
	// Targets are the AWS target clients: the one an sqs, eventbridge or
	// lambda destination's type needs is required (targets.go).
	Targets TargetClients
	// Tracing adds a W3C traceparent header, derived from the message's
	// X-Ray trace header, to each delivery (config tracing on).
	Tracing bool
	// ClientAuth is the client certificate and OAuth 2.0 token Client's
	// transport carries (NewClientAuth); required when the destination
	// sets tls or auth.oauth2.
	ClientAuth *ClientAuth
}

// NewHandler checks the options and returns a Handler.
func NewHandler(o Options) (*Handler, error) {
	required := []struct {
		name string
		ok   bool
	}{
		{"Destination.Name", o.Destination.Name != ""}, {"Destination.URL or URLSecretName", o.Destination.URL != "" || o.Destination.URLSecretName != "" || o.Destination.AWSTarget()},
		{"QueueURL", o.QueueURL != ""}, {"SecretID", o.SecretID != "" || !o.Destination.Signs()}, {"Store", o.Store != nil},
		{"SQS", o.SQS != nil}, {"Secrets", o.Secrets != nil || !o.Destination.Signs()}, {"Client", o.Client != nil}, {"Metrics", o.Metrics != nil},
		{"HeaderSecrets (the destination's headers or URL name secrets)", o.HeaderSecrets != nil || len(o.Destination.Secrets()) == 0},
		{"ClientAuth (the destination sets tls or auth.oauth2)", o.ClientAuth != nil || (o.Destination.TLS == nil && o.Destination.OAuth2Config() == nil)},
	}
	var missing []error
	for _, r := range required {
		if !r.ok {
			missing = append(missing, fmt.Errorf("delivery: option %s is required", r.name))
		}
	}
	missing = append(missing, checkPauseOptions(o)...)
	tgt, err := newTarget(o.Destination, o.Targets, o.Tracing)
	if err != nil {
		missing = append(missing, fmt.Errorf("delivery: option Targets: %w", err))
	}
	if len(missing) > 0 {
		return nil, errors.Join(missing...)
	}
	bf, err := compileBodyFilter(o.Destination)
	if err != nil {
		return nil, err
	}
	concurrency := o.Concurrency
	if concurrency <= 0 {
		concurrency = DefaultConcurrency
	}
	tf, err := compileTransform(o.Destination, o.MemoryMB, concurrency)
	if err != nil {
		return nil, err
	}
	as, err := newAWSSigner(o.Destination, o.Credentials)
	if err != nil {
		return nil, fmt.Errorf("delivery: destination %s: %w", o.Destination.Name, err)
	}
	h := &Handler{
		dest: o.Destination, policy: PolicyFor(o.Destination), queueURL: o.QueueURL, secretID: o.SecretID,
		ttl: o.RecordTTL, store: o.Store, sqs: o.SQS, secrets: o.Secrets, client: o.Client, metrics: o.Metrics,
		payloads: o.Payloads, headerSecrets: o.HeaderSecrets, bodyFilter: bf,
		log: o.Logger, concurrency: o.Concurrency, now: o.Now, random: o.Random,
		dim:  metrics.Dimension{Name: metrics.DimDestination, Value: o.Destination.Name},
		lane: o.Lane, requeue: o.Requeue, tracing: o.Tracing, ordered: o.Destination.Ordered(), target: tgt,
		transform: tf, awsSigner: as,
	}
	h.pause, _ = o.Destination.PauseRule()
	h.clientAuth = o.ClientAuth
	h.timeouts = o.Timeouts.withDefaults()
	h.holdFor = o.HoldFor
	if h.holdFor <= 0 {
		h.holdFor = h.pause.ProbeEvery
	}
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

// CallTimeouts bound the handler's calls to AWS. Each zero field takes its
// default: ClaimTimeout, FinishTimeout, VisibilityCallTimeout,
// LaneReadTimeout, LaneTimeout and RequeueTimeout. The lease and the POST's
// budget leave room for them within the function's deadline, so longer
// ones leave less of it for the POST.
type CallTimeouts struct {
	Claim, Finish, Visibility, LaneRead, Lane, Requeue time.Duration
}

// withDefaults fills the zero fields.
func (t CallTimeouts) withDefaults() CallTimeouts {
	for _, f := range []struct {
		v   *time.Duration
		def time.Duration
	}{{&t.Claim, ClaimTimeout}, {&t.Finish, FinishTimeout}, {&t.Visibility, VisibilityCallTimeout},
		{&t.LaneRead, LaneReadTimeout}, {&t.Lane, LaneTimeout}, {&t.Requeue, RequeueTimeout}} {
		if *f.v <= 0 {
			*f.v = f.def
		}
	}
	return t
}

// recordReserve is RecordReserve for these timeouts: the outcome's write
// and a second.
func (t CallTimeouts) recordReserve() time.Duration { return t.Finish + RecordReserve - FinishTimeout }
