package operator

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/pausing"
)

// laneOperator is testOperator with two lanes, "d" that pauses and
// "plain" that does not, on a memory lane store and memory switches.
func laneOperator(t *testing.T) (*Operator, *bytes.Buffer, *pausing.Memory, map[string]*pausing.MemorySwitch, *stillClock) {
	t.Helper()
	qc := &clock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	q := newFakeQueues(qc.now)
	op, out := testOperator(q, qc)
	c := &stillClock{t: time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)}
	op.Now = c.now
	policy := pausing.Rule{PauseRule: config.PauseRule{AfterFailures: 5, ProbeEvery: time.Minute, MaxPause: 3 * time.Hour}, Retention: 10 * time.Hour}
	op.Resources.Lanes[0].Pause, op.Resources.Lanes[0].Retention = &policy, policy.Retention
	op.Resources.Lanes = append(op.Resources.Lanes, Lane{Destination: "plain", QueueURL: "q2", DLQURL: "dlq2", Retention: 40 * time.Hour})
	store := pausing.NewMemory()
	switches := map[string]*pausing.MemorySwitch{"d": {}, "plain": {}}
	op.LaneStore = store
	op.Switch = func(l Lane) pausing.Switch { return switches[l.Destination] }
	q.add("q", "e1")
	q.add("q", "e2")
	return op, out, store, switches, c
}

// stillClock moves only when told.
type stillClock struct{ t time.Time }

func (c *stillClock) now() time.Time { return c.t }

func TestPauseAndResumeByHand(t *testing.T) {
	op, out, store, switches, c := laneOperator(t)
	ctx := context.Background()
	change, err := op.PauseLane(ctx, "d", "subscriber maintenance")
	if err != nil || change.Kind != pausing.Pausing {
		t.Fatalf("pause: %+v, %v", change, err)
	}
	if on, _ := switches["d"].Enabled(ctx); on {
		t.Error("the mapping is on after pause")
	}
	s, _ := store.Get(ctx, "d")
	if !s.IsPaused() || s.By != pausing.ByOperator || s.Reason != "subscriber maintenance" || !s.ResumeBy.Equal(c.now().Add(3*time.Hour)) {
		t.Errorf("state after pause: %+v", s)
	}
	if !strings.Contains(out.String(), "paused d until 2026-05-01T15:00:00.000Z at the latest (its bound); resume it with ops resume d\n") {
		t.Errorf("pause output:\n%s", out)
	}
	out.Reset()
	if _, err := op.PauseLane(ctx, "d", "again"); err != nil || !strings.Contains(out.String(), "d is already paused by the operator since 2026-05-01T12:00:00.000Z: subscriber maintenance") {
		t.Errorf("a second pause: %v\n%s", err, out)
	}

	out.Reset()
	if _, err := op.Lanes(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"DESTINATION  STATE   SINCE                     BY        DETAIL\n",
		"d            paused  2026-05-01T12:00:00.000Z  operator  subscriber maintenance; resumes by 2026-05-01T15:00:00.000Z at the latest\n",
		"plain        active  -                         -         does not pause\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lanes lacks %q:\n%s", want, out)
		}
	}

	c.t = c.t.Add(20 * time.Minute)
	out.Reset()
	if _, err := op.Lane(ctx, "d"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lane d: paused since 2026-05-01T12:00:00.000Z (20m0s ago) by the operator: subscriber maintenance\n",
		"  resumes by 2026-05-01T15:00:00.000Z at the latest (its bound); not probed: resume it with ops resume d\n",
		"  rule: pause after 5 consecutive failures; probe every 1m0s; at most 3h0m0s paused\n",
		"  paused 20m0s within the last 10h0m0s, of at most 3h0m0s\n",
		"  event source mapping: disabled\n",
		"  queue: 2 visible, 0 in flight or hidden; DLQ: 0\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("lane lacks %q:\n%s", want, out)
		}
	}

	out.Reset()
	change, err = op.ResumeLane(ctx, "d", "maintenance over")
	if err != nil || change.Kind != pausing.Resuming || !strings.Contains(out.String(), "resumed d after 20m0s paused; its event source mapping is on\n") {
		t.Fatalf("resume: %+v, %v\n%s", change, err, out)
	}
	if on, _ := switches["d"].Enabled(ctx); !on {
		t.Error("the mapping is off after resume")
	}
	out.Reset()
	if _, err := op.ResumeLane(ctx, "d", "again"); err != nil || out.String() != "d is not paused\n" {
		t.Errorf("resume of an active lane: %v, %q", err, out)
	}
}

// TestPauseRefusals: a lane that does not pause cannot be paused (its
// queue keeps no room for it), nor one past its bound; an unknown name
// says which exist.
func TestPauseRefusals(t *testing.T) {
	op, _, _, _, c := laneOperator(t)
	ctx := context.Background()
	if _, err := op.PauseLane(ctx, "plain", "x"); err == nil || !strings.Contains(err.Error(), `destination plain does not pause: its queue keeps no room for a pause`) {
		t.Errorf("pause of a lane that does not pause: %v", err)
	}
	if _, err := op.PauseLane(ctx, "nope", "x"); err == nil || !strings.Contains(err.Error(), `no destination "nope" in test; destinations: d, plain`) {
		t.Errorf("unknown destination: %v", err)
	}
	if _, err := op.PauseLane(ctx, "d", "long"); err != nil {
		t.Fatal(err)
	}
	c.t = c.t.Add(3*time.Hour - 30*time.Second)
	if _, err := op.ResumeLane(ctx, "d", "x"); err != nil {
		t.Fatal(err)
	}
	if _, err := op.PauseLane(ctx, "d", "again"); !errors.Is(err, pausing.ErrNoBudget) {
		t.Errorf("a pause past the bound: %v, want ErrNoBudget", err)
	}
}

// TestResumeALaneThatNoLongerPauses: a lane left paused when its pause
// setting was removed is resumed by hand all the same.
func TestResumeALaneThatNoLongerPauses(t *testing.T) {
	op, out, store, switches, c := laneOperator(t)
	ctx := context.Background()
	if _, err := store.Pause(ctx, "plain", pausing.PauseInput{At: c.now(), ResumeBy: c.now().Add(time.Hour), By: pausing.ByDeliverer, Reason: "5 consecutive failed deliveries"}); err != nil {
		t.Fatal(err)
	}
	_ = switches["plain"].Disable(ctx)
	if _, err := op.ResumeLane(ctx, "plain", "pause setting removed"); err != nil || !strings.Contains(out.String(), "resumed plain") {
		t.Fatalf("resume: %v\n%s", err, out)
	}
	if on, _ := switches["plain"].Enabled(ctx); !on {
		t.Error("the mapping stayed off")
	}
}

func TestLaneCommandLines(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"lanes", "x"}, "lanes takes no arguments"},
		{[]string{"lane"}, "lane takes one DESTINATION"},
		{[]string{"pause"}, "pause takes one DESTINATION"},
		{[]string{"pause", "a", "b"}, "pause takes one DESTINATION"},
		{[]string{"resume", "a", "--why", "x"}, "flag provided but not defined: -why"},
	} {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), append([]string{"--state-dir", t.TempDir()}, tt.args...), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), tt.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", tt.args, code, errOut.String(), tt.want)
		}
	}
}

// TestDeployedResolvePause: a deployed lane's pause rule, retention and
// function come from its index parameter.
func TestDeployedResolvePause(t *testing.T) {
	d := config.Destination{Name: "orders", URL: "https://o.example.com", Pause: &config.Pause{FailureRate: 0.8, MaxPause: config.Duration(24 * time.Hour)}}
	f := fakeSSM{
		stackindex.StackParameter("Prod"): jsonOf(t, stackindex.Stack{TableName: "records", DestinationsPath: stackindex.DestinationsPath("Prod")}),
		stackindex.LaneParameter("Prod", "orders"): jsonOf(t, stackindex.Lane{Destination: "orders", QueueURL: "q", QueueARN: "arn:q", DLQURL: "dlq",
			FunctionName: "Hookfan-Lane-orders-Function", Pause: stackindex.PauseOf(d), RetentionSeconds: int(d.Retention().Seconds())}),
		stackindex.LaneParameter("Prod", "plain"): jsonOf(t, stackindex.Lane{Destination: "plain", QueueURL: "q2", DLQURL: "dlq2", RetentionSeconds: 145380}),
	}
	res, err := Deployed{SSM: f, Stack: "Prod", Region: "eu-west-1"}.Resolve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want, _ := pausing.RuleFor(d)
	orders, plain := res.Lanes[0], res.Lanes[1]
	if orders.Pause == nil || *orders.Pause != want || orders.FunctionName != "Hookfan-Lane-orders-Function" || orders.Retention != d.Retention() {
		t.Errorf("orders: %+v (pause %+v), want the configured policy %+v", orders, orders.Pause, want)
	}
	if plain.Pause != nil || plain.Retention != 145380*time.Second {
		t.Errorf("plain: %+v", plain)
	}
}
