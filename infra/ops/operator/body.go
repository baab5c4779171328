package operator

import (
	"context"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/payload"
)

// Body is an event's body as the archive (or, for a large one, the payload
// store) keeps it.
type Body struct {
	// Found is false when neither holds the event; Note says why.
	Found bool
	Note  string
	// Where says which store the bytes came from.
	Where                     string
	Source, Type, ContentType string
	ReceivedAt                time.Time
	Bytes                     []byte
}

// Text reports whether the body is UTF-8 text (else it is shown as bytes).
func (b Body) Text() bool { return utf8.Valid(b.Bytes) }

// bodyWindow is how far around an event's first attempt its body is looked
// for in the archive (it was received shortly before).
const bodyWindow = 2 * time.Hour

// EventBody reads the body of the event st names from the archive, in the
// hours around its first attempt at any destination (the last day when no
// destination attempted it), and from the payload store when the archived
// message refers to a stored body.
func (o *Operator) EventBody(ctx context.Context, st EventStatus) (Body, error) {
	if o.Archive == nil {
		return Body{Note: o.Resources.Where + " keeps no archive (archive.days is 0): the body is not kept"}, nil
	}
	var first time.Time
	for _, ds := range st.Destinations {
		if t := ds.Record.FirstAttemptAt; ds.HasRecord && !t.IsZero() && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	earliest, latest := o.now().Add(-24*time.Hour), o.now()
	if !first.IsZero() {
		earliest, latest = first.Add(-bodyWindow), first.Add(bodyWindow/4)
	}
	ev, ok, _, err := o.Archive.Find(ctx, st.ID, earliest, latest, archive.Options{})
	if err != nil {
		return Body{}, fmt.Errorf("read the archive: %w", err)
	}
	if !ok {
		return Body{Note: fmt.Sprintf("not in the archive between %s and %s", stamp(earliest), stamp(latest))}, nil
	}
	dec, _ := ev.Decode()
	b := Body{Found: true, Where: "archive", Source: ev.Source, Type: ev.Type, ContentType: dec.ContentType, ReceivedAt: ev.ReceivedAt}
	if dec.Encoding != message.Stored {
		b.Bytes, err = dec.Bytes()
		return b, err
	}
	ref, err := payload.ParseReference(dec.Body)
	if err != nil {
		return b, fmt.Errorf("event %s: %w", st.ID, err)
	}
	if o.Payloads == nil {
		return Body{Note: "its body is in the payload store, which " + o.Resources.Where + " does not name"}, nil
	}
	b.Where = "payload store"
	b.Bytes, err = o.Payloads.Get(ctx, ref)
	if payload.IsGone(err) {
		b.Where = "archive (payload copy)"
		b.Bytes, err = o.Payloads.GetArchived(ctx, ref)
	}
	if payload.IsGone(err) {
		return Body{Note: "its body expired from the payload store and the archive"}, nil
	}
	return b, err
}
