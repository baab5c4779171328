package operator

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pacing"
)

// pacedOperator is laneOperator with lane "d" paced at 5/s, adaptive, on
// a memory pacing store.
func pacedOperator(t *testing.T) (*Operator, *bytes.Buffer, *pacing.Memory, *stillClock) {
	t.Helper()
	op, out, _, _, c := laneOperator(t)
	op.Resources.Lanes[0].Pace = &config.Pace{N: 5, Per: time.Second, Burst: 5, Adaptive: true}
	store := pacing.NewMemory()
	op.PaceStore = store
	return op, out, store, c
}

func TestPaceByHand(t *testing.T) {
	op, out, store, c := pacedOperator(t)
	ctx := context.Background()
	if _, err := op.Lanes(ctx); err != nil {
		t.Fatal(err)
	}
	if want := "rate limits (configured; in force):\n  d: 5/s, burst 5, adaptive; 5/s\n"; !strings.Contains(out.String(), want) {
		t.Errorf("lanes lacks %q:\n%s", want, out)
	}
	if strings.Contains(out.String(), "plain:") {
		t.Errorf("lanes lists the unpaced lane's rate:\n%s", out)
	}

	// A 429 seen by a deliverer halved the level; an operator caps it lower.
	if _, _, err := store.Adjust(ctx, "d", pacing.AdjustInput{Now: c.now(), Slower: true}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if _, err := op.PaceLane(ctx, "d", PaceInput{N: 30, Per: time.Minute, For: 2 * time.Hour}); err != nil {
		t.Fatal(err)
	}
	if want := "paced d at 30/min until 2026-05-01T14:00:00.000Z (2h0m0s), then back to 5/s; clear it sooner with ops pace d --clear\n"; out.String() != want {
		t.Errorf("pace output %q, want %q", out, want)
	}
	s, _ := store.Get(ctx, "d")
	if got := s.Effective(*op.Resources.Lanes[0].Pace, c.now()); got != 0.5 {
		t.Errorf("effective rate under the override: %v, want 0.5/s", got)
	}
	out.Reset()
	if _, err := op.Lanes(ctx); err != nil {
		t.Fatal(err)
	}
	if want := "  d: 5/s, burst 5, adaptive; 30/min, burst 1 (adaptive: 50% of the rate since 2026-05-01T12:00:00.000Z) (capped at 30/min by an operator until 2026-05-01T14:00:00.000Z)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("lanes lacks %q:\n%s", want, out)
	}

	// It ends by itself.
	c.t = c.t.Add(2 * time.Hour)
	out.Reset()
	if _, err := op.Lanes(ctx); err != nil {
		t.Fatal(err)
	}
	if want := "  d: 5/s, burst 5, adaptive; 2.5/s, burst 2 (adaptive: 50% of the rate since 2026-05-01T12:00:00.000Z)\n"; !strings.Contains(out.String(), want) {
		t.Errorf("lanes after the override's end lacks %q:\n%s", want, out)
	}

	// --clear ends one sooner.
	if _, err := op.PaceLane(ctx, "d", PaceInput{N: 1, Per: time.Second, For: time.Hour}); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if s, err := op.ClearPace(ctx, "d"); err != nil || s.Capped(c.now()) {
		t.Fatalf("clear: %+v, %v", s, err)
	}
	if want := "cleared the override of d; its rate is 2.5/s, burst 2 (adaptive: 50% of the rate since 2026-05-01T12:00:00.000Z)\n"; out.String() != want {
		t.Errorf("clear output %q, want %q", out, want)
	}
	out.Reset()
	if _, err := op.ClearPace(ctx, "d"); err != nil || !strings.Contains(out.String(), "d has no override in force") {
		t.Errorf("a second clear: %v, %q", err, out)
	}
}

func TestPaceRefusals(t *testing.T) {
	op, _, _, _ := pacedOperator(t)
	ctx := context.Background()
	for _, tt := range []struct {
		dest string
		in   PaceInput
		want string
	}{
		{"plain", PaceInput{N: 1, Per: time.Second, For: time.Hour}, "destination plain has no rateLimit: an override lowers a paced lane's rate; add rateLimit to its configuration and deploy"},
		{"d", PaceInput{N: 10, Per: time.Second, For: time.Hour}, "pace d: 10/s is above the configured 5/s; an override only lowers the rate (raise rateLimit in the configuration and deploy)"},
		{"d", PaceInput{N: 301, Per: time.Minute, For: time.Hour}, "pace d: 301/min is above the configured 5/s"},
		{"nope", PaceInput{N: 1, Per: time.Second, For: time.Hour}, "nope"},
	} {
		if _, err := op.PaceLane(ctx, tt.dest, tt.in); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("pace %s %+v: %v; want %q", tt.dest, tt.in, err, tt.want)
		}
	}
	if _, err := op.ClearPace(ctx, "plain"); err == nil || !strings.Contains(err.Error(), "has no rateLimit") {
		t.Errorf("clear on an unpaced lane: %v", err)
	}
}

func TestPaceCommandLines(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"pace"}, "pace takes one DESTINATION"},
		{[]string{"pace", "d", "--for", "2h"}, "give one of --per-second N and --per-minute N (or --clear)"},
		{[]string{"pace", "d", "--per-second", "1", "--per-minute", "5", "--for", "2h"}, "give one of --per-second N and --per-minute N (or --clear)"},
		{[]string{"pace", "d", "--per-second", "-1", "--for", "2h"}, "the rate must be at least 1"},
		{[]string{"pace", "d", "--per-second", "1"}, "--for 0s: give how long the override lasts, 1s to 168h0m0s (it ends by itself)"},
		{[]string{"pace", "d", "--per-second", "1", "--for", "200h"}, "--for 200h0m0s: give how long"},
		{[]string{"pace", "d", "--clear", "--per-second", "1"}, "--clear takes no rate and no --for"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--state-dir", t.TempDir()}, tt.args...), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

// TestDeployedResolvePace: a deployed lane's rate limit comes from its
// index parameter; an unpaced lane's ({} or absent) is none.
func TestDeployedResolvePace(t *testing.T) {
	f := fakeSSM{
		stackindex.StackParameter("Prod"): jsonOf(t, stackindex.Stack{TableName: "records", DestinationsPath: stackindex.DestinationsPath("Prod")}),
		stackindex.LaneParameter("Prod", "a"): jsonOf(t, stackindex.Lane{Destination: "a", QueueURL: "q", DLQURL: "dlq",
			RateLimit: &config.RateLimit{PerMinute: 30}}),
		stackindex.LaneParameter("Prod", "b"): jsonOf(t, stackindex.Lane{Destination: "b", QueueURL: "q2", DLQURL: "dlq2", RateLimit: &config.RateLimit{}}),
		stackindex.LaneParameter("Prod", "c"): jsonOf(t, stackindex.Lane{Destination: "c", QueueURL: "q3", DLQURL: "dlq3"}),
	}
	res, err := Deployed{SSM: f, Stack: "Prod", Region: "eu-west-1"}.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Lanes[0].Pace; p == nil || *p != (config.Pace{N: 30, Per: time.Minute, Burst: 1}) {
		t.Errorf("a: pace %+v, want 30/min burst 1", p)
	}
	if res.Lanes[1].Pace != nil || res.Lanes[2].Pace != nil {
		t.Errorf("unpaced lanes: %+v, %+v", res.Lanes[1].Pace, res.Lanes[2].Pace)
	}
}
