package operator

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/message/sqsattr"
	"github.com/hookfan/hookfan/shared/payload"
)

// ReplayOptions select what a replay sends. Either Event or Since is set.
type ReplayOptions struct {
	Destination string
	// Event is one event: a Hookfan event id or source:provider-event-id.
	Event string
	// Since and Until bound the events' received time (Until defaults to now).
	Since, Until time.Time
	// Source and Type narrow a time range (Type: exact, or a prefix "x.*").
	Source, Type string
	// DryRun lists what would be replayed and sends nothing.
	DryRun bool
	// IgnoreFilter sends events the destination's filter does not select.
	IgnoreFilter bool
	// ID resumes an earlier replay under its id: the events it already
	// delivered are acknowledged, not sent again. Default: a new id.
	ID string
	// Max, when above 0, is a hard cap: the replay sends (or, dry, counts)
	// at most Max events and then stops, Capped set in its result.
	Max int
}

// check reports options that cannot be run. With --event, --since and
// --until only narrow where the event is looked for.
func (opt ReplayOptions) check() error {
	switch {
	case opt.Event == "" && opt.Since.IsZero():
		return usagef("give --event EVENT or --since TIME")
	case opt.Event != "" && (opt.Source != "" || opt.Type != ""):
		return usagef("--source and --type narrow a --since range; with --event they are not needed")
	case opt.Event == "" && !opt.Until.IsZero() && !opt.Since.Before(opt.Until):
		return usagef("--since %s is not before --until %s", stamp(opt.Since), stamp(opt.Until))
	case opt.Max < 0:
		return usagef("a cap of %d events: give 1 or more (0: no cap)", opt.Max)
	case opt.ID != "" && !message.ValidReplayID(opt.ID):
		return usagef("--id %q is not a replay id (%s and 1 to 60 letters, digits, '-' or '_')", opt.ID, message.ReplayIDPrefix)
	}
	if opt.Event != "" {
		if _, err := EventID(opt.Event); err != nil {
			return err
		}
	}
	return nil
}

// ReplayResult is what a replay sent.
type ReplayResult struct {
	ID string
	// Events are the ids sent (or, dry, that would be).
	Events []string
	// Filtered counts events the destination's filter does not select.
	Filtered   int
	Unreadable int
	// NotSent are the events not sent, each error saying why and what to
	// do: its body exists nowhere any more (errBodyLost, with its age), or
	// is in S3 under a source the destination's function may not read.
	NotSent []error
	DryRun  bool
	// Capped is set when the replay stopped at ReplayOptions.Max with
	// more events in range.
	Capped bool
}

// Replay sends archived events to a destination's queue again, exactly as
// SNS delivered them (the body, every attribute, so webhook-id stays the
// event's id), plus the replay attribute: the deliverer sends the event even
// if it was delivered before, once per replay, and records the replay.
func (o *Operator) Replay(ctx context.Context, opt ReplayOptions) (ReplayResult, error) {
	res := ReplayResult{DryRun: opt.DryRun}
	l, err := o.Resources.Lane(opt.Destination)
	if err != nil {
		return res, err
	}
	if o.Archive == nil {
		return res, fmt.Errorf("%s keeps no archive (archive.days is 0), so there is nothing to replay", o.Resources.Where)
	}
	if err := opt.check(); err != nil {
		return res, err
	}
	res.ID = opt.ID
	if res.ID == "" {
		res.ID = newReplayID(o.now())
	}
	send := func(ev archive.Event) error {
		if opt.Max > 0 && len(res.Events) >= opt.Max {
			res.Capped = true
			return archive.ErrStop
		}
		if !opt.IgnoreFilter && !l.Filter.Matches(ev.Source, ev.Type) {
			res.Filtered++
			return nil
		}
		if err := unreadableBody(l, ev); err != nil {
			res.NotSent = append(res.NotSent, err)
			o.progressf("replay: %v\n", err)
			return nil
		}
		if opt.DryRun {
			o.printf("would replay %s  %s  %s  received %s\n", ev.ID, ev.Source, ev.Type, stamp(ev.ReceivedAt))
		} else {
			msgID, err := o.sendReplay(ctx, l, ev, res.ID)
			if errors.Is(err, errBodyLost) {
				res.NotSent = append(res.NotSent, err)
				o.progressf("replay: %v\n", err)
				return nil
			}
			if err != nil {
				return fmt.Errorf("replay %s: %w (%d sent; run the same command with --id %s to send the rest, and what was sent is not sent twice)", ev.ID, err, len(res.Events), res.ID)
			}
			o.printf("replayed %s  %s  %s  received %s  (message %s)\n", ev.ID, ev.Source, ev.Type, stamp(ev.ReceivedAt), msgID)
		}
		res.Events = append(res.Events, ev.ID)
		return nil
	}
	opts := archive.Options{
		OnBadRecord: func(b archive.BadRecord) {
			res.Unreadable++
			o.progressf("replay: skipped an unreadable archive record: %v\n", b)
		},
	}
	if opt.DryRun {
		o.printf("dry run of replay %s to %s: nothing is sent\n", res.ID, l.Destination)
	} else {
		o.printf("replay %s to %s\n", res.ID, l.Destination)
	}
	if opt.Event != "" {
		err = o.replayOne(ctx, opt, opts, send)
	} else {
		err = o.replayRange(ctx, opt, opts, send)
	}
	if err != nil {
		return res, err
	}
	verb := "replayed"
	if opt.DryRun {
		verb = "would replay"
	}
	o.printf("%s %d event(s) to %s", verb, len(res.Events), l.Destination)
	if res.Capped {
		o.printf(" and stopped at the cap of %d (more events are in range)", opt.Max)
	}
	if res.Filtered > 0 {
		o.printf("; %d other(s) in range are not for %s (its filter; --ignore-filter sends them too)", res.Filtered, l.Destination)
	}
	o.printf("\n")
	var errs []error
	if res.Unreadable > 0 {
		errs = append(errs, fmt.Errorf("%d archive record(s) could not be read (listed above) and were not replayed", res.Unreadable))
	}
	if len(res.NotSent) > 0 {
		errs = append(errs, fmt.Errorf("%d event(s) not replayed:\n%w", len(res.NotSent), errors.Join(res.NotSent...)))
	}
	return res, errors.Join(errs...)
}

func (o *Operator) replayRange(ctx context.Context, opt ReplayOptions, opts archive.Options, send func(archive.Event) error) error {
	until := opt.Until
	if until.IsZero() {
		until = o.now()
	}
	if !opt.Since.Before(until) {
		return usagef("--since %s is not before --until %s", stamp(opt.Since), stamp(until))
	}
	last := o.now()
	opts.OnProgress = func(p archive.Progress) {
		if now := o.now(); now.Sub(last) >= o.progressEvery() || p.Hours == p.HoursTotal {
			o.progressf("replay: read %d of %d hour(s) of the archive: %d object(s), %d record(s)\n", p.Hours, p.HoursTotal, p.Objects, p.Records)
			last = now
		}
	}
	_, err := o.Archive.Scan(ctx, archive.Query{Since: opt.Since, Until: until, Source: opt.Source, Type: opt.Type}, send, opts)
	return err
}

// replayOne finds one event in the archive, searching back from when its
// delivery records were last written (it was received before), and sends it.
func (o *Operator) replayOne(ctx context.Context, opt ReplayOptions, opts archive.Options, send func(archive.Event) error) error {
	id, err := EventID(opt.Event)
	if err != nil {
		return err
	}
	days := o.Resources.ArchiveDays
	if days <= 0 {
		days = config.DefaultArchiveDays
	}
	earliest, latest := o.now().Add(-time.Duration(days)*24*time.Hour), o.now()
	if !opt.Since.IsZero() {
		earliest = opt.Since
	}
	if !opt.Until.IsZero() {
		latest = opt.Until
	} else if t, ok, err := o.lastWritten(ctx, id); err != nil {
		return err
	} else if ok {
		latest = t
	}
	last := o.now()
	opts.OnProgress = func(p archive.Progress) {
		if now := o.now(); now.Sub(last) >= o.progressEvery() {
			o.progressf("replay: searched %d of %d hour(s) of the archive for %s\n", p.Hours, p.HoursTotal, id)
			last = now
		}
	}
	ev, ok, _, err := o.Archive.Find(ctx, id, earliest, latest, opts)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s is not in the archive between %s and %s (archived events are kept %d days)", id, stamp(earliest), stamp(latest), days)
	}
	l, _ := o.Resources.Lane(opt.Destination)
	if !opt.IgnoreFilter && !l.Filter.Matches(ev.Source, ev.Type) {
		return usagef("%s (%s, %s) is not for %s: its filter does not select it; --ignore-filter sends it anyway", id, ev.Source, ev.Type, l.Destination)
	}
	return send(ev)
}

// lastWritten is the latest time a delivery record of the event mentions.
func (o *Operator) lastWritten(ctx context.Context, id string) (time.Time, bool, error) {
	var latest time.Time
	for _, l := range o.Resources.Lanes {
		r, ok, err := o.Records.Get(ctx, dedupe.Key(l.Destination, id))
		if err != nil {
			return latest, false, err
		}
		if !ok {
			continue
		}
		for _, t := range []time.Time{r.FirstAttemptAt, r.DeliveredAt} {
			if t.After(latest) {
				latest = t
			}
		}
	}
	return latest, !latest.IsZero(), nil
}

// unreadableBody refuses an event whose body is in S3 under a source the
// lane's function may not read (its grant covers its filter's sources
// only): sent with --ignore-filter, it could not be delivered.
func unreadableBody(l Lane, ev archive.Event) error {
	if dec, _ := ev.Decode(); dec.Encoding != message.Stored || len(l.Filter.Sources) == 0 || slices.Contains(l.Filter.Sources, ev.Source) {
		return nil
	}
	return fmt.Errorf("event %s of source %s: its body is in S3 under %s, which %s's function may not read (it reads its filter's sources' only: %s); it is not replayed. Fix: add %s to %s's filter.sources and deploy, or replay it to a destination that takes %s",
		ev.ID, ev.Source, payload.SourcePrefix(ev.Source), l.Destination, strings.Join(l.Filter.Sources, ", "), ev.Source, l.Destination, ev.Source)
}

// sendReplay sends an archived event to the lane's queue with its
// attributes and the replay attribute. A body stored in S3 is written to
// the payload bucket again first, from the archive's copy once the
// bucket's lifecycle removed it (restoreBody).
func (o *Operator) sendReplay(ctx context.Context, l Lane, ev archive.Event, replayID string) (string, error) {
	attrs, err := replayAttributes(ev, replayID)
	if err != nil {
		return "", err
	}
	dec, _ := ev.Decode()
	stored, err := o.restoreBody(ctx, stored{id: ev.ID, receivedAt: ev.ReceivedAt,
		ref: dec.Encoding == message.Stored, body: ev.Message, outcome: "it is not replayed"})
	if err != nil {
		return "", err
	}
	in := &sqs.SendMessageInput{QueueUrl: &l.QueueURL, MessageBody: &ev.Message, MessageAttributes: attrs}
	l.replayGroup(in, ev, replayID, stored) // ordered.go
	out, err := o.SQS.SendMessage(ctx, in)
	if err != nil {
		return "", err
	}
	return aws.ToString(out.MessageId), nil
}

// replayAttributes renders an archived event's attributes for SQS
// (sqsattr.ToSQS), every one as it was published, with the replay
// attribute, within SQS's limit of ten.
func replayAttributes(ev archive.Event, replayID string) (map[string]sqstypes.MessageAttributeValue, error) {
	attrs := make(message.Attributes, len(ev.Attributes)+1)
	maps.Copy(attrs, ev.Attributes) // an earlier replay id, never archived, is replaced
	attrs[message.AttrReplay] = message.Attribute{Type: message.TypeString, Value: replayID}
	if len(attrs) > message.MaxAttributes {
		return nil, fmt.Errorf("the event has %d attributes; with the replay attribute that is more than SQS's %d", len(attrs)-1, message.MaxAttributes)
	}
	return sqsattr.ToSQS(attrs)
}

// newReplayID names a replay after its start time, with a random suffix.
func newReplayID(now time.Time) string {
	b := make([]byte, 3)
	_, _ = rand.Read(b) // never fails (crypto/rand panics on an unusable source)
	return message.ReplayIDPrefix + now.UTC().Format("20060102T150405Z") + "_" + hex.EncodeToString(b)
}
