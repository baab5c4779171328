//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
)

// Test secrets for the sources. They protect nothing.
const (
	stripeSecret = "whsec_integration_stripe"
	githubSecret = "integration github secret"
)

// sourcesJSON is the sources block most tests use.
const sourcesJSON = `[
  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}},
  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"}}
]`

// got is one request a receiver got.
type got struct {
	// at is when the request reached the receiver's socket (arrival);
	// handled, when its handler ran, later on a busy machine.
	at, handled time.Time
	header      http.Header
	body        []byte
	verified    bool
	status      int // what the receiver answered
}

// receiver is a subscriber: it verifies each request with the Standard
// Webhooks library and answers what respond says.
type receiver struct {
	srv     *httptest.Server
	secrets []string
	mu      sync.Mutex
	got     []got
	respond func(n int, r *http.Request) int // n counts requests from 1
	delay   time.Duration
	// answer is the body of every answer that is not a 2xx ("" none).
	answer string
}

func newReceiver(t *testing.T, respond func(n int, r *http.Request) int) *receiver {
	t.Helper()
	rc := &receiver{respond: respond, secrets: []string{devstack.NewDestinationSecret()}}
	rc.srv = httptest.NewUnstartedServer(http.HandlerFunc(rc.serve))
	rc.srv.Listener = stampArrivals(rc.srv.Config, rc.srv.Listener)
	rc.srv.Start()
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *receiver) serve(w http.ResponseWriter, r *http.Request) {
	handled := time.Now()
	body, _ := io.ReadAll(r.Body)
	d := got{at: arrival(r), handled: handled, header: r.Header.Clone(), body: body}
	rc.mu.Lock()
	for _, s := range rc.secrets {
		wh, err := standardwebhooks.NewWebhook(s)
		if err == nil && wh.Verify(body, r.Header) == nil {
			d.verified = true
		}
	}
	rc.got = append(rc.got, d)
	n := len(rc.got)
	delay := rc.delay
	rc.mu.Unlock()
	time.Sleep(delay)
	status := http.StatusNoContent
	if rc.respond != nil {
		status = rc.respond(n, r)
	}
	rc.mu.Lock()
	rc.got[n-1].status = status
	rc.mu.Unlock()
	w.WriteHeader(status)
	if rc.answer != "" && (status < 200 || status > 299) {
		_, _ = io.WriteString(w, rc.answer)
	}
}

// accepted counts the requests carrying webhook-id id that the receiver
// answered with a 2xx: the deliveries that count.
func (rc *receiver) accepted(id string) int {
	n := 0
	for _, d := range rc.deliveries() {
		if d.header.Get("webhook-id") == id && d.status >= 200 && d.status < 300 {
			n++
		}
	}
	return n
}

func (rc *receiver) deliveries() []got {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]got(nil), rc.got...)
}

// ids returns the webhook-id of every request, in arrival order.
func (rc *receiver) ids() []string {
	var out []string
	for _, d := range rc.deliveries() {
		out = append(out, d.header.Get("webhook-id"))
	}
	return out
}

// waitFor polls cond until it holds or its patience runs out. timeout is
// what cond takes on an idle machine; on a loaded one the emulator answers
// several times slower, so the wait lasts patience(t, timeout): the
// passing case returns as soon as cond holds and pays nothing for it.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	wait := patience(t, timeout)
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s (%s on an idle machine, times %d: HOOKFAN_TEST_PATIENCE) waiting for %s", wait.Round(time.Second), timeout, patienceFactor(), what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// DefaultPatience is how many times slower than on an idle machine a wait
// may take: two CPU-bound processes beside the suite on two cores slow the
// emulator about threefold.
const DefaultPatience = 5

// patienceFactor is HOOKFAN_TEST_PATIENCE, or DefaultPatience.
func patienceFactor() int {
	if n, err := strconv.Atoi(os.Getenv("HOOKFAN_TEST_PATIENCE")); err == nil && n >= 1 {
		return n
	}
	return DefaultPatience
}

// patience is how long to wait for what takes d on an idle machine: d
// times the patience factor, but never past the test binary's deadline
// (less a minute, to report the failure), and never less than d.
func patience(t *testing.T, d time.Duration) time.Duration {
	wait := d * time.Duration(patienceFactor())
	if deadline, ok := t.Deadline(); ok {
		wait = min(wait, time.Until(deadline)-time.Minute)
	}
	return max(wait, d)
}

// env is one running stack on the shared emulator.
type env struct {
	t       *testing.T
	prefix  string
	cfg     *config.Config
	cfgJSON string
	stack   *devstack.Stack
	gateway *httptest.Server
	cancel  context.CancelFunc
	done    chan struct{}
	logs    *syncBuffer
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type envOption func(*devstack.Options)

// destJSON renders one destination pointing at a receiver.
func destJSON(name string, rc *receiver, extra string) string {
	if extra != "" {
		extra = ", " + extra
	}
	return fmt.Sprintf(`{"name": %q, "url": %q, "allowPrivateNetworks": true%s}`, name, rc.srv.URL+"/"+name, extra)
}

// startEnv provisions a stack for destinations (JSON objects; receivers
// maps each destination name to its receiver, whose secrets become the
// lane's signing secret) and runs it until the test ends.
func startEnv(t *testing.T, destinations []string, receivers map[string]*receiver, opts ...envOption) *env {
	t.Helper()
	return startEnvSources(t, sourcesJSON, destinations, receivers, opts...)
}

// startEnvSources is startEnv with another sources block (a format with
// the prefix as %[1]s, the two sources' names and secrets kept).
func startEnvSources(t *testing.T, sources string, destinations []string, receivers map[string]*receiver, opts ...envOption) *env {
	t.Helper()
	return startEnvAt(t, uniquePrefix(t), sources, destinations, receivers, opts...)
}

// startEnvAt is startEnvSources under a given prefix: a second stack on an
// earlier one's prefix is the local stack run again with another
// configuration (its queues, records and archive kept).
func startEnvAt(t *testing.T, prefix, sources string, destinations []string, receivers map[string]*receiver, opts ...envOption) *env {
	t.Helper()
	cfgJSON := fmt.Sprintf(`{"sources": %s, "destinations": [%s], "metrics": {"sink": "emf"}}`,
		fmt.Sprintf(sources, prefix), strings.Join(destinations, ","))
	cfg, err := config.Parse([]byte(cfgJSON))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	secretValues := map[string][]string{
		prefix + "/sources/stripe": {stripeSecret},
		prefix + "/sources/github": {githubSecret},
	}
	for _, d := range cfg.Destinations {
		if rc, ok := receivers[d.Name]; ok {
			secretValues[devstate.DestinationSecretName(prefix, d)] = rc.secrets
		}
	}
	logs := &syncBuffer{}
	o := devstack.Options{Config: cfg, Secrets: secretValues, Prefix: prefix, Clients: clients, Region: awsCfg.Region,
		Log: slog.New(slog.NewJSONHandler(logs, nil)), EMF: io.Discard, PollWait: time.Second}
	for _, f := range opts {
		f(&o)
	}
	stack, err := devstack.New(context.Background(), o)
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	e := &env{t: t, prefix: prefix, cfg: cfg, cfgJSON: cfgJSON, stack: stack, logs: logs, done: make(chan struct{})}
	e.gateway = httptest.NewServer(stack.Gateway)
	var ctx context.Context
	ctx, e.cancel = context.WithCancel(context.Background())
	go func() { stack.Run(ctx); close(e.done) }()
	t.Cleanup(func() {
		e.stop()
		e.gateway.Close()
		if t.Failed() {
			keepLogs(t, logs.String())
		}
	})
	return e
}

// keepLogs keeps a failed test's stack logs: printed with
// HOOKFAN_TEST_LOGS set, and always written to
// build/integration-logs/<test>.log (CI's output names the file).
func keepLogs(t *testing.T, logs string) {
	if os.Getenv("HOOKFAN_TEST_LOGS") != "" {
		t.Logf("stack logs:\n%s", logs)
	}
	dir := filepath.Join("..", "build", "integration-logs")
	name := filepath.Join(dir, strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())+".log")
	if err := os.MkdirAll(dir, 0o755); err == nil {
		if err := os.WriteFile(name, []byte(logs), 0o644); err == nil {
			abs, _ := filepath.Abs(name)
			t.Logf("stack logs kept in %s", abs)
		}
	}
}

// sendAtOnce sends n Stripe events at once from workers senders, their
// ids "<prefix>_<stack prefix>_<index>", and returns the ids ingest
// answered, in the order of the index.
func (e *env) sendAtOnce(n, workers int, prefix string) []string {
	ids := make([]string, n)
	jobs := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := range jobs {
				ids[i] = e.send("stripe", "stripe", "payment_intent.succeeded", fmt.Sprintf("%s_%s_%02d", prefix, e.prefix, i), nil).id
			}
		})
	}
	for i := range n {
		jobs <- i
	}
	close(jobs)
	wg.Wait()
	return ids
}

// stop ends the pollers and waits for the batches in flight.
func (e *env) stop() {
	e.cancel()
	<-e.done
}

// sent is one event accepted by ingest.
type sent struct {
	id string // the Hookfan event id ingest answered
	at time.Time
}

// send signs a sample as source with providerID as the provider's event id
// and POSTs it through the gateway; it fails the test unless ingest answers
// 202, and returns the Hookfan event id.
func (e *env) send(source, kind, sample, providerID string, edit func(*events.Sample)) sent {
	e.t.Helper()
	src, ok := e.cfg.Source(source)
	if !ok {
		e.t.Fatalf("no source %s", source)
	}
	s, err := events.WithEventID(events.MustLoad(kind, sample), providerID, src.Event)
	if err != nil {
		e.t.Fatal(err)
	}
	if edit != nil {
		edit(&s)
	}
	secret := map[string]string{"stripe": stripeSecret, "github": githubSecret}[source]
	h, err := events.Sign(src.Verify, s, time.Now(), secret)
	if err != nil {
		e.t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, e.gateway.URL+"/webhooks/"+source, bytes.NewReader(s.Body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusAccepted {
		e.t.Fatalf("ingest answered %d %s", resp.StatusCode, body)
	}
	var out struct{ ID string }
	if err := json.Unmarshal(body, &out); err != nil || out.ID == "" {
		e.t.Fatalf("ingest answer %s: %v", body, err)
	}
	return sent{id: out.ID, at: time.Now()}
}

// setType rewrites a JSON body's top-level "type".
func setType(typ string) func(*events.Sample) {
	return func(s *events.Sample) {
		var doc map[string]any
		_ = json.Unmarshal(s.Body, &doc)
		doc["type"] = typ
		s.Body, _ = json.Marshal(doc)
	}
}

// record reads a delivery record from the emulator's table.
func (e *env) record(destination, id string) (dedupe.Record, bool) {
	e.t.Helper()
	r, ok, err := e.stack.Store.Get(context.Background(), dedupe.Key(destination, id))
	if err != nil {
		e.t.Fatalf("read record: %v", err)
	}
	return r, ok
}

// queueIDs receives (and deletes) what a queue holds now, returning the
// "id" attribute of each message or "<malformed>".
func queueIDs(t *testing.T, url string, wait time.Duration) []string {
	t.Helper()
	var ids []string
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		out, err := clients.SQS.ReceiveMessage(context.Background(), &sqs.ReceiveMessageInput{QueueUrl: &url,
			MaxNumberOfMessages: 10, WaitTimeSeconds: 1, MessageAttributeNames: []string{"All"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range out.Messages {
			id := "<malformed>"
			if a, ok := m.MessageAttributes["id"]; ok {
				id = aws.ToString(a.StringValue)
			}
			ids = append(ids, id)
			_, _ = clients.SQS.DeleteMessage(context.Background(), &sqs.DeleteMessageInput{QueueUrl: &url, ReceiptHandle: m.ReceiptHandle})
		}
		if len(out.Messages) == 0 && len(ids) > 0 {
			break
		}
	}
	return ids
}

// settled waits until nothing more can reach a destination of e: every
// lane's queue holds no message, visible, in flight or delayed. Each
// message was delivered, given up or acknowledged, and deleted after the
// receiver had answered and the record was written, so what the receivers
// and the records hold is final: a copy still to come would still be in
// a queue. It replaces a fixed wait for "anything more to arrive".
func (e *env) settled() {
	e.t.Helper()
	waitFor(e.t, 30*time.Second, "every lane's queue empty (nothing left to deliver)", func() bool {
		for _, l := range e.stack.Topology.Lanes {
			if depth(e.t, l.QueueURL) != 0 {
				return false
			}
		}
		return true
	})
}

// switchReads counts, per queue, the reads of a lane's mapping switch
// (devstate.TagSwitch: its queue's tags) that found it off: a poller
// that read it off receives nothing until it reads it on again.
type switchReads struct {
	mu  sync.Mutex
	off map[string]int
}

// watch is an envOption giving the stack an SQS client that counts the
// switch reads.
func (w *switchReads) watch(o *devstack.Options) {
	w.off = map[string]int{}
	count := middleware.InitializeMiddlewareFunc("countSwitchReads", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
		out, md, err := next.HandleInitialize(ctx, in)
		q, isTags := in.Parameters.(*sqs.ListQueueTagsInput)
		if tags, ok := out.Result.(*sqs.ListQueueTagsOutput); ok && isTags && err == nil && tags.Tags[devstate.MappingTag] == devstate.MappingDisabled {
			w.mu.Lock()
			w.off[aws.ToString(q.QueueUrl)]++
			w.mu.Unlock()
		}
		return out, md, err
	})
	o.Clients.SQS = sqs.NewFromConfig(awsCfg, func(so *sqs.Options) {
		so.APIOptions = append(so.APIOptions, func(s *middleware.Stack) error { return s.Initialize.Add(count, middleware.After) })
	})
}

func (w *switchReads) offReads(url string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.off[url]
}

// held waits until the paused lane's queue holds n messages, none in
// flight or delayed, after the lane's switch was read off twice per poller
// since held was called (a poller reads it before each receive and skips
// the receive while it is off; the lane's tick reads it too, so the count
// is a floor, not proof each poller turned): nothing took the messages,
// and the pollers are passing them by.
func (e *env) held(w *switchReads, lane devstack.Lane, n int) {
	e.t.Helper()
	pollers := min(lane.Destination.Concurrency(), 2) // devstack's default per lane
	since := w.offReads(lane.QueueURL)
	waitFor(e.t, 10*time.Second, fmt.Sprintf("%s's switch read off %d more times with %d messages waiting", lane.Destination.Name, 2*pollers, n), func() bool {
		if w.offReads(lane.QueueURL) < since+2*pollers {
			return false
		}
		visible, inFlight, delayed := queueCounts(e.t, lane.QueueURL)
		return visible == n && inFlight == 0 && delayed == 0
	})
}

// queueCounts reads a queue's visible, in-flight and delayed messages.
func queueCounts(t *testing.T, url string) (visible, inFlight, delayed int) {
	t.Helper()
	return queueCountsOn(t, clients.SQS, url)
}

// queueCountsOn is queueCounts on another emulator's client.
func queueCountsOn(t *testing.T, api *sqs.Client, url string) (visible, inFlight, delayed int) {
	t.Helper()
	out, err := api.GetQueueAttributes(context.Background(), &sqs.GetQueueAttributesInput{QueueUrl: &url,
		AttributeNames: []sqstypes.QueueAttributeName{sqstypes.QueueAttributeNameApproximateNumberOfMessages, sqstypes.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
			sqstypes.QueueAttributeNameApproximateNumberOfMessagesDelayed}})
	if err != nil {
		t.Fatal(err)
	}
	visible, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessages"])
	inFlight, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesNotVisible"])
	delayed, _ = strconv.Atoi(out.Attributes["ApproximateNumberOfMessagesDelayed"])
	return visible, inFlight, delayed
}
