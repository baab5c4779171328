package dedupe_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
)

var t0 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func claimAt(pk string, now time.Time, lease time.Duration) dedupe.ClaimInput {
	return dedupe.ClaimInput{PK: pk, Source: "stripe", Type: "invoice.paid", Now: now, LeaseUntil: now.Add(lease), ExpiresAt: now.Add(30 * 24 * time.Hour)}
}

// TestMemoryProtocol walks the claim/finish protocol step by step.
func TestMemoryProtocol(t *testing.T) {
	type step struct {
		name    string
		claimAt time.Duration // offset from t0; claim when finish is empty
		replay  string        // claim as this operator's replay
		finish  dedupe.Status // finish the last successful lease with this status
		useOld  bool          // finish with the lease before the last one
		wantErr error
	}
	tests := []struct {
		name       string
		steps      []step
		wantStatus dedupe.Status
		wantTries  int
	}{
		{"first claim", []step{{name: "claim"}}, dedupe.StatusInProgress, 1},
		{"delivered then duplicate", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDelivered},
			{name: "claim again", claimAt: time.Hour, wantErr: dedupe.ErrDuplicate},
		}, dedupe.StatusDelivered, 1},
		{"live lease refuses", []step{
			{name: "claim"}, {name: "claim within lease", claimAt: 10 * time.Second, wantErr: dedupe.ErrInFlight},
		}, dedupe.StatusInProgress, 1},
		{"expired lease is claimable (crash after claim)", []step{
			{name: "claim"}, {name: "claim after lease", claimAt: 31 * time.Second},
		}, dedupe.StatusInProgress, 2},
		{"failed releases the lease", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusFailed},
			{name: "claim again at once", claimAt: time.Second},
		}, dedupe.StatusInProgress, 2},
		{"dead is claimable again (DLQ redrive)", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDead},
			{name: "claim after redrive", claimAt: 24 * time.Hour},
		}, dedupe.StatusInProgress, 2},
		{"gone is final: copies are refused", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusGone},
			{name: "a copy claims", claimAt: time.Hour, wantErr: dedupe.ErrGone},
			{name: "a redriven copy claims", claimAt: 48 * time.Hour, wantErr: dedupe.ErrGone},
		}, dedupe.StatusGone, 1},
		{"gone replayed by an operator", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusGone},
			{name: "replay", claimAt: time.Hour, replay: "rpl_1"},
		}, dedupe.StatusInProgress, 2},
		{"delivered replayed by an operator", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDelivered},
			{name: "replay", claimAt: time.Hour, replay: "rpl_1"},
			{name: "finish the replay", finish: dedupe.StatusDelivered},
		}, dedupe.StatusDelivered, 2},
		{"a replay still respects a live lease", []step{
			{name: "claim"}, {name: "replay within the lease", claimAt: 10 * time.Second, replay: "rpl_1", wantErr: dedupe.ErrInFlight},
		}, dedupe.StatusInProgress, 1},
		{"a copy of a delivered replay is a duplicate", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDelivered},
			{name: "replay", claimAt: time.Hour, replay: "rpl_1"}, {name: "finish the replay", finish: dedupe.StatusDelivered},
			{name: "a copy of the replayed message", claimAt: 2 * time.Hour, replay: "rpl_1", wantErr: dedupe.ErrDuplicate},
			{name: "another replay", claimAt: 3 * time.Hour, replay: "rpl_2"}, {name: "finish it", finish: dedupe.StatusDelivered},
		}, dedupe.StatusDelivered, 3},
		{"a copy of a replay that ended gone is a duplicate", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDelivered},
			{name: "replay", claimAt: time.Hour, replay: "rpl_1"}, {name: "finish the replay", finish: dedupe.StatusGone},
			{name: "a copy of the replayed message", claimAt: 2 * time.Hour, replay: "rpl_1", wantErr: dedupe.ErrDuplicate},
			{name: "an ordinary copy", claimAt: 2 * time.Hour, wantErr: dedupe.ErrGone},
		}, dedupe.StatusGone, 2},
		{"a replay that failed is tried again by its own copies", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusDelivered},
			{name: "replay", claimAt: time.Hour, replay: "rpl_1"}, {name: "it fails", finish: dedupe.StatusFailed},
			{name: "the replayed message again", claimAt: 2 * time.Hour, replay: "rpl_1"}, {name: "delivered", finish: dedupe.StatusDelivered},
		}, dedupe.StatusDelivered, 3},
		{"stale lease cannot finish", []step{
			{name: "claim"}, {name: "claim after lease", claimAt: 31 * time.Second},
			{name: "old lease finishes", finish: dedupe.StatusDelivered, useOld: true, wantErr: dedupe.ErrLeaseLost},
		}, dedupe.StatusInProgress, 2},
		{"finish twice", []step{
			{name: "claim"}, {name: "finish", finish: dedupe.StatusFailed},
			{name: "finish again", finish: dedupe.StatusDelivered, wantErr: dedupe.ErrLeaseLost},
		}, dedupe.StatusFailed, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			m := dedupe.NewMemory()
			var leases []dedupe.Lease
			for _, s := range tt.steps {
				var err error
				if s.finish == "" {
					var l dedupe.Lease
					in := claimAt("orders#e1", t0.Add(s.claimAt), 30*time.Second)
					in.Replay = s.replay
					l, err = m.Claim(ctx, in)
					if err == nil {
						leases = append(leases, l)
					}
				} else {
					l := leases[len(leases)-1]
					if s.useOld {
						l = leases[len(leases)-2]
					}
					err = m.Finish(ctx, l, dedupe.Outcome{Status: s.finish, HTTPStatus: 200, At: t0})
				}
				if !errors.Is(err, s.wantErr) || (err != nil) != (s.wantErr != nil) {
					t.Fatalf("%s: error %v, want %v", s.name, err, s.wantErr)
				}
			}
			r, ok, _ := m.Get(ctx, "orders#e1")
			if !ok {
				t.Fatal("record missing")
			}
			if r.Status != tt.wantStatus || r.Attempts != tt.wantTries {
				t.Errorf("record status %s attempts %d, want %s %d", r.Status, r.Attempts, tt.wantStatus, tt.wantTries)
			}
		})
	}
}

func TestMemoryRecordFields(t *testing.T) {
	ctx := context.Background()
	m := dedupe.NewMemory()
	in := claimAt("orders#e1", t0, 30*time.Second)
	in.ClaimedBy = "req-1"
	l1, err := m.Claim(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	next := t0.Add(31 * time.Second)
	if err := m.Finish(ctx, l1, dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 503, Error: "HTTP 503", At: t0.Add(time.Second),
		Latency: 800 * time.Millisecond, NextAttemptAt: next}); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := m.Get(ctx, "orders#e1"); !r.NextAttemptAt.Equal(next) {
		t.Errorf("after a failure: next attempt %s, want %s", r.NextAttemptAt, next)
	}
	later := t0.Add(time.Minute)
	in = claimAt("orders#e1", later, 30*time.Second)
	in.ClaimedBy = "req-2"
	l2, err := m.Claim(ctx, in)
	if err != nil {
		t.Fatal(err)
	}
	if l2.Attempts != 2 || l2.Token == l1.Token || l2.Token == "" || len(l2.History) != 1 {
		t.Errorf("second lease = %+v, want attempts 2, a new token and the first attempt's history", l2)
	}
	if err := m.Finish(ctx, l2, dedupe.Outcome{Status: dedupe.StatusDelivered, HTTPStatus: 204, At: later.Add(time.Second), Latency: 90 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	got, _, _ := m.Get(ctx, "orders#e1")
	want := dedupe.Record{
		PK: "orders#e1", Status: dedupe.StatusDelivered, Attempts: 2, LastStatus: 204,
		FirstAttemptAt: t0, DeliveredAt: later.Add(time.Second), Source: "stripe", Type: "invoice.paid",
		ExpiresAt: later.Add(30 * 24 * time.Hour),
		History: []dedupe.Attempt{
			{At: t0, Outcome: dedupe.StatusFailed, HTTPStatus: 503, Latency: 800 * time.Millisecond, Error: "HTTP 503", ClaimedBy: "req-1"},
			{At: later, Outcome: dedupe.StatusDelivered, HTTPStatus: 204, Latency: 90 * time.Millisecond, ClaimedBy: "req-2"},
		},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
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

// TestMemoryRace has many claimers race for one record: exactly one wins.
func TestMemoryRace(t *testing.T) {
	m := dedupe.NewMemory()
	var wg sync.WaitGroup
	wins := make(chan dedupe.Lease, 50)
	for range 50 {
		wg.Go(func() {
			if l, err := m.Claim(context.Background(), claimAt("orders#race", t0, 30*time.Second)); err == nil {
				wins <- l
			} else if !errors.Is(err, dedupe.ErrInFlight) {
				t.Errorf("claim error %v, want %v", err, dedupe.ErrInFlight)
			}
		})
	}
	wg.Wait()
	close(wins)
	if got := len(wins); got != 1 {
		t.Fatalf("%d claims won, want 1", got)
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

func TestFinishRejectsInProgress(t *testing.T) {
	m := dedupe.NewMemory()
	l, err := m.Claim(context.Background(), claimAt("orders#e1", t0, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Finish(context.Background(), l, dedupe.Outcome{Status: dedupe.StatusInProgress}); err == nil {
		t.Error("Finish with IN_PROGRESS succeeded, want an error")
	}
}
