// Package message holds the message contract between ingest and the
// deliver functions: the SNS message attributes that travel with each
// event's exact body (raw delivery into each destination's queue).
package message

// Attribute names, all of data type String.
const (
	AttrSource      = "source"       // the source name, [a-z0-9-]{1,64}
	AttrType        = "type"         // the event type; filter policies match it
	AttrID          = "id"           // the Hookfan event id: deterministic, no '.'
	AttrReceivedAt  = "received_at"  // when ingest accepted it, ReceivedAtLayout
	AttrContentType = "content_type" // the provider's Content-Type
	// AttrEncoding is EncodingBase64 when the body is the base64 of the
	// provider's bytes (they were not valid UTF-8); absent otherwise.
	AttrEncoding = "encoding"
)

// EncodingBase64 is the only AttrEncoding value.
const EncodingBase64 = "base64"

// ReceivedAtLayout is AttrReceivedAt's format: RFC 3339 in UTC with milliseconds.
const ReceivedAtLayout = "2006-01-02T15:04:05.000Z"
