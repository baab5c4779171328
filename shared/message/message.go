// Package message holds the message contract between ingest and the
// deliver functions: the SNS message attributes that travel with each
// event's body (raw delivery into each destination's queue), and the
// characters SQS accepts in them.
package message

import (
	"bytes"
	"encoding/binary"
	"strings"
	"unicode/utf8"
)

// Attribute names, all of data type String.
const (
	AttrSource      = "source"       // the source name, [a-z0-9-]{1,64}
	AttrType        = "type"         // the event type; filter policies match it
	AttrID          = "id"           // the Hookfan event id: deterministic, no '.'
	AttrReceivedAt  = "received_at"  // when ingest accepted it, ReceivedAtLayout
	AttrContentType = "content_type" // the provider's Content-Type
	// AttrEncoding is EncodingBase64 when the body is the base64 of the
	// provider's bytes (they were not Text); absent otherwise.
	AttrEncoding = "encoding"
	// AttrReplay is set only on a message an operator replayed from the
	// archive: the replay's id (ReplayIDPrefix and 1 to 60 letters, digits,
	// '-' or '_'). The deliverer sends such a message even when the event
	// was delivered before, once per replay id.
	AttrReplay = "replay"
	// AttrPayload is PayloadS3 when the body did not fit one SNS message:
	// the message's body is then a payload.Reference to the provider's bytes
	// in S3 (and AttrEncoding is absent).
	AttrPayload = "payload"
	// AttrAttempted is set only on a copy the deliverer sent of a message it
	// held while its lane was paused: the attempts the message had made,
	// and when the copy was sent (Unix milliseconds), as "<attempts>@<ms>".
	// The copy goes on with the rest of the schedule.
	AttrAttempted = "attempted"
	// AttrPaced is set only on a copy the deliverer sent of a message its
	// lane's rate limit deferred: how often the event was deferred so far,
	// a whole number from 1 to MaxPaced. The delivery record keeps it.
	AttrPaced = "paced"
	// AttrReconciled is ReconciledTrue only on an event a reconciliation
	// run brought in (shared/reconcile): the provider sent it but it never
	// reached ingest. Its id is the one the provider's delivery would have
	// had, so a destination that got it some other way deduplicates it.
	AttrReconciled = "reconciled"
)

// ReconciledTrue is the only AttrReconciled value.
const ReconciledTrue = "true"

// MaxPaced bounds AttrPaced.
const MaxPaced = 999999

// ReplayIDPrefix starts every replay id.
const ReplayIDPrefix = "rpl_"

// MaxAttributes is SQS's limit on a message's attributes; ingest's and a
// replay's together stay well under it.
const MaxAttributes = 10

// ValidReplayID reports whether s is a well-formed replay id.
func ValidReplayID(s string) bool {
	rest, ok := strings.CutPrefix(s, ReplayIDPrefix)
	if !ok || len(rest) < 1 || len(rest) > 60 {
		return false
	}
	for i := 0; i < len(rest); i++ {
		c := rest[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// EncodingBase64 is the only AttrEncoding value.
const EncodingBase64 = "base64"

// PayloadS3 is the only AttrPayload value.
const PayloadS3 = "s3"

// ReceivedAtLayout is AttrReceivedAt's format: RFC 3339 in UTC with milliseconds.
const ReceivedAtLayout = "2006-01-02T15:04:05.000Z"

// MaxAttributeBytes bounds an attribute value taken from a request (the
// event type).
const MaxAttributeBytes = 256

// Text reports whether b can travel in an SQS message as it is: valid
// UTF-8 of the characters SQS accepts, #x9 | #xA | #xD | #x20-#xD7FF |
// #xE000-#xFFFD | #x10000-#x10FFFF. SQS refuses a message holding any
// other character, and with raw delivery SNS hands the body to SQS
// unchanged: ingest publishes a body that is not Text base64-encoded.
//
// Valid UTF-8 excludes the surrogates and everything past U+10FFFF; what
// remains to refuse is the C0 controls but tab, line feed and carriage
// return, and U+FFFE and U+FFFF.
func Text(b []byte) bool {
	return utf8.Valid(b) && !hasControl(b) && !hasNoncharacter(b)
}

// JSONText is Text for a body known to be one JSON document of valid
// UTF-8 (provider.Identity.JSONText). JSON admits no control character but
// its white space (tab, line feed, carriage return), so only U+FFFE and
// U+FFFF remain to look for.
func JSONText(b []byte) bool {
	return !hasNoncharacter(b)
}

// hasControl reports whether b holds a C0 control other than tab, line
// feed and carriage return. It runs on every body, so it reads eight bytes
// at a time: (w - 0x2020…20) &^ w & 0x8080…80 is not zero exactly when a
// byte of w is below 0x20, and only such words are read byte by byte.
func hasControl(b []byte) bool {
	const below, high = 0x2020202020202020, 0x8080808080808080
	for ; len(b) >= 8; b = b[8:] {
		if w := binary.LittleEndian.Uint64(b); (w-below)&^w&high != 0 && hasControlByte(b[:8]) {
			return true
		}
	}
	return hasControlByte(b)
}

func hasControlByte(b []byte) bool {
	for _, c := range b {
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' {
			return true
		}
	}
	return false
}

// hasNoncharacter reports whether valid UTF-8 b holds U+FFFE or U+FFFF,
// encoded EF BF BE and EF BF BF (in valid UTF-8, EF only ever starts a
// three-byte sequence).
func hasNoncharacter(b []byte) bool {
	for {
		i := bytes.Index(b, []byte{0xef, 0xbf})
		if i < 0 {
			return false
		}
		b = b[i+2:]
		if len(b) > 0 && b[0] >= 0xbe {
			return true
		}
	}
}

// ValidAttribute reports whether s may be a string attribute value taken
// from a request: 1 to MaxAttributeBytes bytes of Text, without control
// characters (C0, DEL, C1, U+2028, U+2029), since deliveries replay the
// type as a header, filter policies match it and logs quote it.
func ValidAttribute(s string) bool {
	if s == "" || len(s) > MaxAttributeBytes || !Text([]byte(s)) {
		return false
	}
	for _, r := range s {
		if r < 0x20 || (r >= 0x7f && r < 0xa0) || r == '\u2028' || r == '\u2029' {
			return false
		}
	}
	return true
}
