package config

import (
	"encoding/json"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// Batch bounds. A batched lane's event source mapping hands one deliver
// function up to MaxEvents messages, waiting up to Window for them; the
// function sends them in POSTs of at most MaxEvents events and MaxBytes
// bytes of body (docs/decisions.md#batched-delivery).
const (
	// MaxBatchEvents is the SQS event source mapping's largest batch size
	// on a standard queue.
	MaxBatchEvents = 10000
	// MaxOrderedBatchEvents is its largest on a FIFO queue (an ordered
	// lane).
	MaxOrderedBatchEvents = 10
	// MaxBatchEventsNoWindow is the largest batch size the mapping takes
	// without a batching window of at least a second.
	MaxBatchEventsNoWindow = 10
	// MaxBatchWindow is the mapping's longest batching window.
	MaxBatchWindow = MaxBatchWindowSeconds * time.Second

	// DefaultBatchMaxBytes is a batch body's default ceiling: 1 MiB, what
	// a receiver behind a stock nginx (client_max_body_size 1m) accepts.
	DefaultBatchMaxBytes = 1 << 20
	// MaxBatchMaxBytes is the ceiling of maxBytes on an https lane: 6 MB,
	// Lambda's synchronous invocation payload, what a receiver on a
	// function URL or behind API Gateway and Lambda accepts, and more than
	// one invocation of the deliver function receives.
	MaxBatchMaxBytes = 6 << 20
	// MaxBatchMaxBytesAWS is the ceiling (and default) on an sqs or
	// eventbridge lane: 256 KiB, the most one SendMessageBatch or PutEvents
	// request carries.
	MaxBatchMaxBytesAWS = 256 << 10
	// MinBatchMaxBytes is the least maxBytes: an event larger than the
	// ceiling goes alone, so a small ceiling only stops batching.
	MinBatchMaxBytes = 1 << 10
)

// Batch sends several events of a lane in one attempt: one signed POST
// whose body holds up to MaxEvents events (an sqs or eventbridge lane: one
// batch API call). Absent (nil), the lane sends one event per attempt.
//
// In JSON: {"maxEvents": N, "windowSeconds": S, "maxBytes": B}.
type Batch struct {
	// MaxEvents is the most events in one batch, and the event source
	// mapping's batch size.
	MaxEvents int `json:"maxEvents"`
	// Window is how long the event source mapping gathers events before it
	// invokes the deliver function (whole seconds, 0 to 300).
	Window time.Duration `json:"-"`
	// MaxBytes is the most bytes of one batch's body (0: the default). An
	// event too big to share a batch under it goes alone.
	MaxBytes int `json:"maxBytes,omitempty"`
}

// maxWindowRead is the most seconds a windowSeconds is read as (about 31
// years, far outside its range, well inside a Duration's).
const maxWindowRead = 1e9

// batchJSON is a batch block as the configuration spells it.
type batchJSON struct {
	MaxEvents     int     `json:"maxEvents,omitempty"`
	WindowSeconds float64 `json:"windowSeconds,omitempty"`
	MaxBytes      int     `json:"maxBytes,omitempty"`
}

// MarshalJSON writes the batch block as the configuration spells it
// (windowSeconds in seconds), for encoding/json, which renders a deliver
// function's environment.
func (b Batch) MarshalJSON() ([]byte, error) {
	return json.Marshal(batchJSON{b.MaxEvents, b.Window.Seconds(), b.MaxBytes})
}

// UnmarshalJSONFrom reads a batch block with the decoder's (strict)
// options: its problems keep their paths.
func (b *Batch) UnmarshalJSONFrom(dec *jsontext.Decoder) error {
	var v batchJSON
	if err := jsonv2.UnmarshalDecode(dec, &v); err != nil {
		return err
	}
	// Clamped where a Duration still holds it, so that validation refuses
	// an absurd window instead of reading an overflow.
	secs := max(-maxWindowRead, min(v.WindowSeconds, maxWindowRead))
	*b = Batch{MaxEvents: v.MaxEvents, Window: time.Duration(secs * float64(time.Second)), MaxBytes: v.MaxBytes}
	return nil
}

// Batching returns the destination's batch settings with their defaults
// applied (MaxBytes), and false when the lane is not batched.
func (d Destination) Batching() (Batch, bool) {
	if d.Batch == nil {
		return Batch{}, false
	}
	b := *d.Batch
	if b.MaxBytes == 0 {
		b.MaxBytes = d.batchBytesCeiling()
		if d.TargetType() == TypeHTTPS {
			b.MaxBytes = DefaultBatchMaxBytes
		}
	}
	return b, true
}

// batchBytesCeiling is the most maxBytes may be on the destination's type.
func (d Destination) batchBytesCeiling() int {
	switch d.TargetType() {
	case TypeSQS, TypeEventBridge:
		return MaxBatchMaxBytesAWS
	}
	return MaxBatchMaxBytes
}

// validateBatch checks a batch block against the event source mapping's
// limits and the lane's other settings.
// at is the destination's path.
func (d *Destination) validateBatch(p *problems, dest string) {
	b, at := d.Batch, dest+".batch"
	if d.BatchSize != 0 {
		p.add(dest+".batchSize", "%d is set beside batch; on a batched lane batch.maxEvents is the batch size: remove batchSize", d.BatchSize)
	}
	if d.BatchWindowSeconds != 0 {
		p.add(dest+".batchWindowSeconds", "%d is set beside batch; on a batched lane batch.windowSeconds is the window: remove batchWindowSeconds", d.BatchWindowSeconds)
	}
	most := MaxBatchEvents
	if d.Ordered() {
		most = MaxOrderedBatchEvents
	}
	switch {
	case b.MaxEvents == 0:
		p.add(at+".maxEvents", "is not set; set the most events one POST carries, 1 to %d (e.g. {\"maxEvents\": 100, \"windowSeconds\": 1}), or remove batch", most)
	case b.MaxEvents < 0 || b.MaxEvents > MaxBatchEvents:
		p.add(at+".maxEvents", "%d is out of range; use 1 to %d (the SQS event source mapping's batch size)", b.MaxEvents, most)
	case b.MaxEvents > most:
		p.add(at+".maxEvents", "%d is more than an ordered lane's FIFO queue hands one invocation; use 1 to %d", b.MaxEvents, MaxOrderedBatchEvents)
	}
	windowOK := true
	switch {
	case b.Window < 0 || b.Window > MaxBatchWindow:
		p.add(at+".windowSeconds", "%g is out of range; use 0 to %d seconds", b.Window.Seconds(), MaxBatchWindowSeconds)
		windowOK = false
	case b.Window%time.Second != 0:
		p.add(at+".windowSeconds", "%g is not a whole number of seconds; the event source mapping's window is whole seconds: use %d", b.Window.Seconds(), int((b.Window+time.Second-1)/time.Second))
		windowOK = false
	}
	if windowOK && d.Ordered() && b.Window != 0 {
		p.add(at+".windowSeconds", "is %d on an ordered lane; the event source mapping of a FIFO queue takes no batching window: remove windowSeconds (an ordered lane's batch fills from what is waiting)", int(b.Window/time.Second))
	}
	if windowOK && !d.Ordered() && b.MaxEvents > MaxBatchEventsNoWindow && b.Window < time.Second {
		p.add(at+".windowSeconds", "is %d with maxEvents %d; the event source mapping takes a batch size over %d only with a window of at least 1 second: set windowSeconds to 1 or more, or maxEvents to %d or fewer", int(b.Window/time.Second), b.MaxEvents, MaxBatchEventsNoWindow, MaxBatchEventsNoWindow)
	}
	if ceiling := d.batchBytesCeiling(); b.MaxBytes != 0 && (b.MaxBytes < MinBatchMaxBytes || b.MaxBytes > ceiling) {
		why := "Lambda's 6 MB synchronous payload, what a receiver on Lambda accepts"
		if ceiling == MaxBatchMaxBytesAWS {
			why = "what one " + map[string]string{TypeSQS: "SendMessageBatch", TypeEventBridge: "PutEvents"}[d.TargetType()] + " request carries"
		}
		p.add(at+".maxBytes", "%d is out of range; use %d to %d (%s), or leave it out (default %d)", b.MaxBytes, MinBatchMaxBytes, ceiling, why, Destination{Type: d.Type, Batch: &Batch{}}.batchDefaultBytes())
	}
}

func (d Destination) batchDefaultBytes() int {
	b, _ := d.Batching()
	return b.MaxBytes
}

// Batched reports whether any destination sends batches.
func (c *Config) Batched() bool {
	for _, d := range c.Destinations {
		if d.Batch != nil {
			return true
		}
	}
	return false
}
