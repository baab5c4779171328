package message

import (
	"encoding/base64"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// AttrOrderingKey is set only on an event's ordered copy (the FIFO topic's
// message, and so an ordered lane's queue's): the ordering key spec the
// copy was grouped by; an ordered subscription's filter policy matches its
// destination's spec.
const AttrOrderingKey = "ordering_key"

// Limits on attribute values, checked by Decode. They keep headers, the
// delivery record's key and logs sane.
const (
	MaxIDBytes          = 256
	MaxSourceBytes      = 64
	MaxTypeBytes        = MaxAttributeBytes
	MaxContentTypeBytes = MaxAttributeBytes
	maxReceivedAtBytes  = 64
	maxAttemptedBytes   = 4 + 1 + 15
)

// Data types of message attributes.
const (
	TypeString = "String"
	TypeNumber = "Number"
	TypeBinary = "Binary"
)

// Attribute is one message attribute as SNS's notification JSON carries it
// (and the archive keeps it): its data type and its value, a Binary's as
// its standard base64.
type Attribute struct {
	Type  string `json:"Type"`
	Value string `json:"Value"`
}

// Binary reports whether the attribute is of data type Binary (with or
// without a custom suffix).
func (a Attribute) Binary() bool { return isBinary(a.Type) }

// Attributes are a message's attributes by name.
type Attributes map[string]Attribute

// Size is what the attributes add to a message's size as SNS and SQS
// count it: each name, data type and value.
func (a Attributes) Size() int {
	n := 0
	for k, v := range a {
		n += len(k) + len(v.Type) + len(v.Value)
	}
	return n
}

// Encoding is how a message's body holds the event's bytes.
type Encoding uint8

const (
	// Raw: the body is the provider's bytes, which are Text.
	Raw Encoding = iota
	// Base64: the body is the standard base64 of the provider's bytes
	// (attribute encoding=base64), which are not Text.
	Base64
	// Stored: the body is a payload reference (shared/payload) to the
	// provider's bytes in S3 (attribute payload=s3).
	Stored
)

// Attempted is the AttrAttempted attribute of a copy a paused lane's
// deliverer sent: the attempts the message had made, and when the copy was
// sent. Its zero value means the attribute is absent.
type Attempted struct {
	Attempts int
	At       time.Time
}

func (a Attempted) String() string {
	return strconv.Itoa(a.Attempts) + "@" + strconv.FormatInt(a.At.UnixMilli(), 10)
}

func parseAttempted(v string) (Attempted, bool) {
	n, ms, found := strings.Cut(v, "@")
	if !found || !isDigits(n) || !isDigits(ms) || len(n) > 4 || len(ms) > 15 {
		return Attempted{}, false
	}
	attempts, _ := strconv.Atoi(n)
	msv, _ := strconv.ParseInt(ms, 10, 64)
	return Attempted{Attempts: attempts, At: time.UnixMilli(msv)}, true
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// Event is one event's message as it travels from ingest through SNS and
// SQS to a destination: the message body and its attributes. It is the one
// codec of that format: ingest, the deliverer's SQS target and an
// operator's replay write it with Encode; the deliverer, the archive
// reader, an operator's redrive and dlq read it with Decode.
type Event struct {
	// ID is the Hookfan event id (AttrID), sent as webhook-id: 1 to
	// MaxIDBytes visible ASCII characters without '.'.
	ID string
	// Source is the source name (AttrSource), [a-z0-9-]{1,64}.
	Source string
	// Type is the event type (AttrType): 1 to MaxTypeBytes of UTF-8 without
	// control characters.
	Type string
	// ContentType is the provider's Content-Type (AttrContentType), as Type.
	ContentType string
	// ReceivedAt is when ingest accepted the event (AttrReceivedAt, written
	// as ReceivedAtLayout; any RFC 3339 time is read).
	ReceivedAt time.Time
	// Body is the message body as it travels, per Encoding. Bytes returns
	// the provider's bytes.
	Body     string
	Encoding Encoding
	// Replay is the operator's replay id (AttrReplay); "" on an event as
	// ingest published it.
	Replay string
	// OrderingKey is the ordering key spec of an ordered copy
	// (AttrOrderingKey); "" on the fan-out topic's message.
	OrderingKey string
	// Attempted is set on a paused lane's copy (AttrAttempted).
	Attempted Attempted
	// Paced is set on a paced lane's copy (AttrPaced): how often the rate
	// limit deferred the event; 0 when never.
	Paced int
	// Reconciled marks an event a reconciliation run brought in
	// (AttrReconciled).
	Reconciled bool
	// Extra are the attributes this codec does not know, carried through
	// unchanged; nil when there are none.
	Extra Attributes
}

// EncodeBody is the body and encoding the provider's bytes b travel as:
// the bytes themselves when they are Text, else their base64.
func EncodeBody(b []byte) (string, Encoding) {
	if Text(b) {
		return string(b), Raw
	}
	return base64.StdEncoding.EncodeToString(b), Base64
}

// Encode renders the event as a message: its body and its attributes,
// all of data type String but the Extra ones, which are kept as they are.
// It does not check the values: Decode does, on every reader's side, and
// every writer encodes values that were checked (ingest's own, or an event
// Decode accepted).
func (e Event) Encode() (string, Attributes) {
	attrs := make(Attributes, 6+len(e.Extra))
	for k, v := range e.Extra {
		attrs[k] = v
	}
	str := func(name, v string) { attrs[name] = Attribute{Type: TypeString, Value: v} }
	str(AttrSource, e.Source)
	str(AttrType, e.Type)
	str(AttrID, e.ID)
	str(AttrReceivedAt, e.ReceivedAt.UTC().Format(ReceivedAtLayout))
	if e.ContentType != "" {
		str(AttrContentType, e.ContentType)
	}
	switch e.Encoding {
	case Base64:
		str(AttrEncoding, EncodingBase64)
	case Stored:
		str(AttrPayload, PayloadS3)
	}
	if e.Replay != "" {
		str(AttrReplay, e.Replay)
	}
	if e.OrderingKey != "" {
		str(AttrOrderingKey, e.OrderingKey)
	}
	if e.Attempted != (Attempted{}) {
		str(AttrAttempted, e.Attempted.String())
	}
	if e.Paced > 0 {
		str(AttrPaced, strconv.Itoa(e.Paced))
	}
	if e.Reconciled {
		str(AttrReconciled, ReconciledTrue)
	}
	return e.Body, attrs
}

// ErrMalformed means a message is not a Hookfan event's: an attribute is
// missing or has a bad value, or the body does not decode.
var ErrMalformed = errors.New("malformed message")

// ErrStored is Bytes's error for an event whose body is a payload
// reference: the bytes are in S3 (shared/payload reads them).
var ErrStored = errors.New("the body is a payload reference")

// DecodeError is the error of Decode and Bytes: every problem found, in a
// stable order (id, source, type, received_at, content_type, then the
// optional attributes, then the Extra ones by name). It matches
// ErrMalformed.
type DecodeError struct {
	Problems []error
}

func (e *DecodeError) Error() string {
	return ErrMalformed.Error() + ": " + errors.Join(e.Problems...).Error()
}

// Is makes a DecodeError match ErrMalformed.
func (e *DecodeError) Is(target error) bool { return target == ErrMalformed }

// Unwrap returns the problems.
func (e *DecodeError) Unwrap() []error { return e.Problems }

// Problems lists the problems of a Decode or Bytes error, for a reader
// that reports them with its own (any other error is one problem).
func Problems(err error) []error {
	var de *DecodeError
	if errors.As(err, &de) {
		return de.Problems
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// known are the attributes Decode reads into an Event's fields.
var known = map[string]bool{
	AttrSource: true, AttrType: true, AttrID: true, AttrReceivedAt: true, AttrContentType: true,
	AttrEncoding: true, AttrPayload: true, AttrReplay: true, AttrOrderingKey: true, AttrAttempted: true, AttrPaced: true,
	AttrReconciled: true,
}

// Decode reads a message: its body and attributes. The body is not
// decoded (Bytes does that), so a reader that forwards the message, such as
// the archive's, pays nothing for it. The event is returned with what could
// be read even when the error is not nil, a *DecodeError matching
// ErrMalformed that lists every problem.
//
// The id check is the deliverer's, the stricter of the two that existed:
// 1 to MaxIDBytes visible ASCII characters without '.', since the id is a
// header value and the first part of the signed content
// "{id}.{timestamp}.{body}". (The archive reader refused only '.' and the
// space.) Every id ingest writes ("evt_" and hex) passes.
func Decode(body string, attrs Attributes) (Event, error) {
	e := Event{Body: body}
	var problems []error
	bad := func(msg string) { problems = append(problems, errors.New(msg)) }
	// str returns a String attribute's value; "" and a problem when it is
	// missing, empty or not a String.
	str := func(name string, required bool) string {
		a, ok := attrs[name]
		switch {
		case !ok || (a.Value == "" && isString(a.Type)):
			if required {
				bad("attribute " + name + " is missing")
			}
			return ""
		case !isString(a.Type):
			bad("attribute " + name + " has type " + strconv.Quote(truncate(a.Type, 32)) + "; want String")
			return ""
		}
		return a.Value
	}

	if e.ID = str(AttrID, true); e.ID != "" && !ValidID(e.ID) {
		bad("attribute id is not 1 to " + strconv.Itoa(MaxIDBytes) + " visible ASCII characters without '.'")
	}
	if e.Source = str(AttrSource, true); e.Source != "" && !validSource(e.Source) {
		bad("attribute source is not 1 to " + strconv.Itoa(MaxSourceBytes) + " lowercase letters, digits or hyphens")
	}
	if e.Type = str(AttrType, true); e.Type != "" && !validHeaderText(e.Type, MaxTypeBytes) {
		bad("attribute type is not 1 to " + strconv.Itoa(MaxTypeBytes) + " bytes of UTF-8 text without control characters")
	}
	if v := str(AttrReceivedAt, true); v != "" {
		// A time whose UTC year is not four digits cannot be written
		// again (Encode writes UTC).
		t, err := time.Parse(time.RFC3339Nano, v)
		if y := t.UTC().Year(); err != nil || len(v) > maxReceivedAtBytes || y < 0 || y > 9999 {
			bad("attribute received_at is not an RFC 3339 time")
		}
		e.ReceivedAt = t
	}
	if e.ContentType = str(AttrContentType, true); e.ContentType != "" && !validHeaderText(e.ContentType, MaxContentTypeBytes) {
		bad("attribute content_type is not 1 to " + strconv.Itoa(MaxContentTypeBytes) + " bytes of UTF-8 text without control characters")
	}

	pl, enc := str(AttrPayload, false), str(AttrEncoding, false)
	switch {
	case pl == PayloadS3 && enc == "":
		e.Encoding = Stored
	case pl != "":
		bad("attribute payload is " + strconv.Quote(truncate(pl, 32)) + " with encoding " + strconv.Quote(truncate(enc, 32)) + "; want s3 without an encoding")
	case enc == EncodingBase64:
		e.Encoding = Base64
	case enc != "":
		bad("attribute encoding is " + strconv.Quote(truncate(enc, 32)) + "; want base64 or none")
	}
	if v := str(AttrReplay, false); v != "" {
		if !ValidReplayID(v) {
			bad("attribute replay is not a replay id (" + ReplayIDPrefix + " and 1 to 60 letters, digits, '-' or '_')")
		}
		e.Replay = v
	}
	if v := str(AttrOrderingKey, false); v != "" {
		if !validHeaderText(v, MaxAttributeBytes) {
			bad("attribute ordering_key is not 1 to " + strconv.Itoa(MaxAttributeBytes) + " bytes of UTF-8 text without control characters")
		}
		e.OrderingKey = v
	}
	if v := str(AttrAttempted, false); v != "" {
		a, ok := parseAttempted(v)
		if !ok || len(v) > maxAttemptedBytes {
			bad("attribute attempted is not <attempts>@<Unix milliseconds>")
		}
		e.Attempted = a
	}
	if v := str(AttrPaced, false); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || !isDigits(v) || n < 1 || n > MaxPaced {
			bad("attribute paced is not a whole number from 1 to " + strconv.Itoa(MaxPaced))
		} else {
			e.Paced = n
		}
	}

	switch v := str(AttrReconciled, false); v {
	case "":
	case ReconciledTrue:
		e.Reconciled = true
	default:
		bad("attribute reconciled is " + strconv.Quote(truncate(v, 32)) + "; want " + ReconciledTrue + " or none")
	}

	for _, name := range sortedExtra(attrs) {
		a := attrs[name]
		switch {
		case !validDataType(a.Type):
			bad("attribute " + truncate(name, 64) + " has unknown type " + strconv.Quote(truncate(a.Type, 32)))
		case isBinary(a.Type) && !validBase64(a.Value):
			bad("attribute " + truncate(name, 64) + ": binary value is not base64")
		}
		if e.Extra == nil {
			e.Extra = Attributes{}
		}
		e.Extra[name] = a
	}
	if len(problems) > 0 {
		return e, &DecodeError{Problems: problems}
	}
	return e, nil
}

// Bytes is the provider's bytes: the body, decoded from base64 when it is
// Base64. It fails with ErrStored when the body is a payload reference,
// and with a *DecodeError when the body is not the base64 it should be.
func (e Event) Bytes() ([]byte, error) {
	switch e.Encoding {
	case Stored:
		return nil, ErrStored
	case Base64:
		b, err := base64.StdEncoding.DecodeString(e.Body)
		if err != nil {
			return nil, &DecodeError{Problems: []error{errors.New("body is not the standard base64 its encoding attribute announces")}}
		}
		return b, nil
	}
	return []byte(e.Body), nil
}

// ValidID reports whether s is an event id a message may carry: 1 to
// MaxIDBytes visible ASCII characters without '.'.
func ValidID(s string) bool {
	if s == "" || len(s) > MaxIDBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c >= 0x7f || c == '.' {
			return false
		}
	}
	return true
}

func validSource(s string) bool {
	if s == "" || len(s) > MaxSourceBytes {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// validHeaderText accepts UTF-8 without control characters, so the value
// can travel as a header (ingest publishes nothing else).
func validHeaderText(s string, limit int) bool {
	if len(s) > limit || !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r < ' ' || r == 0x7f {
			return false
		}
	}
	return true
}

func isString(t string) bool { return t == TypeString || strings.HasPrefix(t, TypeString+".") }
func isBinary(t string) bool { return t == TypeBinary || strings.HasPrefix(t, TypeBinary+".") }

// validDataType accepts SQS's and SNS's data types: String, Number and
// Binary, each optionally with a custom suffix after a '.'.
func validDataType(t string) bool {
	return isString(t) || isBinary(t) || t == TypeNumber || strings.HasPrefix(t, TypeNumber+".")
}

func validBase64(s string) bool {
	_, err := base64.StdEncoding.DecodeString(s)
	return err == nil
}

// sortedExtra lists the attributes Decode does not know, by name.
func sortedExtra(attrs Attributes) []string {
	var out []string
	for name := range attrs {
		if !known[name] {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
