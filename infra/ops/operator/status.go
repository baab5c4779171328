package operator

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
)

// MaxDLQScan bounds how many DLQ messages status reads per destination
// looking for the event.
const MaxDLQScan = 1000

// DestinationStatus is one destination's view of an event.
type DestinationStatus struct {
	Destination string
	Record      dedupe.Record
	HasRecord   bool
	// InDLQ is whether the event waits in the destination's DLQ; DLQScanned
	// of DLQDepth messages were read to find out.
	InDLQ                bool
	DLQScanned, DLQDepth int
}

// EventStatus is an event at every destination.
type EventStatus struct {
	ID string
	// ResolvedAs is source:provider-id when the argument was a provider's
	// event id without its source, found by trying each source's.
	ResolvedAs   string
	Destinations []DestinationStatus
}

// ErrNoSuchEvent means no destination has a record of the event, nor holds
// it in its DLQ.
var ErrNoSuchEvent = errors.New("no such event")

// Status reports an event at every destination: its delivery record
// (state, attempts and their history, the next attempt) and whether it
// waits in the DLQ. The event is a Hookfan event id, source:provider-id,
// or a provider's id alone (resolveEvent). It fails with ErrNoSuchEvent,
// after printing what it read, when nothing holds the event.
func (o *Operator) Status(ctx context.Context, event string) (EventStatus, error) {
	id, as, err := o.resolveEvent(ctx, event)
	if err != nil {
		return EventStatus{}, err
	}
	st := EventStatus{ID: id, ResolvedAs: as}
	for _, l := range o.Resources.Lanes {
		ds := DestinationStatus{Destination: l.Destination}
		ds.Record, ds.HasRecord, err = o.Records.Get(ctx, dedupe.Key(l.Destination, id))
		if err != nil {
			return st, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		d, err := o.depth(ctx, l.DLQURL)
		if err != nil {
			return st, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		ds.DLQDepth = d.total()
		if ds.DLQDepth > 0 {
			ds.DLQScanned, err = o.peek(ctx, l.DLQURL, min(ds.DLQDepth, MaxDLQScan), func(m sqstypes.Message) bool {
				ds.InDLQ = decoded(m).ID == id
				return !ds.InDLQ
			})
			if err != nil {
				return st, fmt.Errorf("destination %s: %w", l.Destination, err)
			}
		}
		st.Destinations = append(st.Destinations, ds)
	}
	o.printStatus(st)
	for _, ds := range st.Destinations {
		if ds.HasRecord || ds.InDLQ {
			return st, nil
		}
	}
	named := event
	if id != event {
		named += " (" + id + ")"
	}
	return st, fmt.Errorf("%w: no destination has a record of %s nor holds it in its DLQ: check the id and its source (ops events --since 1h lists recent events), or it was filtered out everywhere or is still queued",
		ErrNoSuchEvent, named)
}

// resolveEvent finds the event an operator names: as given (a Hookfan
// event id, or source:provider-id) when a destination has a record of it;
// else as a provider's event id from each of the stack's sources. One
// source's match resolves it (as says which); several are ambiguous; none
// leaves the argument as given (status then reports what the DLQs hold)
// or, when it is not an event id at all, fails.
func (o *Operator) resolveEvent(ctx context.Context, arg string) (id, as string, err error) {
	if err := checkEventArg(arg); err != nil {
		return "", "", err
	}
	given, givenErr := EventID(arg)
	if givenErr == nil {
		found, err := o.hasRecord(ctx, given)
		if err != nil || found {
			return given, "", err
		}
	}
	var matches []string
	for _, src := range o.Resources.Sources {
		derived := ingest.EventID(src, arg)
		found, err := o.hasRecord(ctx, derived)
		if err != nil {
			return "", "", err
		}
		if found {
			matches = append(matches, src)
		}
	}
	switch {
	case len(matches) == 1:
		return ingest.EventID(matches[0], arg), matches[0] + ":" + arg, nil
	case len(matches) > 1:
		forms := make([]string, len(matches))
		for i, src := range matches {
			forms[i] = fmt.Sprintf("%s:%s (%s)", src, arg, ingest.EventID(src, arg))
		}
		return "", "", fmt.Errorf("%q is an event of several sources: %s; give the one you mean as source:%s", arg, strings.Join(forms, ", "), arg)
	case givenErr == nil:
		return given, "", nil
	}
	return "", "", fmt.Errorf("%w: no destination has a record of %q as a Hookfan event id or as the event id of any source (%s): check the id, or give it as source:provider-event-id (ops events --since 1h lists recent events)",
		ErrNoSuchEvent, arg, sourceList(o.Resources.Sources))
}

// checkEventArg refuses what cannot be an event id of any kind.
func checkEventArg(arg string) error {
	if arg == "" || strings.ContainsFunc(arg, func(r rune) bool { return r <= ' ' || r == 0x7f }) {
		return usagef("%q is not an event id: give a Hookfan event id (evt_…), source:provider-event-id (stripe:evt_1Nx…) or the provider's id alone", arg)
	}
	return nil
}

func sourceList(sources []string) string {
	if len(sources) == 0 {
		return "none known"
	}
	return strings.Join(sources, ", ")
}

// hasRecord reports whether any destination has a delivery record of id.
func (o *Operator) hasRecord(ctx context.Context, id string) (bool, error) {
	for _, l := range o.Resources.Lanes {
		_, ok, err := o.Records.Get(ctx, dedupe.Key(l.Destination, id))
		if err != nil {
			return false, fmt.Errorf("destination %s: %w", l.Destination, err)
		}
		if ok {
			return true, nil
		}
	}
	return false, nil
}

func (o *Operator) printStatus(st EventStatus) {
	if st.ResolvedAs != "" {
		o.printf("resolved to %s\n", st.ResolvedAs)
	}
	o.printf("event %s\n", st.ID)
	any := false
	for _, ds := range st.Destinations {
		o.printf("\n%s\n", ds.Destination)
		if !ds.HasRecord {
			o.printf("  no delivery record: never attempted (filtered out, still queued, or not received)\n")
		} else {
			any = true
			o.printRecord(ds.Record)
		}
		switch {
		case ds.InDLQ:
			o.printf("  in DLQ: yes\n")
		case ds.DLQScanned < ds.DLQDepth:
			o.printf("  in DLQ: not among the %d of %d messages read\n", ds.DLQScanned, ds.DLQDepth)
		default:
			o.printf("  in DLQ: no\n")
		}
	}
	if !any {
		o.printf("\nno destination has attempted %s\n", st.ID)
	}
}

func (o *Operator) printRecord(r dedupe.Record) {
	o.printf("  state %s, %d attempt(s); source %s, type %s\n", r.Status, r.Attempts, r.Source, r.Type)
	if !r.FirstAttemptAt.IsZero() {
		o.printf("  first attempt %s\n", stamp(r.FirstAttemptAt))
	}
	if !r.DeliveredAt.IsZero() {
		o.printf("  delivered %s\n", stamp(r.DeliveredAt))
	}
	if r.Status == dedupe.StatusInProgress && !r.LeaseUntil.IsZero() {
		o.printf("  held by a lease until %s\n", stamp(r.LeaseUntil))
	}
	if r.LastStatus != 0 || r.LastError != "" {
		o.printf("  last answer %s\n", answer(r.LastStatus, r.LastError))
	}
	if r.Status == dedupe.StatusFailed && !r.NextAttemptAt.IsZero() {
		o.printf("  next attempt due %s\n", stamp(r.NextAttemptAt))
	}
	if len(r.Replays) > 0 {
		o.printf("  replays that ended here: %s\n", strings.Join(r.Replays, ", "))
	}
	if len(r.History) > 0 {
		o.printf("  attempts (the last %d; oldest first):\n", dedupe.MaxHistory)
		for _, a := range r.History {
			line := fmt.Sprintf("    %s  %-9s %-12s %6dms", stamp(a.At), a.Outcome, httpStatus(a.HTTPStatus), a.Latency.Milliseconds())
			if a.Error != "" && a.Error != httpStatus(a.HTTPStatus) {
				line += "  " + quoted(a.Error)[1:]
			}
			if a.ClaimedBy != "" {
				line += "  by " + a.ClaimedBy
			}
			if a.Replay != "" {
				line += "  replay " + a.Replay
			}
			if a.Batch != "" {
				line += "  batch " + a.Batch
			}
			o.printf("%s\n", line)
			if len(a.Answer) > 0 {
				o.printf("      answered %s\n", answerText(a.Answer))
			}
		}
	}
	if !r.ExpiresAt.IsZero() {
		o.printf("  record kept until %s\n", stamp(r.ExpiresAt))
	}
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// answerText shows a receiver's answer on a terminal: text quoted, with
// control characters escaped (an answer cannot move the cursor or
// recolour the screen), and anything else as hex.
func answerText(b []byte) string {
	n := ""
	if len(b) >= dedupe.MaxAnswer {
		n = fmt.Sprintf(" (the first %d bytes)", len(b))
	}
	if utf8.Valid(b) {
		return strconv.Quote(string(b)) + n
	}
	return fmt.Sprintf("%d bytes, not text: %x", len(b), b) + n
}

func httpStatus(code int) string {
	if code == 0 {
		return "no response"
	}
	return fmt.Sprintf("HTTP %d", code)
}

// answer renders an attempt's outcome: the HTTP status, and the error
// when it says more than the status.
func answer(status int, err string) string {
	if err == "" || err == httpStatus(status) {
		return httpStatus(status)
	}
	return httpStatus(status) + quoted(err)
}

func quoted(s string) string {
	if s == "" {
		return ""
	}
	return fmt.Sprintf(" (%s)", strings.ReplaceAll(s, "\n", " "))
}
