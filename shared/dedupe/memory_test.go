package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/dedupe/dedupetest"
)

// TestMemoryConformance runs the store's protocol on the Memory twin,
// simultaneous claims included (the integration suite runs it on the
// DynamoDB store against moto, without them).
func TestMemoryConformance(t *testing.T) {
	dedupetest.Run(t, dedupe.NewMemory(), dedupetest.Options{Concurrent: true})
}

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func claimAt(pk string, now time.Time, lease time.Duration) dedupe.ClaimInput {
	return dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: now, LeaseUntil: now.Add(lease), ExpiresAt: now.Add(30 * 24 * time.Hour)}
}

// TestHistoryIsBounded: a record keeps the last MaxHistory attempts, each
// error cut to MaxHistoryErrorLen and claimer to MaxClaimedByLen, and the
// last MaxReplays replays; the summary keeps the longer last error.
func TestHistoryIsBounded(t *testing.T) {
	ctx := context.Background()
	m := dedupe.NewMemory()
	long := strings.Repeat("é", 200) // 400 bytes
	for i := range 25 {
		in := claimAt("orders#e1", t0.Add(time.Duration(i)*time.Minute), 30*time.Second)
		in.Replay = fmt.Sprintf("rpl_%02d", i)
		in.ClaimedBy = strings.Repeat("r", 100)
		l, err := m.Claim(ctx, in)
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if err := m.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusGone, HTTPStatus: 410, Error: long, At: in.Now}); err != nil {
			t.Fatal(err)
		}
	}
	r, _, _ := m.Get(ctx, "orders#e1")
	if len(r.History) != dedupe.MaxHistory || r.History[0].Replay != "rpl_15" || r.History[dedupe.MaxHistory-1].Replay != "rpl_24" {
		t.Fatalf("history of %d, from %s to %s; want the last %d", len(r.History), r.History[0].Replay, r.History[len(r.History)-1].Replay, dedupe.MaxHistory)
	}
	for _, a := range r.History {
		if len(a.Error) > dedupe.MaxHistoryErrorLen || !utf8.ValidString(a.Error) || len(a.ClaimedBy) > dedupe.MaxClaimedByLen {
			t.Errorf("history entry holds %d bytes of error (valid UTF-8: %v) and %d of claimer", len(a.Error), utf8.ValidString(a.Error), len(a.ClaimedBy))
		}
	}
	if len(r.Replays) != dedupe.MaxReplays || r.Replays[0] != "rpl_15" || len(r.LastError) != dedupe.MaxErrorLen {
		t.Errorf("replays %v, last error %d bytes", r.Replays, len(r.LastError))
	}
}

func TestRefusedError(t *testing.T) {
	until := t0.Add(time.Minute)
	tests := []struct {
		status       dedupe.Status
		wantDup      bool
		wantGone     bool
		wantInFlight bool
	}{
		{dedupe.StatusDelivered, true, false, false},
		{dedupe.StatusGone, false, true, false},
		{dedupe.StatusInProgress, false, false, true},
		{dedupe.StatusFailed, false, false, true},
		{dedupe.StatusDead, false, false, true},
	}
	for _, tt := range tests {
		err := error(&dedupe.RefusedError{Status: tt.status, LeaseUntil: until})
		if got := errors.Is(err, dedupe.ErrDuplicate); got != tt.wantDup {
			t.Errorf("%s: Is(ErrDuplicate) = %v, want %v", tt.status, got, tt.wantDup)
		}
		if got := errors.Is(err, dedupe.ErrGone); got != tt.wantGone {
			t.Errorf("%s: Is(ErrGone) = %v, want %v", tt.status, got, tt.wantGone)
		}
		if got := errors.Is(err, dedupe.ErrInFlight); got != tt.wantInFlight {
			t.Errorf("%s: Is(ErrInFlight) = %v, want %v", tt.status, got, tt.wantInFlight)
		}
	}
}

func TestShortError(t *testing.T) {
	long := ""
	for range 100 {
		long += "é✓"
	}
	tests := []struct {
		in      string
		wantLen int
	}{
		{"short", 5},
		{long, 255},                     // 256 would split a rune: é is 2 bytes, ✓ is 3
		{strings.Repeat("é", 200), 256}, // 256 ends a whole é: kept
	}
	for _, tt := range tests {
		got := dedupe.ShortError(tt.in)
		if len(got) != tt.wantLen {
			t.Errorf("len(ShortError) = %d, want %d", len(got), tt.wantLen)
		}
		if !utf8.ValidString(got) {
			t.Errorf("ShortError returned invalid UTF-8 %q", got)
		}
	}
}

// TestMemoryCheckConformance runs what ModeCheck promises on the Memory
// twin, simultaneous finishes included.
func TestMemoryCheckConformance(t *testing.T) {
	dedupetest.Run(t, dedupe.NewMemory().InMode(dedupe.ModeCheck).(dedupetest.Store), dedupetest.Options{Concurrent: true, Mode: dedupe.ModeCheck})
}

// TestAnswersAreBounded: a failed attempt keeps the first MaxAnswer bytes
// of the receiver's answer; only the latest MaxAnswers attempts with one
// keep theirs; a delivered attempt keeps none.
func TestAnswersAreBounded(t *testing.T) {
	ctx := context.Background()
	m := dedupe.NewMemory()
	at := t0
	for i := range dedupe.MaxAnswers + 2 {
		l, err := m.Claim(ctx, claimAt("orders#e1", at, time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		answer := []byte(strings.Repeat(string(rune('a'+i)), dedupe.MaxAnswer+10))
		if err := m.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 500, At: at, Answer: answer}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(2 * time.Minute)
	}
	l, _ := m.Claim(ctx, claimAt("orders#e1", at, time.Minute))
	if err := m.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 200, At: at, Answer: []byte("ok")}); err != nil {
		t.Fatal(err)
	}
	r, _, _ := m.Get(ctx, "orders#e1")
	var got []string
	for _, a := range r.History {
		if len(a.Answer) > dedupe.MaxAnswer {
			t.Errorf("an answer of %d bytes, want at most %d", len(a.Answer), dedupe.MaxAnswer)
		}
		if len(a.Answer) > 0 {
			got = append(got, string(a.Answer[:1]))
		} else {
			got = append(got, "-")
		}
	}
	if want := []string{"-", "-", "c", "d", "e", "f", "-"}; !slices.Equal(got, want) {
		t.Errorf("answers kept %v, want %v", got, want)
	}
}
