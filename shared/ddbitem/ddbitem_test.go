package ddbitem

import (
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestReader(t *testing.T) {
	at := time.Date(2026, 12, 1, 5, 36, 29, 182e6, time.UTC)
	item := map[string]types.AttributeValue{
		"s": S("x"), "n": N(-42), "t": S(at.Format(time.RFC3339Nano)),
		"badS": N(1), "badN": S("1"), "nanN": &types.AttributeValueMemberN{Value: "1.5"}, "badT": S("yesterday"),
	}
	r := NewReader(item)
	if got := r.String("s"); got != "x" {
		t.Errorf("String = %q", got)
	}
	if got := r.Int("n"); got != -42 {
		t.Errorf("Int = %d", got)
	}
	if got := r.Time("t"); !got.Equal(at) {
		t.Errorf("Time = %v, want %v", got, at)
	}
	if r.String("missing") != "" || r.Int("missing") != 0 || !r.Time("missing").IsZero() || r.Err() != nil {
		t.Fatalf("missing attributes: want zero values and no error, got %v", r.Err())
	}
	r.String("badS")
	r.Int("badN")
	r.Int("nanN")
	r.Time("badT")
	want := []string{
		"attribute badS: want a string",
		"attribute badN: want a number",
		`attribute nanN: "1.5" is not a whole number`,
		`attribute badT: "yesterday" is not an RFC 3339 time`,
	}
	if got := r.Err(); got == nil || got.Error() != strings.Join(want, "\n") {
		t.Errorf("Err = %v, want:\n%s", got, strings.Join(want, "\n"))
	}
	m := NewMapReader(map[string]types.AttributeValue{"k": N(1)})
	m.String("k")
	if got := m.Err(); got == nil || got.Error() != "k: want a string" {
		t.Errorf("map reader Err = %v, want the key alone", got)
	}
}
