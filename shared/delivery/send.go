package delivery

import (
	"time"

	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// delivery is what the lane's sender gets of a message for one attempt
// within timeout.
func (m Message) delivery(timeout time.Duration) sender.Delivery {
	return sender.Delivery{
		ID: m.ID, Source: m.Source, Type: m.Type, ContentType: m.ContentType, Body: m.Body,
		Attempt: m.Attempt, Replay: m.Replay, Reconciled: m.Reconciled, ReceivedAt: m.ReceivedAt, TraceHeader: m.TraceHeader, Group: m.Group,
		Timeout: timeout,
	}
}
