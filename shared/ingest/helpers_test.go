package ingest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	lambdaevents "github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/sns"
	snstypes "github.com/aws/aws-sdk-go-v2/service/sns/types"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/provider"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

// eventsRequest is the API Gateway proxy event.
type eventsRequest = lambdaevents.APIGatewayProxyRequest

const topicARN = "arn:aws:sns:eu-west-1:123456789012:hookfan-events"

// fakePublisher records what would have been published.
type fakePublisher struct {
	mu    sync.Mutex
	err   error
	calls []*sns.PublishInput
}

func (p *fakePublisher) Publish(_ context.Context, in *sns.PublishInput, _ ...func(*sns.Options)) (*sns.PublishOutput, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls = append(p.calls, clonePublishInput(in))
	if p.err != nil {
		return nil, p.err
	}
	id := fmt.Sprintf("msg-%d", len(p.calls))
	return &sns.PublishOutput{MessageId: &id}, nil
}

// clonePublishInput copies in deeply: the handler reuses the input's memory
// once Publish returns (see ingest.Publisher), as a real client may assume.
func clonePublishInput(in *sns.PublishInput) *sns.PublishInput {
	str := func(p *string) *string {
		if p == nil {
			return nil
		}
		c := strings.Clone(*p)
		return &c
	}
	out := &sns.PublishInput{TopicArn: str(in.TopicArn), Message: str(in.Message)}
	if in.MessageAttributes != nil {
		out.MessageAttributes = make(map[string]snstypes.MessageAttributeValue, len(in.MessageAttributes))
		for k, v := range in.MessageAttributes {
			out.MessageAttributes[strings.Clone(k)] = snstypes.MessageAttributeValue{DataType: str(v.DataType), StringValue: str(v.StringValue)}
		}
	}
	return out
}

func (p *fakePublisher) published() []*sns.PublishInput {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []*sns.PublishInput
	if p.err == nil {
		out = append(out, p.calls...)
	}
	return out
}

// fakeSecrets serves fixed values per secret name, with an optional set of
// newer values that Refresh reveals.
type fakeSecrets struct {
	mu        sync.Mutex
	values    map[string][]string
	fresh     map[string][]string
	err       map[string]error
	refreshes int
}

func (s *fakeSecrets) Get(_ context.Context, name string) ([]string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.err[name]; err != nil {
		return nil, err
	}
	v, ok := s.values[name]
	if !ok {
		return nil, fmt.Errorf("secret %q: %w", name, secrets.ErrNotSet)
	}
	return v, nil
}

func (s *fakeSecrets) Refresh(_ context.Context, name string) ([]string, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refreshes++
	if err := s.err[name]; err != nil {
		return nil, false, err
	}
	if f, ok := s.fresh[name]; ok {
		delete(s.fresh, name)
		s.values[name] = f
		return f, true, nil
	}
	return s.values[name], false, nil
}

// memSink keeps flushed metric points.
type memSink struct {
	mu     sync.Mutex
	points []metrics.Point
}

func (m *memSink) Publish(_ context.Context, p []metrics.Point) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.points = append(m.points, p...)
	return nil
}

// metric is a point reduced to what tests compare.
type metric struct {
	Name, Source, Reason string
}

func (m *memSink) got() []metric {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []metric
	for _, p := range m.points {
		mm := metric{Name: p.Name}
		for _, d := range p.Dimensions {
			switch d.Name {
			case metrics.DimSource:
				mm.Source = d.Value
			case metrics.DimReason:
				mm.Reason = d.Value
			}
		}
		out = append(out, mm)
	}
	return out
}

// syncBuffer is a goroutine-safe log sink.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// lines decodes the JSON log lines.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range bytes.Split([]byte(s.String()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(l, &m); err != nil {
			t.Fatalf("log line is not JSON: %s", l)
		}
		out = append(out, m)
	}
	return out
}

// rig is a Handler with fakes around it.
type rig struct {
	h   *ingest.Handler
	pub *fakePublisher
	sec *fakeSecrets
	met *memSink
	rep *replayguard.Memory
	log *syncBuffer
	now time.Time
	// sources are the handler's, where a rig changed them (largeRigOf).
	sources []config.Source
}

// testSources are one source per kind, named after it, with secrets named
// "hookfan/sources/<name>".
func testSources() []config.Source {
	src := func(name string, v config.Verify, ev config.EventFields) config.Source {
		v.SecretName = "hookfan/sources/" + name
		return config.Source{Name: name, Verify: v, Event: ev}
	}
	return []config.Source{
		src("stripe", config.Verify{Kind: provider.Stripe}, config.EventFields{}),
		src("github", config.Verify{Kind: provider.GitHub}, config.EventFields{}),
		src("shopify", config.Verify{Kind: provider.Shopify}, config.EventFields{}),
		src("slack", config.Verify{Kind: provider.Slack}, config.EventFields{}),
		src("standard-webhooks", config.Verify{Kind: provider.StandardWebhooks}, config.EventFields{}),
		src("hmac", config.Verify{Kind: provider.HMAC, Header: "X-Acme-Signature", Algorithm: "sha512", Encoding: "base64", Prefix: "sha512="},
			config.EventFields{IDField: "id", TypeField: "event"}),
		src("token", config.Verify{Kind: provider.Token, Header: "X-Hook-Token"},
			config.EventFields{IDHeader: "X-Request-Id", TypeField: "event_type"}),
		src("hmac-plain", config.Verify{Kind: provider.HMAC, Header: "X-Signature"}, config.EventFields{}),
		src("small", config.Verify{Kind: provider.GitHub}, config.EventFields{}),
		src("nested", config.Verify{Kind: provider.HMAC, Header: "X-Signature"}, config.EventFields{IDField: "data.id", TypeField: "data.object.type"}),
	}
}

// secretOf is the test secret of a source; never a real one.
func secretOf(name string) string {
	if name == "standard-webhooks" {
		return "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	}
	return "test-secret-" + name
}

func newRig(t testing.TB, sources []config.Source) *rig {
	t.Helper()
	r := &rig{
		pub: &fakePublisher{},
		sec: &fakeSecrets{values: map[string][]string{}, fresh: map[string][]string{}, err: map[string]error{}},
		met: &memSink{},
		rep: replayguard.NewMemory(),
		log: &syncBuffer{},
		now: time.Now().Truncate(time.Millisecond),
	}
	for _, s := range sources {
		r.sec.values[s.Verify.SecretName] = []string{secretOf(s.Name)}
	}
	h, err := ingest.New(ingest.Options{
		Sources:   sources,
		TopicARN:  topicARN,
		Publisher: r.pub,
		Secrets:   r.sec,
		Metrics:   metrics.NewRecorder(r.met),
		Replay:    r.rep,
		Logger:    slog.New(slog.NewJSONHandler(r.log, nil)),
		Now:       func() time.Time { return r.now },
	})
	if err != nil {
		t.Fatal(err)
	}
	r.h = h
	return r
}

func sourceConfig(t testing.TB, name string) config.Source {
	t.Helper()
	for _, s := range testSources() {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no test source %q", name)
	return config.Source{}
}

// signed returns the proxy request of sample (kind/name) sent to source,
// signed with the source's test secret at time at.
func signed(t testing.TB, source, kind, name string, at time.Time) lambdaevents.APIGatewayProxyRequest {
	t.Helper()
	s := events.MustLoad(kind, name)
	return signSample(t, source, s, at)
}

func signSample(t testing.TB, source string, s events.Sample, at time.Time) lambdaevents.APIGatewayProxyRequest {
	t.Helper()
	cfg := sourceConfig(t, source)
	h, err := events.Sign(cfg.Verify, s, at, secretOf(source))
	if err != nil {
		t.Fatal(err)
	}
	return events.ProxyRequest(source, h, s.Body)
}

func (r *rig) do(t testing.TB, req lambdaevents.APIGatewayProxyRequest) lambdaevents.APIGatewayProxyResponse {
	t.Helper()
	resp, err := r.h.Handle(context.Background(), req)
	if err != nil {
		t.Fatalf("Handle returned an error: %v", err)
	}
	return resp
}

// errorCode decodes an error answer's code, failing on any other shape.
func errorCode(t testing.TB, body string) string {
	t.Helper()
	var e struct {
		Error struct {
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(body)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil || e.Error.Code == "" || e.Error.Message == "" {
		t.Fatalf("error body %s is not {\"error\":{\"code\",\"message\"}}: %v", body, err)
	}
	return e.Error.Code
}

func acceptedID(t testing.TB, resp lambdaevents.APIGatewayProxyResponse) string {
	t.Helper()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status %d (%s), want 202", resp.StatusCode, resp.Body)
	}
	var a struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(resp.Body), &a); err != nil || a.ID == "" {
		t.Fatalf("202 body %s: %v", resp.Body, err)
	}
	return a.ID
}

func attr(in *sns.PublishInput, name string) string {
	v, ok := in.MessageAttributes[name]
	if !ok || v.StringValue == nil {
		return ""
	}
	if v.DataType == nil || *v.DataType != "String" {
		return "<not a String attribute>"
	}
	return *v.StringValue
}

var errBoom = errors.New("boom: connection reset")

func eventsSample(kind, name string) events.Sample { return events.MustLoad(kind, name) }

func eventsSign(kind string, s events.Sample, secret string) (http.Header, error) {
	return events.Sign(config.Verify{Kind: kind}, s, time.Now(), secret)
}
