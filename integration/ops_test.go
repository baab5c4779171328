//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
	ssmtypes "github.com/aws/aws-sdk-go-v2/service/ssm/types"

	"github.com/hookfan/hookfan/infra/ops/operator"
	"github.com/hookfan/hookfan/infra/stack/stackindex"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/payload"
)

// ops runs the operator command against this env's stack, as
// go run ./infra/ops --endpoint … --prefix … --config … ARGS would, and
// returns what it printed and its exit status.
func (e *env) ops(args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	file := filepath.Join(e.t.TempDir(), "config.json")
	if err := os.WriteFile(file, []byte(e.cfgJSON), 0o600); err != nil {
		e.t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	full := append([]string{"--endpoint", os.Getenv("AWS_ENDPOINT_URL"), "--prefix", e.prefix, "--config", file}, args...)
	code = operator.Main(context.Background(), full, &out, &errOut)
	e.t.Logf("$ ops %s\n%s%s(exit %d)", strings.Join(args, " "), out.String(), errOut.String(), code)
	return out.String(), errOut.String(), code
}

// publishIndex writes this env's stack index to the emulator's SSM, as the
// deployed stack's CDK code does (infra/stack/index.go), naming it stack.
func (e *env) publishIndex(stack string) {
	e.t.Helper()
	api := ssm.NewFromConfig(awsCfg)
	put := func(name string, v any) {
		b, err := json.Marshal(v)
		if err != nil {
			e.t.Fatal(err)
		}
		if _, err := api.PutParameter(context.Background(), &ssm.PutParameterInput{Name: &name, Value: aws.String(string(b)),
			Type: ssmtypes.ParameterTypeString, Overwrite: aws.Bool(true)}); err != nil {
			e.t.Fatalf("put %s: %v", name, err)
		}
	}
	topo := e.stack.Topology
	put(stackindex.StackParameter(stack), stackindex.Stack{TopicARN: topo.TopicARN, TableName: topo.TableName,
		DestinationsPath: stackindex.DestinationsPath(stack), ArchiveBucket: topo.Archive.Bucket, ArchiveDays: topo.Archive.Days})
	for _, l := range topo.Lanes {
		put(stackindex.LaneParameter(stack, l.Destination.Name), stackindex.Lane{Destination: l.Destination.Name, URL: l.Destination.URL,
			QueueURL: l.QueueURL, QueueARN: l.QueueARN, DLQURL: l.DLQURL, DLQARN: l.DLQARN, SecretID: l.SecretID, Filter: l.Destination.Filter,
			Pause: stackindex.PauseOf(l.Destination), RetentionSeconds: int(l.Destination.Retention().Seconds())})
	}
}

// opsOnStack runs the operator command on the stack publishIndex named,
// through the deployed resolver (SSM), with the emulator standing in for AWS.
func (e *env) opsOnStack(stack string, args ...string) (stdout, stderr string, code int) {
	e.t.Helper()
	var out, errOut bytes.Buffer
	code = operator.Main(context.Background(), append([]string{"--stack", stack}, args...), &out, &errOut)
	e.t.Logf("$ ops --stack %s %s\n%s%s(exit %d)", stack, strings.Join(args, " "), out.String(), errOut.String(), code)
	return out.String(), errOut.String(), code
}

// operator builds the operator on this env's stack with sqsAPI in place of
// the SQS client (tests inject failures with it).
func (e *env) operator(sqsAPI operator.QueueAPI) *operator.Operator {
	e.t.Helper()
	res, err := operator.Local{SQS: clients.SQS, Config: e.cfg, Prefix: e.prefix, Endpoint: "moto"}.Resolve(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	var out syncBuffer
	op := &operator.Operator{Resources: res, SQS: sqsAPI, Records: e.stack.Store,
		Archive: archive.NewReader(clients.S3, res.ArchiveBucket), Out: &out, Progress: &out}
	if res.PayloadBucket != "" { // as the ops command builds it
		op.Payloads = &payload.S3{API: clients.S3, Bucket: res.PayloadBucket, Archive: res.ArchiveBucket}
	}
	return op
}

// depth is a queue's visible, in-flight and delayed messages.
func depth(t *testing.T, url string) int {
	t.Helper()
	visible, inFlight, delayed := queueCounts(t, url)
	return visible + inFlight + delayed
}

// failingDestination starts a stack whose destination d answers 500 until
// fixed, sends n events, and waits until every one is DEAD and in d's DLQ.
func failingDestination(t *testing.T, n int) (*env, *receiver, []sent, *atomic.Bool) {
	t.Helper()
	var fixed atomic.Bool
	rc := newReceiver(t, func(int, *http.Request) int {
		if fixed.Load() {
			return http.StatusNoContent
		}
		return http.StatusInternalServerError
	})
	e := startEnv(t, []string{destJSON("d", rc, `"retry": {"schedule": ["1s"], "jitter": 0}`)}, map[string]*receiver{"d": rc})
	var evs []sent
	for i := range n {
		evs = append(evs, e.send("stripe", "stripe", "payment_intent.succeeded", t.Name()+"_"+strconv.Itoa(i), nil))
	}
	lane, _ := e.stack.Topology.Lane("d")
	var seen []string // what the last look found, for a failure's report
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("records and DLQ at the last look: %v", seen)
		}
	})
	waitFor(t, 60*time.Second, "every event DEAD and in the DLQ", func() bool {
		seen = seen[:0]
		dead := true
		for _, ev := range evs {
			r, _ := e.record("d", ev.id)
			seen = append(seen, fmt.Sprintf("%s: %s after %d attempts", ev.id, r.Status, r.Attempts))
			dead = dead && r.Status == dedupe.StatusDead
		}
		n2 := depth(t, lane.DLQURL)
		seen = append(seen, fmt.Sprintf("DLQ %d", n2))
		return dead && n2 == n
	})
	return e, rc, evs, &fixed
}

// TestRedriveAfterFix: a failing destination's events end in its DLQ; dlq
// lists them with their last error; the subscriber is fixed; redrive moves
// them back and each is delivered exactly once.
func TestRedriveAfterFix(t *testing.T) {
	t.Parallel()
	e, rc, evs, fixed := failingDestination(t, 3)

	// dlq through the deployed stack's index (SSM), the emulator standing in for AWS.
	e.publishIndex(e.prefix + "-stack")
	out, _, code := e.opsOnStack(e.prefix+"-stack", "dlq", "d")
	if code != 0 || !strings.Contains(out, "DLQ of d: 3 message(s)") {
		t.Fatalf("dlq: exit %d\n%s", code, out)
	}
	for _, ev := range evs {
		if !strings.Contains(out, ev.id) || !strings.Contains(out, "DEAD after 2 attempt(s): HTTP 500") {
			t.Errorf("dlq does not list %s with its last error", ev.id)
		}
	}
	lane, _ := e.stack.Topology.Lane("d")
	if n := depth(t, lane.DLQURL); n != 3 {
		t.Errorf("after dlq the DLQ holds %d, want the 3 (dlq must not consume)", n)
	}

	fixed.Store(true)
	out, errOut, code := e.ops("redrive", "d")
	if code != 0 || !strings.Contains(out, "redrive d (copy): moved 3 message(s) from its DLQ to its queue; 0 left in the DLQ") ||
		!strings.Contains(errOut, "this endpoint has no SQS move task (StartMessageMoveTask; emulators such as moto lack it), so redrive copies") ||
		strings.Count(errOut, "move task") != 1 || strings.Contains(errOut, "deserialization") {
		t.Fatalf("redrive: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 30*time.Second, "every event delivered", func() bool {
		for _, ev := range evs {
			if r, _ := e.record("d", ev.id); r.Status != dedupe.StatusDelivered {
				return false
			}
		}
		return true
	})
	e.settled()
	for _, ev := range evs {
		if n := rc.accepted(ev.id); n != 1 {
			t.Errorf("%s accepted %d times, want exactly once", ev.id, n)
		}
	}
	if n := depth(t, lane.DLQURL) + depth(t, lane.QueueURL); n != 0 {
		t.Errorf("%d messages left in the queue and DLQ", n)
	}
}

// crashingSQS is the SQS client with one DeleteMessage failing, as if the
// redrive crashed after sending a message and before deleting it.
type crashingSQS struct {
	operator.QueueAPI
	mu      sync.Mutex
	deletes int
	failAt  int
}

func (c *crashingSQS) DeleteMessage(ctx context.Context, in *sqs.DeleteMessageInput, optFns ...func(*sqs.Options)) (*sqs.DeleteMessageOutput, error) {
	c.mu.Lock()
	c.deletes++
	fail := c.deletes == c.failAt
	c.mu.Unlock()
	if fail {
		return nil, errors.New("killed between the send and the delete")
	}
	return c.QueueAPI.DeleteMessage(ctx, in, optFns...)
}

// TestRedriveInterruptedAndRerun: a redrive dies after sending its second
// message and before deleting it (the worst moment: that message is now
// both in the queue and in the DLQ); run again, it moves everything left,
// and every event is delivered exactly once: nothing lost, nothing doubled.
func TestRedriveInterruptedAndRerun(t *testing.T) {
	t.Parallel()
	e, rc, evs, fixed := failingDestination(t, 4)
	fixed.Store(true)

	op := e.operator(&crashingSQS{QueueAPI: clients.SQS, failAt: 2})
	_, err := op.Redrive(context.Background(), "d", operator.RedriveOptions{Copy: true, Visibility: 5 * time.Second})
	if err == nil || !strings.Contains(err.Error(), "after sending it") || !strings.Contains(err.Error(), "1 moved so far; run redrive again") {
		t.Fatalf("interrupted redrive: %v", err)
	}
	t.Logf("interrupted redrive: %v", err)

	out, errOut, code := e.ops("redrive", "d")
	if code != 0 || !strings.Contains(out, "moved 3 message(s) from its DLQ to its queue; 0 left in the DLQ") {
		t.Fatalf("redrive again: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 30*time.Second, "every event delivered", func() bool {
		for _, ev := range evs {
			if r, _ := e.record("d", ev.id); r.Status != dedupe.StatusDelivered {
				return false
			}
		}
		return true
	})
	lane, _ := e.stack.Topology.Lane("d")
	waitFor(t, 30*time.Second, "the queue drained (the extra copy acknowledged)", func() bool {
		return depth(t, lane.QueueURL)+depth(t, lane.DLQURL) == 0
	})
	e.settled()
	for _, ev := range evs {
		if n := rc.accepted(ev.id); n != 1 {
			t.Errorf("%s accepted %d times, want exactly once", ev.id, n)
		}
	}
	if !strings.Contains(e.logs.String(), "duplicate") {
		t.Error("no duplicate was acknowledged: the interrupted run's extra copy went unnoticed")
	}
}

// TestArchiveKeepsAcceptedEvents: every event ingest accepts is archived
// through the emulator's S3 in the archive's format and layout (one object
// per buffer, hour-partitioned, gzip, one envelope per line), with its body,
// every attribute and its received time; the reader finds each once, and a
// dry-run replay lists them and sends nothing.
func TestArchiveKeepsAcceptedEvents(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("d", rc, `"filter": {"sources": ["stripe"]}`)}, map[string]*receiver{"d": rc})
	start := time.Now().Add(-time.Minute)
	var evs []sent
	for i := range 3 {
		evs = append(evs, e.send("stripe", "stripe", "payment_intent.succeeded", "evt_archive_"+strconv.Itoa(i), nil))
	}
	push := e.send("github", "github", "push", "d1f0c2a0-0000-4000-8000-00000000a001", nil)
	e.send("stripe", "stripe", "payment_intent.succeeded", "evt_archive_0", nil) // a provider's retry: archived again

	reader := archive.NewReader(clients.S3, e.stack.Topology.Archive.Bucket)
	var got map[string]archive.Event
	waitFor(t, 30*time.Second, "five archived records", func() bool {
		got = map[string]archive.Event{}
		p, err := reader.Scan(context.Background(), archive.Query{Since: start, Until: time.Now().Add(time.Minute)}, func(ev archive.Event) error {
			got[ev.ID] = ev
			return nil
		}, archive.Options{})
		return err == nil && p.Records == 5
	})
	if len(got) != 4 {
		t.Fatalf("the reader yielded %d events, want 4 (the retry's copy once)", len(got))
	}
	for _, ev := range append(evs, push) {
		a, ok := got[ev.id]
		if !ok {
			t.Errorf("%s is not in the archive", ev.id)
			continue
		}
		if a.ReceivedAt.Before(start) || a.ReceivedAt.After(time.Now()) || a.Attributes["content_type"].Value == "" || a.Message == "" {
			t.Errorf("%s archived as %+v", ev.id, a)
		}
	}
	keys, err := clients.S3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: aws.String(e.stack.Topology.Archive.Bucket)})
	if err != nil || len(keys.Contents) == 0 {
		t.Fatalf("list the archive: %v", err)
	}
	for _, o := range keys.Contents {
		if k := aws.ToString(o.Key); !strings.HasPrefix(k, archive.PartitionPrefix(time.Now())) && !strings.HasPrefix(k, archive.PartitionPrefix(start)) || !strings.HasSuffix(k, ".gz") {
			t.Errorf("object key %s is not in the layout", k)
		}
	}

	out, _, code := e.ops("replay", "--destination", "d", "--since", "10m", "--dry-run")
	if code != 0 || !strings.Contains(out, "would replay 3 event(s) to d; 1 other(s) in range are not for d") {
		t.Fatalf("dry run: exit %d\n%s", code, out)
	}
	for _, ev := range evs {
		if !strings.Contains(out, "would replay "+ev.id) {
			t.Errorf("the dry run does not list %s", ev.id)
		}
	}
	lane, _ := e.stack.Topology.Lane("d")
	e.settled()
	if n := depth(t, lane.QueueURL); n != 0 || len(rc.ids()) != 3 {
		t.Errorf("after a dry run: %d queued, %d delivered; want nothing sent", n, len(rc.ids()))
	}
}

// duplicatingSQS sends every message twice, as SQS's at-least-once
// delivery may hand a consumer the same message twice.
type duplicatingSQS struct{ operator.QueueAPI }

func (d duplicatingSQS) SendMessage(ctx context.Context, in *sqs.SendMessageInput, optFns ...func(*sqs.Options)) (*sqs.SendMessageOutput, error) {
	if _, err := d.QueueAPI.SendMessage(ctx, in, optFns...); err != nil {
		return nil, err
	}
	return d.QueueAPI.SendMessage(ctx, in, optFns...)
}

// archived waits until the archive holds the events.
func (e *env) archived(ids ...string) {
	e.t.Helper()
	reader := archive.NewReader(clients.S3, e.stack.Topology.Archive.Bucket)
	waitFor(e.t, 30*time.Second, "the events in the archive", func() bool {
		found := map[string]bool{}
		_, err := reader.Scan(context.Background(), archive.Query{Since: time.Now().Add(-time.Hour), Until: time.Now().Add(time.Minute)}, func(ev archive.Event) error {
			found[ev.ID] = true
			return nil
		}, archive.Options{})
		for _, id := range ids {
			if !found[id] {
				return false
			}
		}
		return err == nil
	})
}

// TestReplayDeliveredEvent: replay --event of a delivered event delivers it
// once more, signed, with the same webhook-id and body; the record shows the
// replay; a second copy of the replayed message (SQS at least once) is
// acknowledged without a POST; another destination is untouched.
func TestReplayDeliveredEvent(t *testing.T) {
	t.Parallel()
	rc, other := newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("d", rc, ""), destJSON("other", other, "")}, map[string]*receiver{"d": rc, "other": other})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_replay_one", nil)
	waitFor(t, 20*time.Second, "the first delivery", func() bool { return rc.accepted(ev.id) == 1 && other.accepted(ev.id) == 1 })
	e.archived(ev.id)

	out, _, code := e.ops("replay", "--destination", "d", "--event", "stripe:evt_replay_one")
	if code != 0 || !strings.Contains(out, "replayed "+ev.id) || !strings.Contains(out, "replayed 1 event(s) to d") {
		t.Fatalf("replay: exit %d\n%s", code, out)
	}
	waitFor(t, 20*time.Second, "the replay's delivery", func() bool { return rc.accepted(ev.id) == 2 })

	// The same replay again, its message duplicated on the way: no POST.
	id := strings.Fields(strings.SplitN(out, "\n", 2)[0])[1] // "replay <id> to d"
	op := e.operator(duplicatingSQS{clients.SQS})
	if _, err := op.Replay(context.Background(), operator.ReplayOptions{Destination: "d", Event: ev.id, ID: id}); err != nil {
		t.Fatal(err)
	}
	lane, _ := e.stack.Topology.Lane("d")
	waitFor(t, 20*time.Second, "both copies handled", func() bool { return depth(t, lane.QueueURL) == 0 })
	e.settled()

	got := rc.deliveries()
	if len(got) != 2 || rc.accepted(ev.id) != 2 {
		t.Fatalf("d got %d requests, want 2 (the delivery and one replay)", len(got))
	}
	for _, d := range got {
		if !d.verified || d.header.Get("webhook-id") != ev.id || !bytes.Equal(d.body, got[0].body) {
			t.Errorf("a delivery: verified %v, webhook-id %q, same body %v", d.verified, d.header.Get("webhook-id"), bytes.Equal(d.body, got[0].body))
		}
	}
	if n := len(other.deliveries()); n != 1 {
		t.Errorf("the other destination got %d requests, want 1", n)
	}
	r, _ := e.record("d", ev.id)
	if r.Status != dedupe.StatusDelivered || len(r.History) != 2 || r.History[1].Replay != id || len(r.Replays) != 1 {
		t.Errorf("record %s, history %+v, replays %v", r.Status, r.History, r.Replays)
	}
	out, _, _ = e.ops("status", ev.id)
	if !strings.Contains(out, "replay "+id) || !strings.Contains(out, "replays that ended here: "+id) {
		t.Errorf("status does not show the replay:\n%s", out)
	}
}

// TestReplaySinceFiftyEvents: 50 delivered events (and 10 another source
// sent, which the destination does not subscribe to) replayed by time
// range: each of the 50 is delivered exactly once more, the others not at
// all.
func TestReplaySinceFiftyEvents(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("d", rc, `"filter": {"sources": ["stripe"]}`)}, map[string]*receiver{"d": rc})
	start := time.Now().Add(-time.Second)
	var ids []string
	for i := range 50 {
		ids = append(ids, e.send("stripe", "stripe", "payment_intent.succeeded", "evt_replay_"+strconv.Itoa(i), nil).id)
	}
	var others []string
	for i := range 10 {
		others = append(others, e.send("github", "github", "push", fmt.Sprintf("d1f0c2a0-0000-4000-8000-0000000%05d", i), nil).id)
	}
	waitFor(t, 60*time.Second, "the 50 deliveries", func() bool { return len(rc.ids()) >= 50 })
	e.archived(append(ids, others...)...)

	out, errOut, code := e.ops("replay", "--destination", "d", "--since", start.UTC().Format(time.RFC3339Nano))
	if code != 0 || !strings.Contains(out, "replayed 50 event(s) to d; 10 other(s) in range are not for d") || !strings.Contains(errOut, "replay: read") {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 90*time.Second, "the 50 replays", func() bool { return len(rc.ids()) >= 100 })
	e.settled()
	for _, id := range ids {
		if n := rc.accepted(id); n != 2 {
			t.Errorf("%s accepted %d times, want 2 (delivered, then replayed once)", id, n)
		}
	}
	if n := len(rc.deliveries()); n != 100 {
		t.Errorf("d got %d requests, want 100", n)
	}
}

// TestStatusShowsTheAttemptHistory: an event that failed twice and then was
// delivered shows each attempt (time, outcome, status, latency, error, who
// claimed) at its destination, and nothing at one that filtered it out.
func TestStatusShowsTheAttemptHistory(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, func(n int, _ *http.Request) int {
		if n <= 2 {
			return http.StatusServiceUnavailable
		}
		return http.StatusNoContent
	})
	skip := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("d", rc, `"retry": {"schedule": ["1s", "1s", "1s"], "jitter": 0}`),
		destJSON("github-only", skip, `"filter": {"sources": ["github"]}`)}, map[string]*receiver{"d": rc, "github-only": skip})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_history_1", nil)
	waitFor(t, 30*time.Second, "the third attempt's delivery", func() bool {
		r, _ := e.record("d", ev.id)
		return r.Status == dedupe.StatusDelivered
	})

	out, _, code := e.ops("status", "stripe:evt_history_1")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, out)
	}
	for _, want := range []string{"event " + ev.id, "state DELIVERED, 3 attempt(s)", "attempts (the last 10; oldest first):",
		"  FAILED    HTTP 503", "  DELIVERED HTTP 204", "github-only\n  no delivery record", "in DLQ: no"} {
		if !strings.Contains(out, want) {
			t.Errorf("status output lacks %q", want)
		}
	}
	if strings.Count(out, "  FAILED    HTTP 503") != 2 || strings.Count(out, " by ") != 3 {
		t.Errorf("status shows %d failed attempts and %d claimers, want 2 and 3", strings.Count(out, "  FAILED    HTTP 503"), strings.Count(out, " by "))
	}
	// The provider's id alone, as the operator knows it, resolves to the
	// source's event and says so; an id nothing holds fails.
	out, errOut, code := e.ops("status", "evt_history_1")
	if code != 0 || !strings.HasPrefix(out, "resolved to stripe:evt_history_1\nevent "+ev.id+"\n") || !strings.Contains(out, "state DELIVERED, 3 attempt(s)") {
		t.Errorf("status evt_history_1: exit %d, want 0 and the stripe event resolved\n%s%s", code, out, errOut)
	}
	out, errOut, code = e.ops("status", "evt_history_none")
	if code != 1 || !strings.Contains(errOut, "no destination has a record of evt_history_none") {
		t.Errorf("status evt_history_none: exit %d, want 1 and why\n%s%s", code, out, errOut)
	}
}

// TestEventsListsRecentEvents: ops events lists the events first attempted
// in a window, newest first, with each destination's state (delivered at
// one, dead at a failing one, no record where a filter left it out),
// narrowed by source, type and destination, on the local stack and through
// a deployed stack's index.
func TestEventsListsRecentEvents(t *testing.T) {
	t.Parallel()
	ok := newReceiver(t, nil)
	down := newReceiver(t, func(int, *http.Request) int { return http.StatusInternalServerError })
	skip := newReceiver(t, nil)
	e := startEnv(t, []string{destJSON("ok", ok, ""), destJSON("down", down, `"retry": {"schedule": ["1s"], "jitter": 0}`),
		destJSON("github-only", skip, `"filter": {"sources": ["github"]}`)},
		map[string]*receiver{"ok": ok, "down": down, "github-only": skip})
	first := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_events_1", nil)
	waitFor(t, 60*time.Second, "the first event delivered", func() bool {
		r, _ := e.record("ok", first.id)
		return r.Status == dedupe.StatusDelivered
	})
	second := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_events_2", nil)
	waitFor(t, 60*time.Second, "both events delivered to ok and dead at down", func() bool {
		for _, ev := range []sent{first, second} {
			if r, _ := e.record("ok", ev.id); r.Status != dedupe.StatusDelivered {
				return false
			}
			if r, _ := e.record("down", ev.id); r.Status != dedupe.StatusDead {
				return false
			}
		}
		return true
	})

	check := func(name, out string, code int, want []string) {
		t.Helper()
		if code != 0 {
			t.Fatalf("%s: exit %d\n%s", name, code, out)
		}
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q", name, w)
			}
		}
	}
	out, _, code := e.ops("events", "--since", "10m")
	check("events", out, code, []string{"2 event(s) first attempted since",
		"  ok           DELIVERED   1 attempt(s), last HTTP 204",
		"  down         DEAD        2 attempt(s), last HTTP 500",
		"  github-only  no record (filtered out, still queued, or not received)"})
	if i, j := strings.Index(out, second.id), strings.Index(out, first.id); i < 0 || j < 0 || i > j {
		t.Errorf("events: want %s (newer) listed before %s", second.id, first.id)
	}

	out, _, code = e.ops("events", "--since", "10m", "--destination", "ok", "--max", "1")
	check("events --destination ok --max 1", out, code, []string{"2 events first attempted since", "the newest 1 (--max)", second.id})
	if strings.Contains(out, first.id) || strings.Contains(out, "down") {
		t.Errorf("events --destination ok --max 1 shows more than the newest event at ok:\n%s", out)
	}
	for _, args := range [][]string{{"--source", "github"}, {"--type", "invoice.*"}} {
		out, _, code = e.ops(append([]string{"events", "--since", "10m"}, args...)...)
		check(strings.Join(args, " "), out, code, []string{"no event first attempted since"})
	}
	out, _, code = e.ops("events", "--since", "10m", "--type", "payment_intent.*", "--source", "stripe")
	check("events --type payment_intent.*", out, code, []string{"2 event(s)", first.id, second.id})

	e.publishIndex(e.prefix + "-stack")
	out, _, code = e.opsOnStack(e.prefix+"-stack", "events", "--since", "10m")
	check("events on a deployed stack", out, code, []string{"2 event(s) first attempted since", first.id, second.id,
		"  down         DEAD        2 attempt(s), last HTTP 500"})
	if _, _, code := e.ops("events", "stray"); code != 2 {
		t.Errorf("events stray: exit %d, want 2", code)
	}
}
