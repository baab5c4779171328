package ingest

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/verify"
)

// orderedRoute is one ordering key spec, ready to read keys with.
type orderedRoute struct {
	route config.OrderingRoute
	key   config.OrderingKey
}

// newOrderedRoutes parses the routes handed to ingest (already checked
// by config.DecodeOrderingRoutes).
func newOrderedRoutes(routes []config.OrderingRoute) ([]orderedRoute, error) {
	out := make([]orderedRoute, 0, len(routes))
	for _, r := range routes {
		k, err := config.ParseOrderingKey(r.Key)
		if err != nil {
			return nil, fmt.Errorf("ingest: ordering route: %w", err)
		}
		out = append(out, orderedRoute{route: r, key: k})
	}
	return out, nil
}

// orderedCopyBytes is what the largest ordered copy of an event of source
// adds to its standard message: the message.AttrOrderingKey attribute of the longest
// spec among the routes taking source, as messageSize counts it; 0 when
// none takes it. The standard message is built within one SNS message
// less this, so a body whose copy would not fit goes to the payload store
// (or gets 413) instead of failing every publish of it.
func orderedCopyBytes(routes []orderedRoute, source string) int {
	n := 0
	for _, r := range routes {
		if r.route.Takes(source) {
			n = max(n, len(message.AttrOrderingKey)+len(message.TypeString)+len(r.route.Key))
		}
	}
	return n
}

// keyed is what an event's ordered copies are read from: the request's
// headers and body, and the event its standard message encodes.
type keyed struct {
	hdr   verify.Header
	body  []byte
	event message.Event
}

// orderedCopies are the FIFO topic's inputs for an event whose standard
// message encodes ev.event: one per route taking the event's source, each
// the event with the route's spec as its ordering key
// (message.AttrOrderingKey, which each ordered subscription filters on),
// the group id of its key, and a deduplication id of its own (the same for
// a provider's retry of the event).
func (h *Handler) orderedCopies(source, eventID string, ev keyed) ([]*sns.PublishInput, error) {
	var out []*sns.PublishInput
	for _, r := range h.orderedRoutes {
		if !r.route.Takes(source) {
			continue
		}
		e := ev.event
		e.OrderingKey = r.route.Key
		c, size := encode(h.orderedTopicARN, e)
		c.MessageGroupId = aws.String(config.GroupID(source, r.key.Value(ev.hdr.Values, ev.body)))
		c.MessageDeduplicationId = aws.String(config.DedupID(eventID, r.route.Key))
		if size > config.MaxSNSMessageBytes {
			return nil, fmt.Errorf("%w: the ordered copy takes %d bytes with its attributes", errMessageTooLarge, size)
		}
		out = append(out, c)
	}
	return out, nil
}

// publishAll publishes in to the fan-out topic and, when some destination
// is ordered, its ordered copies to the FIFO topic, all at once. It fails
// unless every publish succeeded: the provider then retries, and what was
// published already is absorbed downstream (the FIFO topic drops a copy
// with a deduplication id it saw within 5 minutes; each lane's delivery
// record refuses an event it delivered).
func (h *Handler) publishAll(ctx context.Context, in *sns.PublishInput, source, eventID string, ev keyed) error {
	if h.orderedTopicARN == "" {
		_, err := h.publisher.Publish(ctx, in)
		return err
	}
	copies, err := h.orderedCopies(source, eventID, ev)
	if err != nil {
		return err
	}
	all := append([]*sns.PublishInput{in}, copies...)
	errs := make([]error, len(all))
	var wg sync.WaitGroup
	for i, p := range all {
		wg.Go(func() {
			if _, err := h.publisher.Publish(ctx, p); err != nil {
				what := "the fan-out topic"
				if i > 0 {
					what = fmt.Sprintf("the FIFO topic (ordering key %s)", aws.ToString(p.MessageAttributes[message.AttrOrderingKey].StringValue))
				}
				errs[i] = fmt.Errorf("publish to %s: %w", what, err)
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
