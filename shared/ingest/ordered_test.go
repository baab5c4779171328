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
	"github.com/hookfan/hookfan/shared/payload"
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

// snsSize is a message's size as SNS counts it: the body, and each
// attribute's name, type and value.
func snsSize(in *sns.PublishInput) int {
	n := len(aws.ToString(in.Message))
	for k, v := range in.MessageAttributes {
		n += len(k) + len(aws.ToString(v.DataType)) + len(aws.ToString(v.StringValue))
	}
	return n
}

// TestOrderedCopyFitsOneMessage: the size decision counts the ordering_key
// attribute an event's ordered copy adds to its message. A body whose
// standard message fits one SNS message but whose copy would not is
// stored (202, the reference published to both topics) or, without a
// payload store, refused 413 body_too_large: never a 503 publish_failed
// on every retry of an input that can never be published. A source no
// ordering route takes keeps the whole message for its body.
func TestOrderedCopyFitsOneMessage(t *testing.T) {
	const spec = "body:data.object.id"
	binary := func(n int) []byte { // invalid UTF-8: travels as base64
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(0x80 + i%64)
		}
		return b
	}
	text := func(n int) []byte { return bigBody(n, 'a') }
	build := func(t *testing.T, src config.Source, routes []config.OrderingRoute, store ingest.Payloads) (*ingest.Handler, *fifoPublisher) {
		t.Helper()
		pub := &fifoPublisher{}
		sec := &fakeSecrets{values: map[string][]string{src.Verify.SecretName: {secretOf(src.Name)}}, fresh: map[string][]string{}, err: map[string]error{}}
		o := ingest.Options{Sources: []config.Source{src}, TopicARN: topicARN, Publisher: pub, Secrets: sec,
			Metrics: metrics.NewRecorder(&memSink{}), Replay: replayguard.NewMemory(), Logger: slog.New(slog.DiscardHandler), Payloads: store}
		if routes != nil {
			o.OrderedTopicARN, o.OrderingRoutes = fifoARN, routes
		}
		h, err := ingest.New(o)
		if err != nil {
			t.Fatal(err)
		}
		return h, pub
	}
	send := func(t *testing.T, h *ingest.Handler, body []byte) (int, string) {
		t.Helper()
		s := events.Sample{Kind: "hmac", Name: "big", Body: body, Header: http.Header{"Content-Type": {"application/octet-stream"}}}
		resp, _ := h.Handle(context.Background(), signSample(t, "hmac-plain", s, time.Now()))
		if resp.StatusCode != http.StatusAccepted {
			return resp.StatusCode, errorCode(t, resp.Body)
		}
		return resp.StatusCode, ""
	}
	// full is a body made by fill whose standard message leaves fewer
	// bytes of one SNS message free than the copy's ordering_key takes.
	full := func(t *testing.T, src config.Source, fill func(int) []byte, b64 bool) []byte {
		t.Helper()
		h, pub := build(t, src, nil, nil)
		probe := fill(3)
		if status, code := send(t, h, probe); status != http.StatusAccepted {
			t.Fatalf("probe: %d %s", status, code)
		}
		std := pub.to(topicARN)[0]
		free := config.MaxSNSMessageBytes - (snsSize(&std) - len(aws.ToString(std.Message)))
		if b64 {
			return fill(free / 4 * 3) // its base64 leaves 0 to 3 bytes free
		}
		return fill(free - 1)
	}
	raised := sourceConfig(t, "hmac-plain")
	raised.MaxBodyBytes = config.MaxBodyBytesREST
	for _, tt := range []struct {
		name   string
		src    config.Source
		body   func(t *testing.T) []byte
		routes []config.OrderingRoute
	}{
		{"binary body under the default limit", sourceConfig(t, "hmac-plain"),
			func(t *testing.T) []byte { return full(t, sourceConfig(t, "hmac-plain"), binary, true) },
			[]config.OrderingRoute{{Key: spec}}},
		{"text body under a raised limit", raised,
			func(t *testing.T) []byte { return full(t, raised, text, false) },
			[]config.OrderingRoute{{Key: "header:X-Tenant"}, {Key: spec, Sources: []string{"hmac-plain"}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.body(t)
			h, pub := build(t, tt.src, nil, nil)
			if status, code := send(t, h, body); status != http.StatusAccepted || attr(&pub.to(topicARN)[0], "payload") != "" {
				t.Fatalf("without ordered routes: %d %s, want 202 with the body inline (the standard message fits)", status, code)
			}

			h, pub = build(t, tt.src, tt.routes, nil)
			for attempt := 1; attempt <= 2; attempt++ {
				if status, code := send(t, h, body); status != http.StatusRequestEntityTooLarge || code != ingest.CodeBodyTooLarge {
					t.Errorf("no payload store, attempt %d: %d %s, want 413 body_too_large", attempt, status, code)
				}
			}
			if n := len(pub.calls); n != 0 {
				t.Errorf("no payload store: %d publishes of a refused body", n)
			}

			store := payload.NewMemory("hookfan-payloads")
			h, pub = build(t, tt.src, tt.routes, store)
			if status, code := send(t, h, body); status != http.StatusAccepted {
				t.Fatalf("payload store: %d %s, want 202", status, code)
			}
			std, copies := pub.to(topicARN), pub.to(fifoARN)
			if len(std) != 1 || len(copies) != len(tt.routes) {
				t.Fatalf("payload store: %d publishes to the fan-out topic and %d to the FIFO topic, want 1 and %d", len(std), len(copies), len(tt.routes))
			}
			for _, in := range append(std, copies...) {
				if attr(&in, "payload") != "s3" || attr(&in, "encoding") != "" {
					t.Errorf("payload store: %s got attributes %v, want payload=s3 and no encoding", aws.ToString(in.TopicArn), in.MessageAttributes)
				}
			}
			if got := len(store.Keys()); got != 1 {
				t.Errorf("payload store: %d objects stored, want the body's one", got)
			}
		})
	}
	// A route for another source reserves nothing for this one: the
	// same body stays inline.
	body := full(t, raised, text, false)
	h, pub := build(t, raised, []config.OrderingRoute{{Key: spec, Sources: []string{"stripe"}}}, payload.NewMemory("hookfan-payloads"))
	if status, code := send(t, h, body); status != http.StatusAccepted || attr(&pub.to(topicARN)[0], "payload") != "" || len(pub.to(fifoARN)) != 0 {
		t.Errorf("route for another source: %d %s, want 202 with the body inline and no copy", status, code)
	}
}
