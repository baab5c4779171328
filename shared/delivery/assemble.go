package delivery

import (
	"errors"

	"fmt"
	"github.com/aws/aws-sdk-go-v2/aws"
	"log/slog"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/loglevel"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
)

// QueueAPI is the part of the SQS client a deliver function uses: the
// visibility of its records and, when the lane pauses, fresh copies.
type QueueAPI interface {
	VisibilityAPI
	RequeueAPI
}

// Secrets reads the signing secret and the headers' secrets (*secrets.Cache).
type Secrets interface {
	https.SecretSource
	https.HeaderSecrets
}

// Clients are what a deliver function calls, built once per process: on
// the AWS SDK by its main (functions/deliver), on the emulator by the local
// stack (infra/local/devstack).
type Clients struct {
	// Store keeps the delivery records, in Env.TableName; a dedupe.Modal
	// store (dedupe.DynamoDB, dedupe.Memory) is put in Env.DedupeMode.
	Store   Store
	SQS     QueueAPI
	Secrets Secrets
	// Payloads reads the bodies in Env.PayloadBucket; required when it is set.
	Payloads Payloads
	// Lanes keeps the pause state and Switch turns the lane's event
	// source mapping off and on: both required when the destination pauses.
	Lanes  pausing.Store
	Switch pausing.Switch
	// Pace keeps the lanes' rate limit buckets (pacing.DynamoDB on
	// Env.TableName): required when the destination has a rateLimit.
	Pace pacing.Store
	// Metrics is the sink Env.MetricsSink names.
	Metrics metrics.Sink
	Logger  *slog.Logger
	// Credentials are the lane role's, from the default chain: they sign
	// the requests of a destination with auth.sigv4 (required for it).
	Credentials aws.CredentialsProvider
	// AWS is the SDK configuration an AWS target's sender builds its one
	// client on, in its target's region (unused by an https lane); Target,
	// when it has the API of the lane's target kind, is called instead (the
	// local stack's Lambda RIE, tests' fakes).
	AWS    *aws.Config
	Target any
	// Timeouts and HoldFor are left zero in AWS (the defaults); the local
	// stack lengthens the calls' timeouts for an emulator on a busy
	// machine, and holds a paused lane's messages until its next tick.
	Timeouts CallTimeouts
	HoldFor  time.Duration
}

// Assemble builds a deliver function from its contract and its clients:
// the one wiring the deployed function and the local stack share.
func Assemble(env Env, c Clients) (*Handler, error) {
	var errs []error
	if env.PayloadBucket != "" && c.Payloads == nil {
		errs = append(errs, fmt.Errorf("deliver %s: a payload bucket is set (%s) but no payload store was given", env.Destination.Name, env.PayloadBucket))
	}
	store, err := recordStore(env, c.Store)
	if err != nil {
		errs = append(errs, err)
	}
	if c.Metrics == nil {
		errs = append(errs, fmt.Errorf("deliver %s: no metrics sink was given", env.Destination.Name))
	}
	policy, pauses := pausing.RuleFor(env.Destination)
	if pauses && (c.Lanes == nil || c.Switch == nil) {
		errs = append(errs, fmt.Errorf("deliver %s: the destination pauses but the lane's store or event source mapping switch was not given", env.Destination.Name))
	}
	pace, paced := env.Destination.Pace()
	if paced && c.Pace == nil {
		errs = append(errs, fmt.Errorf("deliver %s: the destination has a rateLimit but no pacing store was given", env.Destination.Name))
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	// The lane's own sender, with only the clients and options its kind
	// uses.
	snd, err := newSender(env.Destination, senderParts{secretID: env.SecretID, secrets: c.Secrets, headerSecrets: c.Secrets,
		credentials: c.Credentials, tracing: env.Tracing != "", aws: c.AWS, target: c.Target})
	if err != nil {
		return nil, fmt.Errorf("deliver %s: %w", env.Destination.Name, err)
	}
	o := Options{
		Destination: env.Destination, QueueURL: env.QueueURL,
		RecordTTL: time.Duration(env.RecordDays) * 24 * time.Hour,
		Store:     store, SQS: c.SQS, Sender: snd, Payloads: c.Payloads,
		Metrics: laneMetrics(env, metrics.NewRecorder(c.Metrics)), Logger: loglevel.AtLeast(c.Logger, env.LogLevel),
		Timeouts: c.Timeouts, MemoryMB: env.MemoryMB,
	}
	if pauses {
		l, err := pausing.New(pausing.Options{Destination: env.Destination.Name, Rule: policy, Store: c.Lanes, Switch: c.Switch,
			ProbeTimeout: ProbeTimeout(env.Destination)})
		if err != nil {
			return nil, fmt.Errorf("deliver %s: %w", env.Destination.Name, err)
		}
		o.Lane, o.Requeue, o.HoldFor = l, c.SQS, c.HoldFor
	}
	if paced {
		// One pacer per process: its leases and adaptive state are this
		// instance's share of the lane's bucket.
		p, err := pacing.New(pacing.Options{Destination: env.Destination.Name, Pace: withMargin(pace), Store: c.Pace})
		if err != nil {
			return nil, fmt.Errorf("deliver %s: %w", env.Destination.Name, err)
		}
		o.Pacer, o.Requeue = p, c.SQS
	}
	h, err := NewHandler(o)
	if err != nil {
		return nil, fmt.Errorf("deliver %s: %w", env.Destination.Name, err)
	}
	return h, nil
}

// withMargin is the pace the lane's bucket runs at: its burst less one
// token (when it has more than one), a margin for the spread between a
// token and its request's arrival (the scheduling of the send, the
// network), so that the destination itself sees at most rate × t + burst
// in any t seconds (docs/decisions.md#pacing-in-the-pipeline).
func withMargin(p config.Pace) config.Pace {
	if p.Burst > 1 {
		p.Burst--
	}
	return p
}
