// Package operator is Hookfan's operator command: list recent events
// (events), find what happened to an event (status), look into a
// destination's DLQ (dlq), move it back to the destination's queue
// (redrive), send archived events to a destination again (replay), and
// show, pause, resume and pace lanes (lanes, lane, pause, resume, pace), and
// reconcile a source with its provider (reconcile); the web console
// (console, served by infra/ops/console) shows and does the same through
// this package's views (view.go). The same
// commands work on a deployed stack, whose resources are read from its
// index in SSM Parameter Store (Deployed; the stack's IndexParameter
// output names it), and on the local stack (make dev), whose resources are
// named from its prefix on the emulator (Local); a Resolver hides which.
package operator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
)

// Lane is one destination's queues, as an operator needs them.
type Lane struct {
	Destination string
	// Filter is the destination's filter; replays send it only what it
	// would have received.
	Filter             config.Filter
	QueueURL, QueueARN string
	DLQURL, DLQARN     string
	// FunctionName is the lane's deliver function (a deployed stack's: its
	// event source mapping is found by it and QueueARN).
	FunctionName string
	// Pause is the lane's pause policy; nil when the destination does not
	// pause. Retention is its queue's retention.
	Pause     *pausing.Rule
	Retention time.Duration
	// Egress is "static" when the lane delivers from the stack's
	// EgressAddresses (config.EgressStatic), "public" or "" otherwise.
	Egress string
	// OrderingKey is an ordered lane's ordering.key, "" on a standard
	// lane (ordered.go).
	OrderingKey string
	// Pace is the lane's rate limit (rateLimit with its defaults); nil
	// when the lane is not paced.
	Pace *config.Pace
	// Target is where the lane delivers: the URL's scheme and host (never
	// its path), an AWS target's ARN, or the secret the URL is read from.
	Target string
}

// Resources are a Hookfan stack's parts the commands work on.
type Resources struct {
	// Where names the stack for messages ("stack Hookfan in eu-west-1").
	Where string
	Table string
	// ArchiveBucket is empty when the archive is off.
	ArchiveBucket string
	// ArchiveDays is how far back the archive reaches.
	ArchiveDays int
	// PayloadBucket holds the bodies larger than one SNS message, kept
	// PayloadDays; "" when no source takes them.
	PayloadBucket string
	PayloadDays   int
	Lanes         []Lane
	// EgressAddresses are the static egress addresses (or the allocation
	// ids the configuration brought); EgressNote says why there are none
	// where the lanes ask for them (the local stack emulates no VPC).
	EgressAddresses []string
	EgressNote      string
	// Sources are the stack's source names, which status tries a
	// provider's event id under (the local stack's: its configuration's; a
	// deployed stack's: those its lanes' filters name, as its index lists
	// no sources).
	Sources []string
	// Reconciling are the sources that reconcile with their provider.
	Reconciling []string
	// Unindexed is true when the record table has no time index
	// (dedupe.timeIndex false): events then scan the whole table.
	Unindexed bool
}

// Lane finds a destination's lane, or says which exist.
func (r Resources) Lane(destination string) (Lane, error) {
	var names []string
	for _, l := range r.Lanes {
		if l.Destination == destination {
			return l, nil
		}
		names = append(names, l.Destination)
	}
	return Lane{}, fmt.Errorf("no destination %q in %s; destinations: %s", destination, r.Where, strings.Join(names, ", "))
}

// Resolver finds a stack's resources.
type Resolver interface {
	Resolve(ctx context.Context) (Resources, error)
}

// QueueAPI is the part of the SQS client the commands use.
type QueueAPI interface {
	GetQueueAttributes(ctx context.Context, in *sqs.GetQueueAttributesInput, optFns ...func(*sqs.Options)) (*sqs.GetQueueAttributesOutput, error)
	ReceiveMessage(ctx context.Context, in *sqs.ReceiveMessageInput, optFns ...func(*sqs.Options)) (*sqs.ReceiveMessageOutput, error)
	SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error)
	DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error)
	ChangeMessageVisibilityBatch(ctx context.Context, in *sqs.ChangeMessageVisibilityBatchInput, optFns ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityBatchOutput, error)
	StartMessageMoveTask(ctx context.Context, in *sqs.StartMessageMoveTaskInput, optFns ...func(*sqs.Options)) (*sqs.StartMessageMoveTaskOutput, error)
	ListMessageMoveTasks(ctx context.Context, in *sqs.ListMessageMoveTasksInput, optFns ...func(*sqs.Options)) (*sqs.ListMessageMoveTasksOutput, error)
}

// RecordStore reads delivery records (dedupe.DynamoDB).
type RecordStore interface {
	Get(ctx context.Context, pk string) (dedupe.Record, bool, error)
}

// ArchiveReader reads the event archive (archive.Reader).
type ArchiveReader interface {
	Scan(ctx context.Context, q archive.Query, visit func(archive.Event) error, o archive.Options) (archive.Progress, error)
	Find(ctx context.Context, id string, earliest, latest time.Time, o archive.Options) (archive.Event, bool, archive.Progress, error)
}

// Operator runs the commands against one stack.
type Operator struct {
	Resources Resources
	SQS       QueueAPI
	Records   RecordStore
	// Recent lists the delivery records by first attempt (the events
	// command and the console's events): the time index, or a scan of the
	// table when Resources.Unindexed (RecentReader).
	Recent RecordIndex
	// Archive is nil when the archive is off.
	Archive ArchiveReader
	// Payloads is the payload store (with the archive's copies); nil when
	// no source takes bodies larger than one SNS message.
	Payloads PayloadStore
	// LaneStore keeps the lanes' pause state (pausing.DynamoDB on the record
	// table), and Switch gives a lane's event source mapping switch (the
	// mapping itself, or the local stack's queue tag).
	LaneStore pausing.Store
	Switch    func(Lane) pausing.Switch
	// PaceStore keeps the paced lanes' buckets, adaptive levels and
	// overrides (pacing.DynamoDB on the lane items).
	PaceStore pacing.Store
	// Reconciler runs the reconcile command; nil when no source
	// reconciles (the local stack's config has no reconcile block).
	Reconciler Reconciler
	// Watermarks reads the reconciling sources' watermarks (the console's
	// reconciliation page); nil when none reconciles.
	Watermarks WatermarkReader
	// Metrics reads the lanes' delivery metrics (the console's charts);
	// Actions keeps what operators did through the console and the
	// command line; Identity is
	// the operator's AWS identity (STS GetCallerIdentity).
	Metrics  MetricsAPI
	Actions  ActionLog
	Identity func(ctx context.Context) (string, error)
	// Out receives the results; Progress receives progress lines on long runs.
	Out, Progress io.Writer
	// Now replaces the clock, for tests.
	Now func() time.Time
	// ProgressEvery is how often long runs report (default 2s).
	ProgressEvery time.Duration

	// sleep waits d or until ctx ends (tests replace it with the clock's).
	sleep func(ctx context.Context, d time.Duration)
}

func (o *Operator) pause(ctx context.Context, d time.Duration) {
	if o.sleep != nil {
		o.sleep(ctx, d)
		return
	}
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

func (o *Operator) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func (o *Operator) progressEvery() time.Duration {
	if o.ProgressEvery > 0 {
		return o.ProgressEvery
	}
	return 2 * time.Second
}

func (o *Operator) printf(format string, args ...any) { fmt.Fprintf(o.Out, format, args...) }

func (o *Operator) progressf(format string, args ...any) {
	if o.Progress != nil {
		fmt.Fprintf(o.Progress, format, args...)
	}
}

// ErrUsage marks a command line that cannot be run as given.
var ErrUsage = errors.New("usage")

func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// EventID reads an operator's event argument: a Hookfan event id
// ("evt_…"), or a provider's id qualified by its source ("stripe:evt_1…",
// "github:<X-GitHub-Delivery>"), from which ingest derives the same id.
func EventID(arg string) (string, error) {
	if strings.HasPrefix(arg, "evt_") && !strings.ContainsAny(arg, ":. ") {
		return arg, nil
	}
	source, providerID, ok := strings.Cut(arg, ":")
	if !ok || source == "" || providerID == "" {
		return "", usagef("%q is neither a Hookfan event id (evt_…) nor source:provider-event-id (such as stripe:evt_1Nx…)", arg)
	}
	return ingest.EventID(source, providerID), nil
}

// ParseTime reads a time argument: RFC 3339 ("2026-05-01T13:00:00Z"), a
// date ("2026-05-01", midnight UTC), or a duration before now ("90m", "2h").
func ParseTime(arg string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(arg); err == nil {
		if d < 0 {
			return time.Time{}, usagef("%q: a duration counts back from now; give it without a sign", arg)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.Parse(layout, arg); err == nil {
			return t, nil
		}
	}
	return time.Time{}, usagef("%q is not a time: use RFC 3339 (2026-05-01T13:00:00Z), a date (2026-05-01) or a duration before now (90m)", arg)
}
