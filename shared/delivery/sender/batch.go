package sender

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"mime"
	"strings"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/message"
)

// BatchSender is a Sender that also sends several events in one attempt.
type BatchSender interface {
	Sender
	// SendBatch makes one attempt of ds (in order, at most the lane's maxEvents) and returns one
	// Result per delivery, in the same order (an HTTP batch gives every entry the same Result).
	SendBatch(ctx context.Context, ds []Delivery) []Result
}

// The batch envelope (docs/subscribers.md#batches): a JSON object whose
// events array holds one item per event, in the batch's order:
//
//	{"events":[{"id":"…","type":"…","source":"…","accepted_at":"…",
//	  "content_type":"application/json","data":{…}}, …]}
//
// An item carries the event's body as data, verbatim, when it is JSON
// (a JSON content type and a body that is valid JSON in UTF-8), and as
// data_base64 (standard base64) otherwise.
const (
	batchOpen  = `{"events":[`
	batchClose = `]}`
	// BatchOverhead is the bytes of an envelope besides its items and the
	// commas between them.
	BatchOverhead = len(batchOpen) + len(batchClose)
	// BatchIDPrefix starts every batch's webhook-id.
	BatchIDPrefix = "batch_"
)

// ErrEmptyBatch is BatchBody's refusal of a batch of no events.
var ErrEmptyBatch = errors.New("batch: no events")

// batchItem is an envelope item besides its data, in the order written.
type batchItem struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Source      string `json:"source"`
	AcceptedAt  string `json:"accepted_at,omitempty"`
	ContentType string `json:"content_type,omitempty"`
	// Reconciled is what hookfan-reconciled says of one event alone.
	Reconciled bool `json:"reconciled,omitempty"`
}

// BatchItem is d's item in a batch envelope, the exact bytes BatchBody
// writes for it: its size, with BatchOverhead and a comma between items,
// is what a batch's body weighs.
func BatchItem(d Delivery) ([]byte, error) {
	it := batchItem{ID: d.ID, Type: d.Type, Source: d.Source, ContentType: d.ContentType, Reconciled: d.Reconciled}
	if !d.ReceivedAt.IsZero() {
		it.AcceptedAt = d.ReceivedAt.UTC().Format(message.ReceivedAtLayout)
	}
	head, err := json.Marshal(it)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Grow(len(head) + len(d.Body)*4/3 + 24)
	b.Write(head[:len(head)-1]) // without its closing brace
	if JSONBody(d.ContentType, d.Body) {
		b.WriteString(`,"data":`)
		b.Write(d.Body)
	} else {
		b.WriteString(`,"data_base64":"`)
		enc := base64.NewEncoder(base64.StdEncoding, &b)
		_, _ = enc.Write(d.Body)
		_ = enc.Close()
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// BatchBytes is the bytes of the envelope of items of the given sizes.
func BatchBytes(itemSizes ...int) int {
	n := BatchOverhead
	for i, s := range itemSizes {
		if i > 0 {
			n++
		}
		n += s
	}
	return n
}

// BatchBody is the envelope of ds, in order: the body one POST of the
// batch carries, and which its signature covers.
func BatchBody(ds []Delivery) ([]byte, error) {
	if len(ds) == 0 {
		return nil, ErrEmptyBatch
	}
	var b bytes.Buffer
	b.WriteString(batchOpen)
	for i, d := range ds {
		item, err := BatchItem(d)
		if err != nil {
			return nil, err
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(item)
	}
	b.WriteString(batchClose)
	return b.Bytes(), nil
}

// BatchID is the batch's webhook-id: derived from its events' ids in
// order, so that a retry of the same events keeps it. It contains no '.'.
func BatchID(ds []Delivery) string {
	h := sha256.New()
	for _, d := range ds {
		h.Write([]byte(d.ID))
		h.Write([]byte{0})
	}
	return BatchIDPrefix + hex.EncodeToString(h.Sum(nil)[:16])
}

// JSONBody reports whether a body goes in a batch item as data: its
// content type is JSON (application/json, or a +json type) and it is
// valid JSON in UTF-8.
func JSONBody(contentType string, body []byte) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil || !(mt == "application/json" || strings.HasSuffix(mt, "+json")) {
		return false
	}
	return utf8.Valid(body) && json.Valid(body)
}
