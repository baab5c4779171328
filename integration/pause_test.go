//go:build integration

package integration

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	ddbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/pausing/pausingtest"
)

// outage is a subscriber that is down (503) until brought up; it keeps,
// per event, the hookfan-attempt of every request and the count of 2xx
// answers, and counts the probes apart.
type outage struct {
	*receiver
	mu       sync.Mutex
	up       bool
	attempts map[string][]int
	ok       map[string]int
	probes   int
}

func newOutage(t *testing.T) *outage {
	o := &outage{attempts: map[string][]int{}, ok: map[string]int{}}
	o.receiver = newReceiver(t, func(_ int, r *http.Request) int {
		o.mu.Lock()
		defer o.mu.Unlock()
		status := http.StatusServiceUnavailable
		if o.up {
			status = http.StatusNoContent
		}
		if r.Header.Get("hookfan-type") == delivery.ProbeType {
			o.probes++
			return status
		}
		id := r.Header.Get("webhook-id")
		n, _ := strconv.Atoi(r.Header.Get("hookfan-attempt"))
		o.attempts[id] = append(o.attempts[id], n)
		if status < 300 {
			o.ok[id]++
		}
		return status
	})
	return o
}

func (o *outage) bringUp() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.up = true
}

// counts returns the requests per event, the 2xx per event and the probes.
func (o *outage) counts() (attempts map[string][]int, ok map[string]int, probes int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	attempts, ok = map[string][]int{}, map[string]int{}
	for k, v := range o.attempts {
		attempts[k] = append([]int(nil), v...)
	}
	for k, v := range o.ok {
		ok[k] = v
	}
	return attempts, ok, o.probes
}

func (e *env) lane(dest string) pausing.State {
	e.t.Helper()
	s, err := e.stack.Lanes.Get(context.Background(), dest)
	if err != nil {
		e.t.Fatal(err)
	}
	return s
}

// TestOutageLongerThanTheSchedule: two destinations go down for longer
// than their whole retry schedule (1 s and 2 s: three attempts). The lane
// without pause spends every event's attempts and fills its DLQ; the lane
// with pause stops after its third failed delivery, keeps every event in
// its queue without spending attempts while its probe fails, sends nothing
// to its DLQ, and once the destination is back and a probe is answered,
// delivers every event exactly once.
func TestOutageLongerThanTheSchedule(t *testing.T) {
	t.Parallel()
	paused, burnt := newOutage(t), newOutage(t)
	schedule := `"retry": {"schedule": ["1s", "2s"], "jitter": 0}, "timeoutSeconds": 2`
	e := startEnv(t, []string{
		destJSON("paused", paused.receiver, schedule+`, "pause": {"afterFailures": 3}`),
		destJSON("burnt", burnt.receiver, schedule),
	}, map[string]*receiver{"paused": paused.receiver, "burnt": burnt.receiver},
		func(o *devstack.Options) { o.ProbeInterval = time.Second })
	pausedLane, _ := e.stack.Topology.Lane("paused")
	burntLane, _ := e.stack.Topology.Lane("burnt")

	var ids []string
	for i := range 6 {
		ids = append(ids, e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("evt_outage_%d", i), nil).id)
	}
	start := time.Now()
	waitFor(t, 20*time.Second, "the lane paused", func() bool { return e.lane("paused").IsPaused() })
	if s := e.lane("paused"); s.By != pausing.ByDeliverer || !strings.HasSuffix(s.Reason, "consecutive failed deliveries") {
		t.Errorf("paused lane: %+v", s)
	}
	// The control lane spends all three attempts of every event: the
	// outage is longer than the schedule.
	waitFor(t, 40*time.Second, "every event of the lane without pause DEAD", func() bool {
		for _, id := range ids {
			if r, _ := e.record("burnt", id); r.Status != dedupe.StatusDead {
				return false
			}
		}
		return true
	})
	// Stay down a while longer, the paused lane's probes failing meanwhile.
	for time.Since(start) < 15*time.Second {
		time.Sleep(500 * time.Millisecond)
	}
	attempts, _, probes := paused.counts()
	if probes < 3 {
		t.Errorf("%d probes during the outage, want about one a second", probes)
	}
	for _, id := range ids {
		if n := len(attempts[id]); n > 2 {
			t.Errorf("%s: %d attempts while down; the lane should have paused before its last", id, n)
		}
	}
	if s := e.lane("paused"); !s.IsPaused() || s.Probes < 3 || s.LastProbeStatus != http.StatusServiceUnavailable {
		t.Errorf("during the outage: %+v; want paused, its probes answered 503", s)
	}
	if n := depth(t, pausedLane.DLQURL); n != 0 {
		t.Errorf("the paused lane's DLQ holds %d messages, want none", n)
	}
	if n := depth(t, pausedLane.QueueURL); n != len(ids) {
		t.Errorf("the paused lane's queue holds %d messages, want the %d events", n, len(ids))
	}

	paused.bringUp()
	burnt.bringUp()
	waitFor(t, 30*time.Second, "every event delivered after the outage", func() bool {
		for _, id := range ids {
			if r, _ := e.record("paused", id); r.Status != dedupe.StatusDelivered {
				return false
			}
		}
		return true
	})
	e.settled()
	if s := e.lane("paused"); s.IsPaused() || len(s.Pauses) != 1 || !strings.HasPrefix(s.ResumeReason, "a probe was answered 204") {
		t.Errorf("after the outage: %+v; want resumed by a probe, one pause kept", s)
	}
	// Exactly once: one 2xx per event, on the last of its requests, and
	// the requests numbered 1, 2, … with none missing: no receive of the
	// pause spent an attempt (how many came before the pause tripped
	// depends on the machine's speed; a lane can have sent an event's
	// second attempt, whose success is then its third).
	attempts, ok, _ := paused.counts()
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
		for i, a := range attempts[id] {
			if a != i+1 {
				t.Errorf("%s: attempts %v; want 1, 2, … with none spent by the pause", id, attempts[id])
				break
			}
		}
	}
	if diff := cmp.Diff(want, ok); diff != "" {
		t.Errorf("2xx answers per event (-want +got):\n%s", diff)
	}
	if n := depth(t, pausedLane.DLQURL) + depth(t, pausedLane.QueueURL); n != 0 {
		t.Errorf("the paused lane still holds %d messages (queue and DLQ)", n)
	}
	for _, d := range paused.deliveries() {
		if !d.verified {
			t.Errorf("request %s (%s) does not verify", d.header.Get("webhook-id"), d.header.Get("hookfan-type"))
		}
	}
	var dlq []string
	waitFor(t, 20*time.Second, "the lane without pause's DLQ", func() bool {
		dlq = append(dlq, queueIDs(t, burntLane.DLQURL, 2*time.Second)...)
		return len(dlq) >= len(ids)
	})
	if diff := cmp.Diff(sorted(ids), sorted(dlq)); diff != "" {
		t.Errorf("the lane without pause's DLQ (-want +got):\n%s", diff)
	}
	for _, line := range []string{`"outcome":"lane_paused"`, `"outcome":"lane_resumed"`} {
		if !strings.Contains(e.logs.String(), line) {
			t.Errorf("no %s log line", line)
		}
	}
}

// TestLaneStoreOnDynamoDB runs the lane store's protocol checks against
// the emulator's DynamoDB over the wire.
func TestLaneStoreOnDynamoDB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	table := uniquePrefix(t) + "-lanes"
	_, err := clients.DynamoDB.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName: &table, BillingMode: ddbtypes.BillingModePayPerRequest,
		AttributeDefinitions: []ddbtypes.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: ddbtypes.ScalarAttributeTypeS}},
		KeySchema:            []ddbtypes.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: ddbtypes.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	pausingtest.Store(t, pausing.NewDynamoDB(clients.DynamoDB, table), func() string { return fmt.Sprintf("dest-%d", n.Add(1)) })
}

// TestPausedLaneTurnedOnBehindItsBack: an operator paused a lane, then
// its mapping was turned on behind its back (a deploy, the console). What
// the pollers receive meanwhile is held, not sent: sent to the queue again
// as a fresh copy, so not even a message at its last receive, which SQS
// would move to the DLQ unattempted at the next, loses anything; the next
// tick turns the mapping off again. Nothing is sent, nothing reaches the DLQ, the event
// stays in the queue; the operator's resume turns the mapping on.
func TestPausedLaneTurnedOnBehindItsBack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newReceiver(t, nil)
	var reads switchReads
	e := startEnv(t, []string{destJSON("held", rc, `"retry": {"schedule": ["1s"], "jitter": 0}, "pause": {}`)},
		map[string]*receiver{"held": rc}, func(o *devstack.Options) { o.ProbeInterval = 2 * time.Second }, reads.watch)
	ln, _ := e.stack.Topology.Lane("held")
	policy, _ := pausing.RuleFor(ln.Destination)
	operator, err := pausing.New(pausing.Options{Destination: "held", Rule: policy, Store: e.stack.Lanes, Switch: e.stack.Mappings["held"]})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := operator.Pause(ctx, pausing.ByOperator, "subscriber maintenance"); err != nil || c.Kind != pausing.Pausing {
		t.Fatalf("operator pause: %+v, %v", c, err)
	}
	pollsEnd(t)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_behind_back", nil)

	// Receive it once by hand and put it back: its next receive is its
	// last (maxReceiveCount 2).
	var receipt *string
	waitFor(t, 10*time.Second, "the event in the queue", func() bool {
		out, err := clients.SQS.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &ln.QueueURL, WaitTimeSeconds: 1})
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) == 1 {
			receipt = out.Messages[0].ReceiptHandle
		}
		return receipt != nil
	})
	if _, err := clients.SQS.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &ln.QueueURL, ReceiptHandle: receipt, VisibilityTimeout: 0}); err != nil {
		t.Fatal(err)
	}
	if err := e.stack.Mappings["held"].Enable(ctx); err != nil { // behind the lane's back
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, "the message re-queued as a fresh copy", func() bool {
		if strings.Contains(e.logs.String(), `"outcome":"requeued"`) {
			return true
		}
		// A tick (every 2 s) may turn the mapping off again before a poller
		// receives the message, on a loaded machine: turn it on again,
		// behind the lane's back as before.
		if on, err := e.stack.Mappings["held"].Enabled(ctx); err == nil && !on {
			if err := e.stack.Mappings["held"].Enable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})
	waitFor(t, 15*time.Second, "the tick turning the mapping off", func() bool {
		on, err := e.stack.Mappings["held"].Enabled(ctx)
		return err == nil && !on
	})
	// The tick logs once it is done: after turning the mapping off it
	// reads the lane again and sends its probe.
	waitFor(t, 15*time.Second, "the tick's line saying it reconciled the mapping", func() bool {
		return strings.Contains(e.logs.String(), `"reconciled"`)
	})
	e.held(&reads, ln, 1)
	if n := len(rc.deliveries()); n != 0 {
		t.Errorf("%d requests to a paused destination", n)
	}
	if n := depth(t, ln.DLQURL); n != 0 {
		t.Errorf("DLQ holds %d messages, want none", n)
	}
	if n := depth(t, ln.QueueURL); n != 1 {
		t.Errorf("queue holds %d messages, want the event's copy", n)
	}

	// The operator resumes: the mapping is on again, and the copy is
	// delivered once its hold (up to a probe interval) ends.
	if c, err := operator.Resume(ctx, pausing.ByOperator, "maintenance over"); err != nil || c.Kind != pausing.Resuming {
		t.Fatalf("operator resume: %+v, %v", c, err)
	}
	if on, _ := e.stack.Mappings["held"].Enabled(ctx); !on {
		t.Error("the mapping is off after the resume")
	}
	if r, _ := e.record("held", ev.id); r.Attempts != 0 {
		t.Errorf("record %+v: the event was attempted while paused", r)
	}
}

// TestOperatorPausesAndResumes: the operator command shows the lanes,
// pauses one on the local stack (its pollers stop: an event sent meanwhile
// waits in the queue), shows it paused (also through a deployed stack's
// index), and resumes it (the event is delivered once).
func TestOperatorPausesAndResumes(t *testing.T) {
	t.Parallel()
	rc, other := newReceiver(t, nil), newReceiver(t, nil)
	var reads switchReads
	e := startEnv(t, []string{destJSON("d", rc, `"pause": {"afterFailures": 4}`), destJSON("other", other, "")},
		map[string]*receiver{"d": rc, "other": other}, reads.watch)
	ln, _ := e.stack.Topology.Lane("d")

	out, _, code := e.ops("pause", "d", "--reason", "subscriber maintenance")
	if code != 0 || !strings.Contains(out, "paused d until ") {
		t.Fatalf("pause: exit %d\n%s", code, out)
	}
	// The command line's pause is in the action log the console shows,
	// under the caller's identity.
	actions, err := operator.ActionTable{API: clients.DynamoDB, Table: e.stack.Topology.TableName}.Since(context.Background(), time.Now().Add(-time.Hour))
	if err != nil || len(actions) == 0 || actions[0].Kind != "pause" || actions[0].Destination != "d" || !strings.HasPrefix(actions[0].Identity, "arn:aws:") {
		t.Errorf("action log %+v, %v; want the pause of d under an AWS identity", actions, err)
	}
	pollsEnd(t)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_ops_pause", nil)
	waitFor(t, 10*time.Second, "the other lane's delivery", func() bool { return len(other.ids()) == 1 })
	e.held(&reads, ln, 1)
	if n := len(rc.deliveries()); n != 0 {
		t.Fatalf("%d requests to the paused lane", n)
	}
	if n := depth(t, ln.QueueURL); n != 1 {
		t.Errorf("the paused lane's queue holds %d, want the event", n)
	}

	out, _, code = e.ops("lanes")
	if code != 0 || !regexpMatch(`(?m)^d\s+paused\s+\S+\s+operator\s+subscriber maintenance; resumes by `, out) || !regexpMatch(`(?m)^other\s+active\s+-\s+-\s+does not pause$`, out) {
		t.Errorf("lanes: exit %d\n%s", code, out)
	}
	out, _, code = e.ops("lane", "d")
	for _, want := range []string{"lane d: paused since ", "by the operator: subscriber maintenance", "event source mapping: disabled", "queue: "} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("lane: exit %d, lacks %q\n%s", code, want, out)
		}
	}
	e.publishIndex(e.prefix + "-stack")
	out, _, code = e.opsOnStack(e.prefix+"-stack", "lanes")
	if code != 0 || !regexpMatch(`(?m)^d\s+paused\s+`, out) {
		t.Errorf("lanes through the deployed index: exit %d\n%s", code, out)
	}
	if _, errOut, code := e.ops("pause", "other"); code != 1 || !strings.Contains(errOut, "destination other does not pause") {
		t.Errorf("pause of a lane that does not pause: exit %d, %s", code, errOut)
	}

	out, _, code = e.ops("resume", "d")
	if code != 0 || !strings.Contains(out, "resumed d after ") {
		t.Fatalf("resume: exit %d\n%s", code, out)
	}
	waitFor(t, 15*time.Second, "the event delivered after the resume", func() bool {
		r, _ := e.record("d", ev.id)
		return r.Status == dedupe.StatusDelivered
	})
	e.settled()
	if diff := cmp.Diff([]string{ev.id}, rc.ids()); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}

func regexpMatch(pattern, s string) bool { return regexp.MustCompile(pattern).MatchString(s) }

// TestResumedLaneWithItsMappingOff: an operator's resume raced a pause
// (the pause's disable landed after the resume), leaving the lane recorded
// active with its mapping off. The next tick turns the mapping on, and an
// event sent meanwhile is delivered instead of waiting to expire.
func TestResumedLaneWithItsMappingOff(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("raced", rc, `"pause": {}`)},
		map[string]*receiver{"raced": rc}, func(o *devstack.Options) { o.ProbeInterval = time.Second })
	ln, _ := e.stack.Topology.Lane("raced")
	policy, _ := pausing.RuleFor(ln.Destination)
	sw := e.stack.Mappings["raced"]
	operator, err := pausing.New(pausing.Options{Destination: "raced", Rule: policy, Store: e.stack.Lanes, Switch: sw})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := operator.Pause(ctx, pausing.ByOperator, "maintenance"); err != nil || c.Kind != pausing.Pausing {
		t.Fatalf("operator pause: %+v, %v", c, err)
	}
	if c, err := operator.Resume(ctx, pausing.ByOperator, "maintenance over"); err != nil || c.Kind != pausing.Resuming {
		t.Fatalf("operator resume: %+v, %v", c, err)
	}
	// The racing pause's disable, landing last.
	if err := sw.Disable(ctx); err != nil {
		t.Fatal(err)
	}
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_raced", nil)
	waitFor(t, 60*time.Second, "a tick turning the active lane's mapping on", func() bool {
		on, err := sw.Enabled(ctx)
		return err == nil && on
	})
	waitFor(t, 60*time.Second, "the event delivered", func() bool {
		r, _ := e.record("raced", ev.id)
		return r.Status == dedupe.StatusDelivered
	})
	if s := e.lane("raced"); s.IsPaused() {
		t.Errorf("lane %+v; want active", s)
	}
	if !strings.Contains(e.logs.String(), "the event source mapping was off while the lane is active; turned on") {
		t.Error("no tick logged the reconciliation")
	}
}

// TestHeldMessageKeepsItsSchedule: a message held again and again while
// its lane is paused (its mapping turned on behind the lane's back, each
// receive answered without a POST) keeps its whole schedule: once the
// lane resumes, the failing destination sees every one of its attempts,
// numbered from 1, and only then does the DLQ take it.
func TestHeldMessageKeepsItsSchedule(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	down := newOutage(t)
	e := startEnv(t, []string{destJSON("kept", down.receiver, `"retry": {"schedule": ["1s", "1s"], "jitter": 0}, "timeoutSeconds": 2, "pause": {}`)},
		map[string]*receiver{"kept": down.receiver}, func(o *devstack.Options) { o.ProbeInterval = time.Second })
	ln, _ := e.stack.Topology.Lane("kept")
	policy, _ := pausing.RuleFor(ln.Destination)
	sw := e.stack.Mappings["kept"]
	operator, err := pausing.New(pausing.Options{Destination: "kept", Rule: policy, Store: e.stack.Lanes, Switch: sw})
	if err != nil {
		t.Fatal(err)
	}
	if c, err := operator.Pause(ctx, pausing.ByOperator, "subscriber maintenance"); err != nil || c.Kind != pausing.Pausing {
		t.Fatalf("operator pause: %+v, %v", c, err)
	}
	pollsEnd(t)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_held_often", nil)

	// More holds than the message has receives (maxReceiveCount 3): the
	// ticks keep turning the mapping off, so turn it on again each time.
	const holds = 5
	waitFor(t, 90*time.Second, fmt.Sprintf("%d holds", holds), func() bool {
		if strings.Count(e.logs.String(), `"outcome":"requeued"`) >= holds {
			return true
		}
		if on, err := sw.Enabled(ctx); err == nil && !on {
			if err := sw.Enable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		return false
	})
	if attempts, _, _ := down.counts(); len(attempts[ev.id]) != 0 {
		t.Fatalf("attempts while paused: %v", attempts[ev.id])
	}
	if n := depth(t, ln.DLQURL); n != 0 {
		t.Fatalf("the DLQ holds %d messages while the lane is paused", n)
	}

	if c, err := operator.Resume(ctx, pausing.ByOperator, "maintenance over"); err != nil || c.Kind != pausing.Resuming {
		t.Fatalf("operator resume: %+v, %v", c, err)
	}
	var dlq []string
	waitFor(t, 90*time.Second, "the event in the DLQ after its attempts", func() bool {
		dlq = append(dlq, queueIDs(t, ln.DLQURL, time.Second)...)
		return len(dlq) > 0
	})
	if diff := cmp.Diff([]string{ev.id}, dlq); diff != "" {
		t.Errorf("DLQ (-want +got):\n%s", diff)
	}
	attempts, _, _ := down.counts()
	if diff := cmp.Diff([]int{1, 2, 3}, attempts[ev.id]); diff != "" {
		t.Errorf("attempts the destination saw (-want +got):\n%s", diff)
	}
	if r, _ := e.record("kept", ev.id); r.Status != dedupe.StatusDead || r.Attempts != 3 {
		t.Errorf("record %s after %d attempts; want DEAD after 3", r.Status, r.Attempts)
	}
}

// pollsEnd waits for the long polls begun before a pause to end (a second
// each, and what the deliverer trusts of the lane's mode it last read, on
// an idle machine), with patience: a poll that ended late on a loaded
// machine would hand the next event to a deliverer that thinks the lane
// active.
func pollsEnd(t *testing.T) {
	time.Sleep(patience(t, 2*time.Second))
}
