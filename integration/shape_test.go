//go:build integration

package integration

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sigv4test"
)

// TestSigV4OnTheWire: a destination with auth.sigv4 reaches a server that
// checks the SigV4 signature as AWS would, recomputing it with the SDK's
// own signer from the credentials the local stack runs with (the lane
// role's, in AWS), and answers 403 to a request it does not verify; the
// Standard Webhooks signature still verifies beside it.
func TestSigV4OnTheWire(t *testing.T) {
	t.Parallel()
	creds, err := awsCfg.Credentials.Retrieve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var rc *receiver
	var mu sync.Mutex
	var verr error
	rc = newReceiver(t, func(n int, r *http.Request) int {
		body := rc.deliveries()[n-1].body
		if _, err := sigv4test.Verify(r, body, creds, "execute-api", "eu-west-1", 15*time.Minute); err != nil {
			mu.Lock()
			verr = err
			mu.Unlock()
			return http.StatusForbidden
		}
		return http.StatusNoContent
	})
	e := startEnv(t, []string{destJSON("iam", rc, `"auth": {"sigv4": {"service": "execute-api", "region": "eu-west-1"}}, "headers": [{"name": "X-Tenant", "value": "acme"}]`)},
		map[string]*receiver{"iam": rc})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_sigv4_one", nil)
	waitFor(t, 20*time.Second, "the signed delivery", func() bool {
		r, _ := e.record("iam", ev.id)
		return r.Status != "" && r.Status != dedupe.StatusInProgress
	})
	r, _ := e.record("iam", ev.id)
	got := rc.deliveries()
	mu.Lock()
	defer mu.Unlock()
	if r.Status != dedupe.StatusDelivered || len(got) != 1 || verr != nil {
		t.Fatalf("record %s (%s), %d requests, SigV4 check: %v; want one delivery that verifies", r.Status, r.LastError, len(got), verr)
	}
	if !got[0].verified || got[0].header.Get("X-Tenant") != "acme" || !strings.HasPrefix(got[0].header.Get("Authorization"), "AWS4-HMAC-SHA256 Credential="+creds.AccessKeyID+"/") {
		t.Errorf("Standard Webhooks verified %v, X-Tenant %q, Authorization %q", got[0].verified, got[0].header.Get("X-Tenant"), got[0].header.Get("Authorization"))
	}
}

// TestTransformEndToEnd: one Stripe event reaches a destination whose
// transform reshapes it (the transformed JSON arrives, signed over those
// bytes) and one whose transform fails on it (DEAD after one attempt,
// nothing sent, the message in its DLQ, the queue empty). The local stack
// is then run again with both transforms changed: a redrive of the DLQ
// and a replay from the archive are shaped by the current transforms.
func TestTransformEndToEnd(t *testing.T) {
	t.Parallel()
	slack, broken := newReceiver(t, nil), newReceiver(t, nil)
	receivers := map[string]*receiver{"slack": slack, "broken": broken}
	dests := func(slackExpr, brokenExpr string) []string {
		return []string{destJSON("slack", slack, `"transform": "`+slackExpr+`"`), destJSON("broken", broken, `"transform": "`+brokenExpr+`"`)}
	}
	prefix := uniquePrefix(t)
	e := startEnvAt(t, prefix, sourcesJSON, dests(`{text: (.type + \" \" + (.data.object.amount | tostring))}`, `.data.object.amount | keys`), receivers)
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_shape_one", nil)
	waitFor(t, 20*time.Second, "the shaped delivery and the dead record", func() bool {
		r, _ := e.record("broken", ev.id)
		return slack.accepted(ev.id) == 1 && r.Status == dedupe.StatusDead
	})
	d := slack.deliveries()[0]
	if string(d.body) != `{"text":"payment_intent.succeeded 4200"}` || !d.verified || d.header.Get("Content-Type") != "application/json" {
		t.Errorf("slack got %s (verified %v, Content-Type %q)", d.body, d.verified, d.header.Get("Content-Type"))
	}
	r, _ := e.record("broken", ev.id)
	if r.Attempts != 1 || !strings.HasPrefix(r.LastError, "transform: the expression failed: keys cannot be applied to") {
		t.Errorf("broken's record: %d attempts, %q; want DEAD after one, naming the transform's error", r.Attempts, r.LastError)
	}
	lane, _ := e.stack.Topology.Lane("broken")
	waitFor(t, 20*time.Second, "the message in broken's DLQ", func() bool { return depth(t, lane.DLQURL) == 1 })
	if n := depth(t, lane.QueueURL); n != 0 || len(broken.deliveries()) != 0 {
		t.Errorf("broken's queue holds %d, its receiver got %d requests; want none", n, len(broken.deliveries()))
	}
	out, _, code := e.ops("dlq", "broken")
	if code != 0 || !strings.Contains(out, ev.id) || !strings.Contains(out, "transform: ") {
		t.Errorf("dlq does not show the event and its transform error (exit %d):\n%s", code, out)
	}
	e.archived(ev.id)
	e.stop()

	// Fixed and changed, as a deploy would: the same queues, records, archive.
	e2 := startEnvAt(t, prefix, sourcesJSON, dests(`{v: 2, type}`, `{amount: .data.object.amount}`), receivers)
	if out, errOut, code := e2.ops("redrive", "broken"); code != 0 {
		t.Fatalf("redrive: exit %d\n%s%s", code, out, errOut)
	}
	if out, errOut, code := e2.ops("replay", "--destination", "slack", "--event", "stripe:evt_shape_one"); code != 0 {
		t.Fatalf("replay: exit %d\n%s%s", code, out, errOut)
	}
	waitFor(t, 30*time.Second, "the redriven and replayed deliveries", func() bool { return broken.accepted(ev.id) == 1 && slack.accepted(ev.id) == 2 })
	if b := broken.deliveries()[0]; string(b.body) != `{"amount":4200}` || !b.verified {
		t.Errorf("redriven: %s (verified %v), want the fixed transform's output", b.body, b.verified)
	}
	if s := slack.deliveries()[1]; string(s.body) != `{"type":"payment_intent.succeeded","v":2}` || !s.verified {
		t.Errorf("replayed: %s (verified %v), want the current transform's output", s.body, s.verified)
	}
	if r, _ := e2.record("broken", ev.id); r.Status != dedupe.StatusDelivered {
		t.Errorf("broken's record %s after the redrive, want DELIVERED", r.Status)
	}
}
