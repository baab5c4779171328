package stack_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// orderedSources are the sources of the lanes configurations
// (lanesConfig, alarmedLanesConfig): Stripe and Shopify.
const orderedSources = `
	{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}},
	{"name": "shop", "verify": {"kind": "shopify", "secretName": "hookfan/sources/shop"}}`

// orderedDests are TestOrderedLanes's lanes: a standard destination and
// two ordered ones (a body key with a source filter and pause, a header
// key).
var orderedDests = []string{
	`{"name": "plain", "url": "https://a.example.com/hooks", "batchWindowSeconds": 2}`,
	`{"name": "orders", "url": "https://b.example.com/hooks", "ordering": {"key": "body:data.object.id"},
	  "filter": {"sources": ["stripe"], "types": ["payment_intent.*"]}, "batchSize": 5, "maxConcurrency": 4,
	  "pause": {"afterFailures": 10, "failureRate": 0.9, "probeEvery": "2m", "maxPause": "12h"}}`,
	`{"name": "shop-orders", "url": "https://c.example.com/hooks", "ordering": {"key": "header:X-Shopify-Order-Id"},
	  "filter": {"sources": ["shop"]}}`,
}

// TestOrderedLanes: an ordered destination's lane is an SQS FIFO queue
// with FIFO DLQs, subscribed with its filter and raw delivery to the SNS
// FIFO topic, which only ingest may publish to, with the fan-out topic's
// encryption and TLS only; the mapping reports partial failures, has no
// batching window and keeps the lane's concurrency; the standard lane
// beside it stays as it was. Its lanes (orderedDests) are checked in
// lanesConfig without the alarm e-mail and in alarmedLanesConfig with it.
func TestOrderedLanes(t *testing.T) {
	for _, tt := range []struct {
		email string
		cfg   func(*testing.T) *config.Config
	}{{"", lanesConfig}, {"ops@example.com", alarmedLanesConfig}} {
		email := tt.email
		t.Run(fmt.Sprintf("email %q", email), func(t *testing.T) {
			cfg := tt.cfg(t)
			if cfg.Alarms.Email != email {
				t.Fatalf("alarm e-mail %q, want %q", cfg.Alarms.Email, email)
			}
			h, _ := synth(t, cfg)
			if h.OrderedTopic == nil {
				t.Fatal("no FIFO topic with ordered destinations")
			}
			_, parent := templateOf(t, h.Stack)
			fanoutID, fanout := topicOf(t, parent)
			fifoID := *h.Stack.GetLogicalId(h.OrderedTopic.Node().DefaultChild().(awscdk.CfnElement))
			fifo := parent[fifoID]
			fp := fifo.Properties
			if fp["FifoTopic"] != true || fp["ContentBasedDeduplication"] != false || fp["FifoThroughputScope"] != "MessageGroup" {
				t.Errorf("FIFO topic %v: want FifoTopic, no content-based deduplication, FifoThroughputScope MessageGroup", fp)
			}
			if !strings.HasSuffix(fmt.Sprint(fp["TopicName"]), ".fifo") {
				t.Errorf("FIFO topic name %v, want one ending in .fifo", fp["TopicName"])
			}
			if fmt.Sprint(fp["KmsMasterKeyId"]) != fmt.Sprint(fanout.Properties["KmsMasterKeyId"]) || fp["KmsMasterKeyId"] == nil {
				t.Errorf("FIFO topic key %v, want the fan-out topic's %v", fp["KmsMasterKeyId"], fanout.Properties["KmsMasterKeyId"])
			}
			if got := len(ofType(parent, "AWS::SNS::Topic")); got != 2+boolInt(email != "") {
				t.Errorf("%d topics, want the fan-out topic, the FIFO topic and the alarm topic (with e-mail)", got)
			}
			checkTopicGuard(t, parent, fanoutID, h)
			checkTopicGuard(t, parent, fifoID, h)

			// Ingest publishes to both topics, and learns the FIFO topic's ARN.
			roleID := *h.Stack.GetLogicalId(h.Ingest.Role.Node().DefaultChild().(awscdk.CfnElement))
			var published []string
			for _, p := range ofType(parent, "AWS::IAM::Policy") {
				if !slices.ContainsFunc(asSlice(p.Properties["Roles"]), func(r any) bool { return refID(r) == roleID }) {
					continue
				}
				for _, st := range statements(p.Properties["PolicyDocument"]) {
					if slices.Contains(anyStrings(st["Action"]), "sns:Publish") {
						if len(anyStrings(st["Action"])) != 1 {
							t.Errorf("ingest's publish statement %v grants more than sns:Publish", st)
						}
						for _, r := range asSlice(st["Resource"]) {
							published = append(published, refID(r))
						}
					}
				}
			}
			if want := []string{fanoutID, fifoID}; !cmp.Equal(slices.Sorted(slices.Values(published)), slices.Sorted(slices.Values(want))) {
				t.Errorf("ingest publishes to %v, want %v", published, want)
			}
			fnID := *h.Stack.GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
			env := parent[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)
			if refID(env["HOOKFAN_ORDERED_TOPIC_ARN"]) != fifoID || h.Ingest.Env.OrderedTopicARN == "" {
				t.Errorf("ingest HOOKFAN_ORDERED_TOPIC_ARN %v (contract %q), want the FIFO topic %s", env["HOOKFAN_ORDERED_TOPIC_ARN"], h.Ingest.Env.OrderedTopicARN, fifoID)
			}

			for _, name := range namesOf(t, orderedDests) {
				i := laneIndex(t, cfg, name)
				d := cfg.Destinations[i]
				_, res := templateOf(t, h.LaneStacks[i])
				checkLane(t, d, cfg, res, email != "")
				// The lane's topic: the nested stack's parameter, set by the parent.
				sub := ofType(res, "AWS::SNS::Subscription")
				for _, s := range sub {
					param := refID(s.Properties["TopicArn"])
					got := refID(nestedParameter(t, parent, h, i, param))
					want := fanoutID
					if d.Ordered() {
						want = fifoID
					}
					if got != want {
						t.Errorf("%s: subscribed to %s (parameter %s), want %s", d.Name, got, param, want)
					}
				}
				if d.Ordered() != h.Lanes[i].Env.Destination.Ordered() {
					t.Errorf("%s: delivery contract's destination ordered %v, want %v", d.Name, h.Lanes[i].Env.Destination.Ordered(), d.Ordered())
				}
			}
		})
	}
}

// checkOrderedLane checks what an ordered lane adds to checkLane's checks
// (and that a standard lane has none of it): every queue FIFO in
// high-throughput mode, the queue named *.fifo, the mapping without a
// batching window and within FIFO's batch size, and the queue's policy
// letting SNS send only from the topic the lane subscribes to.
func checkOrderedLane(t *testing.T, d config.Destination, res map[string]resource) {
	t.Helper()
	queues := ofType(res, "AWS::SQS::Queue")
	for id, q := range queues {
		p := q.Properties
		if !d.Ordered() {
			if p["FifoQueue"] != nil || p["DeduplicationScope"] != nil || p["FifoThroughputLimit"] != nil {
				t.Errorf("%s: standard lane's queue %s has FIFO attributes %v", d.Name, id, p)
			}
			continue
		}
		if p["FifoQueue"] != true || p["DeduplicationScope"] != "messageGroup" || p["FifoThroughputLimit"] != "perMessageGroupId" || p["ContentBasedDeduplication"] != false {
			t.Errorf("%s: queue %s: FifoQueue %v, DeduplicationScope %v, FifoThroughputLimit %v, ContentBasedDeduplication %v; want a FIFO queue in high-throughput mode deduplicating by ingest's id",
				d.Name, id, p["FifoQueue"], p["DeduplicationScope"], p["FifoThroughputLimit"], p["ContentBasedDeduplication"])
		}
		if name, ok := p["QueueName"].(string); ok && (!strings.HasSuffix(name, "-queue.fifo") || len(name) > 80) {
			t.Errorf("%s: queue name %q, want …-queue.fifo within 80 characters", d.Name, name)
		}
	}
	// The index tells the operator command the key spec ("" when standard).
	_, param := only(t, res, "AWS::SSM::Parameter")
	var index map[string]any
	if err := json.Unmarshal([]byte(joined(param.Properties["Value"])), &index); err != nil {
		t.Fatalf("%s: index value: %v", d.Name, err)
	}
	wantKey := ""
	if d.Ordered() {
		wantKey = d.Ordering.Key
	}
	if got, ok := index["orderingKey"]; !ok || got != wantKey {
		t.Errorf("%s: index orderingKey %v (present %v), want %q", d.Name, got, ok, wantKey)
	}
	if !d.Ordered() {
		return
	}
	for _, m := range ofType(res, "AWS::Lambda::EventSourceMapping") {
		mp := m.Properties
		if _, ok := mp["MaximumBatchingWindowInSeconds"]; ok || num(mp["BatchSize"]) > stack.FIFOBatchSize || num(mp["BatchSize"]) < 1 {
			t.Errorf("%s: mapping batch %v window %v, want at most %d and no window (FIFO)", d.Name, mp["BatchSize"], mp["MaximumBatchingWindowInSeconds"], stack.FIFOBatchSize)
		}
	}
	// SNS sends to the queue only from the lane's topic: the deny's
	// SourceArn is the parameter the subscription's TopicArn is.
	_, sub := only(t, res, "AWS::SNS::Subscription")
	topicParam := refID(sub.Properties["TopicArn"])
	found := false
	for _, p := range ofType(res, "AWS::SQS::QueuePolicy") {
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			if st["Sid"] != "OnlySNSAndTheOperatorSend" {
				continue
			}
			found = true
			cond := st["Condition"].(map[string]any)["ArnNotEquals"].(map[string]any)
			if refID(cond["aws:SourceArn"]) != topicParam {
				t.Errorf("%s: the queue admits SNS from %v, want the FIFO topic (%s)", d.Name, cond["aws:SourceArn"], topicParam)
			}
			// Even when it pauses, an ordered lane's function holds
			// messages in place and sends nothing: the operator alone.
			if senders := asSlice(cond["aws:PrincipalArn"]); len(senders) != 1 {
				t.Errorf("%s: the queue admits senders %v, want the operator role alone", d.Name, senders)
			}
		}
	}
	if !found {
		t.Errorf("%s: no OnlySNSAndTheOperatorSend statement on the queue", d.Name)
	}
}

// checkTopicGuard: only ingest's role may publish to the topic, and only
// over TLS.
func checkTopicGuard(t *testing.T, parent map[string]resource, topicID string, h *stack.Hookfan) {
	t.Helper()
	roleID := *h.Stack.GetLogicalId(h.Ingest.Role.Node().DefaultChild().(awscdk.CfnElement))
	guarded, tls := false, false
	for _, p := range ofType(parent, "AWS::SNS::TopicPolicy") {
		if !slices.ContainsFunc(asSlice(p.Properties["Topics"]), func(v any) bool { return refID(v) == topicID }) {
			continue
		}
		for _, st := range statements(p.Properties["PolicyDocument"]) {
			cond, _ := st["Condition"].(map[string]any)
			if st["Sid"] == "OnlyIngestPublishes" && st["Effect"] == "Deny" {
				arn := cond["ArnNotEquals"].(map[string]any)["aws:PrincipalArn"]
				guarded = refID(arn) == roleID && slices.Equal(anyStrings(st["Action"]), []string{"sns:Publish"})
			}
			if b, _ := cond["Bool"].(map[string]any); st["Effect"] == "Deny" && b["aws:SecureTransport"] == "false" {
				tls = true
			}
		}
	}
	if !guarded || !tls {
		t.Errorf("topic %s: publish denied to all but ingest %v, TLS only %v; want both", topicID, guarded, tls)
	}
}

// nestedParameter is the value the parent passes lane i's nested stack
// for parameter name.
func nestedParameter(t *testing.T, parent map[string]resource, h *stack.Hookfan, i int, name string) any {
	t.Helper()
	id := *h.Stack.GetLogicalId(h.LaneStacks[i].NestedStackResource().(awscdk.CfnElement))
	params, _ := parent[id].Properties["Parameters"].(map[string]any)
	v, ok := params[name]
	if !ok {
		t.Fatalf("lane %d: nested stack %s has no parameter %s (has %v)", i, id, name, params)
	}
	return v
}

// laneFilter is the filter policy and scope a lane's subscription must
// have: an ordered lane's takes its key spec's copies by attribute.
func laneFilter(cfg *config.Config, d config.Destination) (policy, scope string) {
	if d.Ordered() {
		return cfg.OrderedSubscriptionFilter(d), "MessageAttributes"
	}
	return cfg.SubscriptionFilter(d)
}

func boolInt(v bool) int {
	if v {
		return 1
	}
	return 0
}

// TestNoFIFOTopicWithoutOrderedLanes: a configuration without an ordered
// destination has no FIFO topic, ingest no FIFO variable or grant, and no
// queue is FIFO.
func TestNoFIFOTopicWithoutOrderedLanes(t *testing.T) {
	cfg := assetConfig(t, "")
	if cfg.AnyOrdered() {
		t.Fatal("the asset config has an ordered destination")
	}
	h, _ := synth(t, cfg)
	if h.OrderedTopic != nil {
		t.Error("a FIFO topic without ordered destinations")
	}
	_, parent := templateOf(t, h.Stack)
	for id, tp := range ofType(parent, "AWS::SNS::Topic") {
		if tp.Properties["FifoTopic"] != nil {
			t.Errorf("topic %s is FIFO", id)
		}
	}
	fnID := *h.Stack.GetLogicalId(h.Ingest.Function.Node().DefaultChild().(awscdk.CfnElement))
	if v, ok := parent[fnID].Properties["Environment"].(map[string]any)["Variables"].(map[string]any)["HOOKFAN_ORDERED_TOPIC_ARN"]; ok {
		t.Errorf("ingest has HOOKFAN_ORDERED_TOPIC_ARN %v without ordered destinations", v)
	}
	for i, d := range cfg.Destinations {
		_, res := templateOf(t, h.LaneStacks[i])
		checkOrderedLane(t, d, res)
	}
}

// TestOrderedLaneReusesTheAsset: adding an ordered destination (and with
// it the FIFO topic) leaves the standard lanes' templates as they were,
// and the ordered lane runs the one deliver asset.
func TestOrderedLaneReusesTheAsset(t *testing.T) {
	before := assetConfig(t, "")
	after := assetConfig(t, "", `{"name": "dest-3", "url": "https://d3.example.com/hooks", "ordering": {"key": "body:id"}}`)
	hb, _ := synth(t, before)
	ha, _ := synth(t, after)
	tb, cb := laneTemplates(t, hb)
	ta, ca := laneTemplates(t, ha)
	for _, name := range []string{"dest-0", "dest-1", "dest-2"} {
		if diff := cmp.Diff(tb[name], ta[name]); diff != "" {
			t.Errorf("%s: nested-stack template changed by an ordered lane's arrival (-before +after):\n%s", name, diff)
		}
	}
	if ca["dest-3"] == "" || ca["dest-3"] != cb["dest-0"] {
		t.Errorf("the ordered lane runs the deliver asset %s, want the standard lanes' %s", ca["dest-3"], cb["dest-0"])
	}
	var doc map[string]any
	if err := json.Unmarshal([]byte(ta["dest-3"]), &doc); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(ta["dest-3"], `"FifoQueue":true`) {
		t.Error("dest-3's template has no FIFO queue")
	}
}

// TestStackRefusesWhatFIFOCannotTake: an ordered lane built in code with
// a batching window or a batch over 10 is refused with the field and the
// fix (configuration validation refuses both first), as is an ordered
// lane without the FIFO topic.
func TestStackRefusesWhatFIFOCannotTake(t *testing.T) {
	cfg := assetConfig(t, "", `{"name": "dest-3", "url": "https://d3.example.com/hooks", "ordering": {"key": "body:id"}}`)
	d := cfg.Destinations[3]
	d.BatchWindowSeconds = 3
	d.BatchSize = 20
	err := stack.CheckOrderedLane(d)
	for _, want := range []string{"dest-3", "batchWindowSeconds", "remove it", "batchSize 20", "at most 10"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("CheckOrderedLane: %v, want it to name %q", err, want)
		}
	}
	if err := stack.CheckOrderedLane(cfg.Destinations[0]); err != nil {
		t.Errorf("a standard lane: %v", err)
	}
}
