package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sns"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
)

const fifoARN = "arn:aws:sns:eu-west-1:123456789012:hookfan-ordered.fifo"

// fifoPublisher records every publish and fails those to a topic listed
// in fail, once each.
type fifoPublisher struct {
	mu    sync.Mutex
	fail  map[string]int
	calls []sns.PublishInput
}

func (p *fifoPublisher) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	topic := aws.ToString(in.TopicArn)
	if p.fail[topic] > 0 {
		p.fail[topic]--
		return nil, errors.New("throttled")
	}
	c := *in
	p.calls = append(p.calls, c)
	return &sns.PublishOutput{MessageId: aws.String(fmt.Sprint(len(p.calls)))}, nil
}

func (p *fifoPublisher) to(topic string) []sns.PublishInput {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []sns.PublishInput
	for _, c := range p.calls {
		if aws.ToString(c.TopicArn) == topic {
			out = append(out, c)
		}
	}
	return out
}

func orderedHandler(t *testing.T, pub ingest.Publisher, routes []config.OrderingRoute) *ingest.Handler {
	t.Helper()
	sources := []config.Source{sourceConfig(t, "stripe"), sourceConfig(t, "hmac-plain")}
	sec := &fakeSecrets{values: map[string][]string{}, fresh: map[string][]string{}, err: map[string]error{}}
	for _, s := range sources {
		sec.values[s.Verify.SecretName] = []string{secretOf(s.Name)}
	}
	h, err := ingest.New(ingest.Options{Sources: sources, TopicARN: topicARN, Publisher: pub, Secrets: sec,
		Metrics: metrics.NewRecorder(&memSink{}), Replay: replayguard.NewMemory(), Logger: slog.New(slog.DiscardHandler),
		OrderedTopicARN: fifoARN, OrderingRoutes: routes})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func stripeEvent(t *testing.T, id, object string) eventsRequest {
	t.Helper()
	s := events.Sample{Kind: provider.Stripe, Name: "custom", Header: http.Header{},
		Body: []byte(`{"id": "` + id + `", "type": "invoice.updated", "data": {"object": {"id": ` + object + `}}}`)}
	return signSample(t, "stripe", s, time.Now())
}

// TestOrderedPublish: an event goes to the fan-out topic and, once per
// ordering route that takes its source, to the FIFO topic, grouped by its
// key (one group per source without one), deduplicated by its id.
func TestOrderedPublish(t *testing.T) {
	pub := &fifoPublisher{}
	h := orderedHandler(t, pub, []config.OrderingRoute{
		{Key: "body:data.object.id", Sources: []string{"stripe"}},
		{Key: "header:X-Tenant"},
	})
	for i, object := range []string{`"in_1"`, `42`, `{"nested": true}`} {
		resp, _ := h.Handle(context.Background(), stripeEvent(t, fmt.Sprint("evt_", i), object))
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("status %d %s", resp.StatusCode, resp.Body)
		}
	}
	if n := len(pub.to(topicARN)); n != 3 {
		t.Errorf("%d publishes to the fan-out topic, want 3", n)
	}
	got := pub.to(fifoARN)
	if len(got) != 6 {
		t.Fatalf("%d publishes to the FIFO topic, want 2 per event", len(got))
	}
	for i, c := range got {
		key := aws.ToString(c.MessageAttributes[config.AttrOrderingKey].StringValue)
		if g := aws.ToString(c.MessageGroupId); key == "header:X-Tenant" && g != "stripe" {
			t.Errorf("copy %d (key %s) group %q, want the keyless stripe (no X-Tenant header)", i, key, g)
		}
		id := aws.ToString(c.MessageAttributes["id"].StringValue)
		if aws.ToString(c.MessageDeduplicationId) != config.DedupID(id, key) {
			t.Errorf("copy %d dedup id %q, want DedupID(%s, %s)", i, aws.ToString(c.MessageDeduplicationId), id, key)
		}
		if aws.ToString(c.Message) == "" || c.MessageAttributes["received_at"].StringValue == nil {
			t.Errorf("copy %d lacks the body or attributes of the standard message", i)
		}
	}
	groups := map[string]bool{}
	for _, c := range got {
		if aws.ToString(c.MessageAttributes[config.AttrOrderingKey].StringValue) == "body:data.object.id" {
			groups[aws.ToString(c.MessageGroupId)] = true
		}
	}
	if !groups["stripe:in_1"] || !groups["stripe:42"] || !groups["stripe"] {
		t.Errorf("body-key groups %v, want stripe:in_1, stripe:42 and the keyless stripe", groups)
	}
}

// TestOrderedPublishPartialFailure: 202 only once every publish
// succeeded; the provider's retry publishes the same deduplication id.
func TestOrderedPublishPartialFailure(t *testing.T) {
	for _, failing := range []string{fifoARN, topicARN} {
		pub := &fifoPublisher{fail: map[string]int{failing: 1}}
		h := orderedHandler(t, pub, []config.OrderingRoute{{Key: "body:data.object.id"}})
		req := stripeEvent(t, "evt_partial", `"in_9"`)
		resp, _ := h.Handle(context.Background(), req)
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("%s failing: status %d, want 503", failing, resp.StatusCode)
		}
		resp, _ = h.Handle(context.Background(), req)
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("%s failing: retry status %d, want 202", failing, resp.StatusCode)
		}
		fifo := pub.to(fifoARN)
		if len(fifo) == 0 || aws.ToString(fifo[len(fifo)-1].MessageGroupId) != "stripe:in_9" {
			t.Fatalf("%s failing: FIFO publishes %v", failing, fifo)
		}
		if len(fifo) == 2 && aws.ToString(fifo[0].MessageDeduplicationId) != aws.ToString(fifo[1].MessageDeduplicationId) {
			t.Errorf("the retry's copy has another deduplication id: SNS would deliver it twice")
		}
	}
}

// TestOrderedPublishSourceNotRouted: a source no ordered destination
// takes is published to the fan-out topic alone.
func TestOrderedPublishSourceNotRouted(t *testing.T) {
	pub := &fifoPublisher{}
	h := orderedHandler(t, pub, []config.OrderingRoute{{Key: "body:data.object.id", Sources: []string{"hmac-plain"}}})
	if resp, _ := h.Handle(context.Background(), stripeEvent(t, "evt_x", `"a"`)); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if n := len(pub.to(fifoARN)); n != 0 {
		t.Errorf("%d FIFO publishes for a source no ordered destination takes", n)
	}
}
