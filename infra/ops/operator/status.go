package operator

import (
	"context"
	"fmt"
	"strings"
	"time"

	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/hookfan/hookfan/shared/dedupe"
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
	ID           string
	Destinations []DestinationStatus
}

// Status reports an event at every destination: its delivery record
// (state, attempts and their history, the next attempt) and whether it
// waits in the DLQ.
func (o *Operator) Status(ctx context.Context, event string) (EventStatus, error) {
	id, err := EventID(event)
	if err != nil {
		return EventStatus{}, err
	}
	st := EventStatus{ID: id}
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
	return st, nil
}

func (o *Operator) printStatus(st EventStatus) {
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
			o.printf("%s\n", line)
		}
	}
	if !r.ExpiresAt.IsZero() {
		o.printf("  record kept until %s\n", stamp(r.ExpiresAt))
	}
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

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
