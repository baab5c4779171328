package message_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/message"
)

// sqsAccepts is the SQS character set, written from the documentation's
// ranges, as the oracle.
func sqsAccepts(b []byte) bool {
	if !utf8.Valid(b) {
		return false
	}
	for _, r := range string(b) {
		ok := r == 0x9 || r == 0xA || r == 0xD || (r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
		if !ok {
			return false
		}
	}
	return true
}

func TestText(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"", true},
		{`{"id":"evt_1","type":"a"}`, true},
		{"tab\tnewline\ncarriage\r", true},
		{"\x7f and \u0085 (DEL and C1 are in the set)", true},
		{"caf\u00e9 \u4e16\u754c \U0001F600 \uFFFD \uE000 \uD7FF", true},
		{"\U0010FFFF", true},
		{"nul\x00", false},
		{"soh\x01", false},
		{"form\ffeed", false},
		{"vertical\vtab", false},
		{"\x1f", false},
		{"\uFFFE", false},
		{"ends with \uFFFF", false},
		{"\xef\xbf\xbd\xef\xbf", false}, // U+FFFD then a truncated sequence
		{"\xff\xfe", false},
		{"\xed\xa0\x80", false}, // an encoded surrogate: not UTF-8
		{"\xf4\x90\x80\x80", false},
	}
	for _, tt := range tests {
		if got := message.Text([]byte(tt.in)); got != tt.want {
			t.Errorf("Text(%q) = %v, want %v", tt.in, got, tt.want)
		}
		if oracle := sqsAccepts([]byte(tt.in)); oracle != tt.want {
			t.Errorf("the oracle says %v for %q: the table is wrong", oracle, tt.in)
		}
	}
}

// TestTextEveryASCIIByteEverywhere puts each ASCII byte at each position
// of a body spanning two words and a tail.
func TestTextEveryASCIIByteEverywhere(t *testing.T) {
	for c := range 0x80 {
		for pos := range 19 {
			b := []byte(strings.Repeat("a", 19))
			b[pos] = byte(c)
			if got, want := message.Text(b), sqsAccepts(b); got != want {
				t.Fatalf("Text(%q) = %v, the SQS set says %v", b, got, want)
			}
		}
	}
}

func FuzzText(f *testing.F) {
	for _, s := range []string{"", "a", "\x00", "\uFFFE", "\uFFFF", "\uFFFD", "\xef\xbf", "\xef\xbf\xbe", "\U0010FFFF", "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := message.Text(b), sqsAccepts(b); got != want {
			t.Fatalf("Text(%q) = %v, the SQS set says %v", b, got, want)
		}
	})
}

// FuzzJSONText: on any JSON document of valid UTF-8, JSONText is Text.
func FuzzJSONText(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":"\u0000"}`, "{\"a\":\"\uFFFF\"}", "[\"\xef\xbf\xbe\"]", " \t\r\n1", `"\ufffe"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		if got, want := message.JSONText(b), sqsAccepts(b); got != want {
			t.Fatalf("JSONText(%q) = %v, the SQS set says %v", b, got, want)
		}
	})
}

func TestValidAttribute(t *testing.T) {
	tests := []struct {
		in   string
		want bool
	}{
		{"payment_intent.succeeded", true},
		{"orders/create", true},
		{"caf\u00e9.paid", true},
		{strings.Repeat("a", message.MaxAttributeBytes), true},
		{strings.Repeat("a", message.MaxAttributeBytes+1), false},
		{"", false},
		{"a\tb", false},
		{"a\x00", false},
		{"a\x7f", false},
		{"a\u0085", false},
		{"a\u2028", false},
		{"type\uFFFF", false},
		{"type\uFFFE", false},
		{"\xff", false},
	}
	for _, tt := range tests {
		if got := message.ValidAttribute(tt.in); got != tt.want {
			t.Errorf("ValidAttribute(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}
