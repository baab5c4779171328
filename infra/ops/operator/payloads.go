package operator

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hookfan/hookfan/shared/payload"
)

// PayloadStore is the part of the payload store (payload.S3) the operator
// uses: a body too large for one SNS message is read from the payload
// bucket or, past its lifecycle, from the archive's copy, and written
// again before its message goes back to a queue.
type PayloadStore interface {
	Get(ctx context.Context, ref payload.Reference) ([]byte, error)
	GetArchived(ctx context.Context, ref payload.Reference) ([]byte, error)
	Restore(ctx context.Context, ref payload.Reference, body []byte) error
}

// errBodyLost marks a message whose body can no longer be found: it is
// not sent (a subscriber would get nothing), and the command says so.
var errBodyLost = errors.New("the event's body is in neither the payload bucket nor the archive")

// stored describes a message's body for restoreBody.
type stored struct {
	id         string
	receivedAt time.Time // zero when unknown
	// ref is set when the message's body is a payload reference.
	ref  bool
	body string
	// outcome says what becomes of the message when its body is lost.
	outcome string
}

// restoreBody writes again the body a message refers to (payload=s3), so
// that its object's lifecycle starts now, with the new life the message
// begins in the queue: up to the queue's retention, then the DLQ's 14 days,
// then a console redrive's queue retention, which the lifecycle covers
// (config.PayloadExpirationDays). The body comes from the payload bucket
// or, once the lifecycle removed it, from the archive's copy. A message
// whose body is in neither is refused with errBodyLost and its age. It
// returns the body written (nil for a message that carries its own).
func (o *Operator) restoreBody(ctx context.Context, m stored) ([]byte, error) {
	if !m.ref {
		return nil, nil
	}
	ref, err := payload.ParseReference(m.body)
	if err != nil {
		return nil, fmt.Errorf("event %s: %w", m.id, err)
	}
	if o.Payloads == nil {
		return nil, fmt.Errorf("event %s refers to a stored body (%s), but %s names no payload bucket; run this version's stack (its index names it)", m.id, ref.Key, o.Resources.Where)
	}
	body, err := o.Payloads.Get(ctx, ref)
	if payload.IsGone(err) {
		body, err = o.Payloads.GetArchived(ctx, ref)
		if payload.IsGone(err) {
			return nil, o.lost(m, ref)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("event %s: read its body: %w", m.id, err)
	}
	if err := o.Payloads.Restore(ctx, ref, body); err != nil {
		return nil, fmt.Errorf("event %s: write its body again before sending it: %w", m.id, err)
	}
	return body, nil
}

// lost is the refusal of a message whose body exists nowhere, naming its
// age, why and what to do.
func (o *Operator) lost(m stored, ref payload.Reference) error {
	age := "of unknown age"
	if t := m.receivedAt; !t.IsZero() {
		age = fmt.Sprintf("received %s, %s ago", stamp(t), ageText(o.now().Sub(t)))
	}
	archive := fmt.Sprintf("the archive keeps its copy %d days", o.Resources.ArchiveDays)
	if o.Resources.ArchiveBucket == "" {
		archive = "the archive is off (archive.days 0)"
	}
	return fmt.Errorf("%w: event %s (%s): its body %s expired from the payload bucket (objects are kept %d days after they were last written) and %s; "+
		"%s. Fix: ask the provider to send the event again (its dashboard or API)",
		errBodyLost, m.id, age, ref.Key, o.Resources.PayloadDays, archive, m.outcome)
}

// ageText is an event's age for a person: in days past two days.
func ageText(d time.Duration) string {
	if d >= 48*time.Hour {
		return fmt.Sprintf("%d days", int(d/(24*time.Hour)))
	}
	return d.Round(time.Minute).String()
}
