package delivery

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/message"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/metrics"
)

// fakeSQS records ChangeMessageVisibility calls by receipt handle.
type fakeSQS struct {
	mu    sync.Mutex
	calls map[string][]int32
	err   error
}

func (f *fakeSQS) ChangeMessageVisibility(_ context.Context, in *sqs.ChangeMessageVisibilityInput, _ ...func(*sqs.Options)) (*sqs.ChangeMessageVisibilityOutput, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.calls == nil {
		f.calls = map[string][]int32{}
	}
	if *in.QueueUrl != testQueueURL {
		return nil, errors.New("wrong queue URL " + *in.QueueUrl)
	}
	f.calls[*in.ReceiptHandle] = append(f.calls[*in.ReceiptHandle], in.VisibilityTimeout)
	return &sqs.ChangeMessageVisibilityOutput{}, f.err
}

func (f *fakeSQS) visibility() map[string][]int32 {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := map[string][]int32{}
	for k, v := range f.calls {
		out[k] = append([]int32(nil), v...)
	}
	return out
}

// fakeSecrets serves secret values.
type fakeSecrets struct {
	mu     sync.Mutex
	values []string
	err    error
}

func (f *fakeSecrets) Get(_ context.Context, name string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if name != testSecretID {
		return nil, errors.New("unknown secret " + name)
	}
	return f.values, f.err
}

func (f *fakeSecrets) set(values ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.values = values
}

// captureSink keeps published metric points.
type captureSink struct {
	mu     sync.Mutex
	points []metrics.Point
}

func (c *captureSink) Publish(_ context.Context, p []metrics.Point) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.points = append(c.points, p...)
	return nil
}

// sum totals a metric over the published points.
func (c *captureSink) sum(name string) float64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	total := 0.0
	for _, p := range c.points {
		if p.Name == name {
			total += p.Value
		}
	}
	return total
}

// clock is a settable clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = t
}

func (c *clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

// syncBuffer is a log destination safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// lines decodes the JSON log lines.
func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	dec := json.NewDecoder(bytes.NewReader(s.b.Bytes()))
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatalf("log line is not JSON: %v", err)
		}
		out = append(out, m)
	}
	return out
}

const (
	testQueueURL = "https://sqs.us-east-1.amazonaws.com/123456789012/hookfan-orders"
	testSecretID = "hookfan/destinations/orders"
)

// received is one request the subscriber got.
type received struct {
	header http.Header
	body   []byte
	err    error // signature verification
	uri    string
}

// reply is how the subscriber answers.
type reply struct {
	status int
	header map[string]string
	delay  time.Duration
	body   string
}

// subscriber is a loopback destination that verifies every delivery with
// the Standard Webhooks library and answers per event id.
type subscriber struct {
	*httptest.Server
	secret string
	mu     sync.Mutex
	got    []received
	answer func(id string) reply
}

func newSubscriber(t testing.TB, secret string, answer func(id string) reply) *subscriber {
	s := &subscriber{secret: secret, answer: answer}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		verr := wh.Verify(body, r.Header)
		s.mu.Lock()
		s.got = append(s.got, received{header: r.Header.Clone(), body: body, err: verr, uri: r.URL.RequestURI()})
		s.mu.Unlock()
		rep := reply{status: http.StatusOK}
		if s.answer != nil {
			rep = s.answer(r.Header.Get(https.HeaderID))
		}
		if rep.delay > 0 {
			select {
			case <-time.After(rep.delay):
			case <-r.Context().Done():
				return
			}
		}
		for k, v := range rep.header {
			w.Header().Set(k, v)
		}
		w.WriteHeader(rep.status)
		if rep.body == "" {
			rep.body = `{"ok":true}`
		}
		_, _ = io.WriteString(w, rep.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *subscriber) requests() []received {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]received(nil), s.got...)
}

// posts counts the requests carrying a webhook-id.
func (s *subscriber) posts(id string) int {
	n := 0
	for _, r := range s.requests() {
		if r.header.Get(https.HeaderID) == id {
			n++
		}
	}
	return n
}

func newSecret(t testing.TB) string {
	t.Helper()
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}

type harness struct {
	h       *Handler
	store   *dedupe.Memory
	sqs     *fakeSQS
	secrets *fakeSecrets
	sink    *captureSink
	logs    *syncBuffer
	clock   *clock
}

// laneOptions are a test lane's: the handler's options, and what its
// sender is built from (the https sender's options, or the AWS target's
// client).
type laneOptions struct {
	Options
	SecretID      string
	Secrets       https.SecretSource
	HeaderSecrets https.HeaderSecrets
	Client        https.Doer
	ClientAuth    *https.ClientAuth
	Credentials   aws.CredentialsProvider
	Tracing       bool
	// Targets is the API an AWS target's sender calls.
	Targets any
}

// newLane builds the lane's sender, as Assemble does, then its Handler.
func newLane(o laneOptions) (*Handler, error) {
	var serr error
	if o.Destination.AWSTarget() {
		o.Sender, serr = newSender(o.Destination, senderParts{target: o.Targets, tracing: o.Tracing})
	} else {
		var s *https.Sender
		s, serr = https.New(https.Options{Destination: o.Destination, SecretID: o.SecretID, Secrets: o.Secrets, HeaderSecrets: o.HeaderSecrets,
			Client: o.Client, ClientAuth: o.ClientAuth, Credentials: o.Credentials, Tracing: o.Tracing, Now: o.Now})
		if serr == nil {
			o.Sender = s
		}
	}
	h, err := NewHandler(o.Options)
	if err := errors.Join(serr, err); err != nil {
		return nil, err
	}
	return h, nil
}

// newHarness builds a Handler on fakes delivering to url. A fixed jitter
// draw of 0.5 makes every delay exactly the scheduled one.
func newHarness(t testing.TB, url, secret string, opts ...func(*laneOptions)) *harness {
	t.Helper()
	dest := config.Destination{Name: "orders", URL: url, TimeoutSeconds: 2, AllowPrivateNetworks: true}
	hs := &harness{
		store: dedupe.NewMemory(), sqs: &fakeSQS{}, secrets: &fakeSecrets{values: []string{secret}},
		sink: &captureSink{}, logs: &syncBuffer{}, clock: &clock{t: time.Now().Truncate(time.Second)},
	}
	o := laneOptions{Options: Options{
		Destination: dest, QueueURL: testQueueURL,
		Store: hs.store, SQS: hs.sqs,
		Metrics: metrics.NewRecorder(hs.sink), Logger: slogJSON(hs.logs),
		Now: hs.clock.Now, Random: func() float64 { return 0.5 },
	}, SecretID: testSecretID, Secrets: hs.secrets, Client: https.NewClient(dest)}
	for _, f := range opts {
		f(&o)
	}
	h, err := newLane(o)
	if err != nil {
		t.Fatal(err)
	}
	hs.h = h
	return hs
}

// sqsRecord builds the SQS record ingest would produce for event id.
func sqsRecord(id string, attempt int) events.SQSMessage {
	s := func(v string) events.SQSMessageAttribute {
		return events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	}
	return events.SQSMessage{
		MessageId:     "msg-" + id + "-" + strconv.Itoa(attempt),
		ReceiptHandle: "rh-" + id,
		Body:          `{"id":"` + id + `","type":"invoice.paid","amount":4200}`,
		Attributes: map[string]string{
			"ApproximateReceiveCount": strconv.Itoa(attempt),
			"SentTimestamp":           strconv.FormatInt(time.Now().UnixMilli(), 10),
		},
		MessageAttributes: map[string]events.SQSMessageAttribute{
			message.AttrID: s(id), message.AttrSource: s("stripe"), message.AttrType: s("invoice.paid"),
			message.AttrReceivedAt:  s(time.Now().UTC().Format("2006-01-02T15:04:05.000Z07:00")),
			message.AttrContentType: s("application/json"),
		},
	}
}

func batch(msgs ...events.SQSMessage) events.SQSEvent { return events.SQSEvent{Records: msgs} }

// failures lists the item identifiers of a batch response.
func failures(resp events.SQSEventResponse) []string {
	out := []string{}
	for _, f := range resp.BatchItemFailures {
		out = append(out, f.ItemIdentifier)
	}
	return out
}

func slogJSON(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}
