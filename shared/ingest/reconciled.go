package ingest

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/message"
)

// Reconciled is an event a reconciliation run (shared/reconcile) found at
// the provider that never reached ingest, as the provider's API returned
// it: the body the provider would have sent, and the headers that carry
// its id and type where the kind reads them there.
type Reconciled struct {
	Source string
	Body   []byte
	// Header holds what the kind's Identify reads from headers (none for
	// Stripe, whose id and type are in the body).
	Header http.Header
	// ContentType is the provider's (default DefaultContentType).
	ContentType string
}

// Published is the event a reconciled event was published as.
type Published struct {
	// ID is the Hookfan event id, the one ingest gives the provider's
	// deliveries of the event; Type its type; ProviderID the provider's own
	// id.
	ID, Type, ProviderID string
}

// Errors of PublishReconciled that say the event itself is at fault
// (nothing was published): the reconciler skips it.
var (
	ErrReconciledSource = errors.New("reconciled event: unknown source")
	ErrReconciledEvent  = errors.New("reconciled event: does not identify")
)

// PublishReconciled publishes a reconciled event through the path an
// accepted request takes: the kind's Identify on its body and headers
// gives the same id and type, the same message codec and size checks
// (large bodies through the payload store), the fan-out topic and the
// ordered copies; the message carries reconciled=true (hookfan-reconciled
// on delivery). No signature is checked: the body came from the
// provider's API under the source's credential, over TLS. An error
// matching ErrReconciledEvent or ErrReconciledSource means the event is at
// fault and nothing was published; any other means the publish failed.
func (h *Handler) PublishReconciled(ctx context.Context, r Reconciled) (Published, error) {
	src, ok := h.sources[r.Source]
	if !ok {
		return Published{}, fmt.Errorf("%w %q", ErrReconciledSource, r.Source)
	}
	if len(r.Body) == 0 || len(r.Body) > src.limit {
		return Published{}, fmt.Errorf("%w: body of %d bytes (the source takes 1 to %d)", ErrReconciledEvent, len(r.Body), src.limit)
	}
	hdr := r.Header
	if hdr == nil {
		hdr = http.Header{}
	}
	ident, err := src.kind.Identify(src.params, hdr, r.Body)
	switch {
	case err != nil:
		return Published{}, fmt.Errorf("%w: %w", ErrReconciledEvent, err)
	case ident.Handshake:
		return Published{}, fmt.Errorf("%w: a handshake, not an event", ErrReconciledEvent)
	case !message.ValidAttribute(ident.ID):
		return Published{}, fmt.Errorf("%w: event id %s", ErrReconciledEvent, quoteStart(ident.ID))
	case !message.ValidAttribute(ident.Type):
		return Published{}, fmt.Errorf("%w: event type %s", ErrReconciledEvent, quoteStart(ident.Type))
	}
	ct := r.ContentType
	if ct == "" || !message.ValidAttribute(ct) {
		ct = DefaultContentType
	}
	text := message.Text
	if ident.JSONText {
		text = message.JSONText
	}
	id := EventID(src.name, ident.ID)
	msg := draft{body: r.Body, text: text(r.Body), copyBytes: src.copyBytes, event: message.Event{
		Source: src.name, Type: ident.Type, ID: id, ContentType: ct, ReceivedAt: h.now(), Reconciled: true,
	}}
	req := &events.APIGatewayProxyRequest{Body: string(r.Body)}
	in, ev, code, err := h.message(ctx, req, msg)
	if code != "" {
		if code == CodeBodyTooLarge {
			return Published{}, fmt.Errorf("%w: %w", ErrReconciledEvent, err)
		}
		return Published{}, fmt.Errorf("%s: %w", code, err)
	}
	if err := h.publishAll(ctx, in, src.name, id, keyed{hdr: hdr, body: r.Body, event: ev}); err != nil {
		return Published{}, err
	}
	return Published{ID: id, Type: ident.Type, ProviderID: ident.ID}, nil
}
