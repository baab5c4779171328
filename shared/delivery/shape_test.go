package delivery

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/google/go-cmp/cmp"
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sigv4test"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

var testCreds = aws.Credentials{AccessKeyID: "AKIDLANEROLE", SecretAccessKey: "lane-role-secret", SessionToken: "lane-session-token"}

func withSigV4(creds aws.CredentialsProvider) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.Auth = &config.Auth{SigV4: &config.SigV4{Service: "execute-api", Region: "eu-west-1"}}
		o.Credentials = creds
	}
}

func withTransform(expr string) func(*laneOptions) {
	return func(o *laneOptions) { o.Destination.Transform = expr }
}

// asReceived is the request a subscriber got, for the SigV4 check.
func asReceived(t *testing.T, base string, r received) *http.Request {
	t.Helper()
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ru, err := url.ParseRequestURI(r.uri)
	if err != nil {
		t.Fatal(err)
	}
	return &http.Request{Method: http.MethodPost, Host: u.Host, URL: ru, Header: r.header}
}

// TestSigV4SignsEachDelivery: a signed destination's request carries a
// SigV4 signature the SDK's own signer recomputes, with the lane role's
// session token, beside an intact Standard Webhooks signature; the
// static header is signed, the secret-backed one is sent but left out of
// the signature.
func TestSigV4SignsEachDelivery(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := &fakeHeaderSecrets{values: map[string]string{"orders/key": "key-do-not-sign"}}
	h := newHarness(t, sub.URL+"/prod/hooks?tenant=a", secret, withSigV4(credentials.StaticCredentialsProvider{Value: testCreds}),
		withHeaders(hs, config.Header{Name: "X-Api-Key", SecretName: "orders/key"}, config.Header{Name: "X-Tenant", Value: "acme"}))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_s1", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := sub.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests, want 1", len(got))
	}
	r := got[0]
	if r.err != nil {
		t.Errorf("Standard Webhooks signature: %v", r.err)
	}
	a, err := sigv4test.Verify(asReceived(t, sub.URL, r), r.body, testCreds, "execute-api", "eu-west-1", 0)
	if err != nil {
		t.Fatalf("SigV4: %v", err)
	}
	for _, name := range []string{"host", "x-amz-date", "x-amz-security-token", "x-amz-content-sha256", "webhook-signature", "webhook-id", "x-tenant", "content-type"} {
		if !slices.Contains(a.SignedHeaders, name) {
			t.Errorf("%s is not signed (signed: %v)", name, a.SignedHeaders)
		}
	}
	if slices.Contains(a.SignedHeaders, "x-api-key") || r.header.Get("X-Api-Key") != "key-do-not-sign" {
		t.Errorf("the secret-backed header: signed %v, sent %q; want it sent, unsigned", a.SignedHeaders, r.header.Get("X-Api-Key"))
	}
	// Tampering is caught: the check is real.
	r.body = append(r.body, ' ')
	if _, err := sigv4test.Verify(asReceived(t, sub.URL, r), r.body, testCreds, "execute-api", "eu-west-1", 0); err == nil {
		t.Error("a changed body still verifies")
	}
}

type failingCreds struct{}

func (failingCreds) Retrieve(context.Context) (aws.Credentials, error) {
	return aws.Credentials{}, errors.New("no credentials in this environment")
}

// TestSigV4CredentialsUnavailable: without the role's credentials nothing
// is sent; the attempt fails with the reason and is backed off.
func TestSigV4CredentialsUnavailable(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, withSigV4(failingCreds{}))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_s2", 1)))
	if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
		t.Fatalf("failures %v, %d requests; want the record back and nothing sent", f, len(sub.requests()))
	}
	rec, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_s2"))
	if rec.Status != dedupe.StatusFailed || !strings.Contains(rec.LastError, "sigv4: the lane role's credentials are unavailable") {
		t.Errorf("record %s %q, want FAILED naming the credentials", rec.Status, rec.LastError)
	}
}

// TestTransformShapesTheSignedBody: the subscriber gets the transformed
// JSON, as application/json, and the Standard Webhooks signature verifies
// over those bytes.
func TestTransformShapesTheSignedBody(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, withTransform(`{text: "\(.type): \(.amount / 100)", id}`))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_t1", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := sub.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	if string(got[0].body) != `{"id":"evt_t1","text":"invoice.paid: 42"}` || got[0].header.Get("Content-Type") != "application/json" || got[0].err != nil {
		t.Errorf("body %s, Content-Type %q, signature %v", got[0].body, got[0].header.Get("Content-Type"), got[0].err)
	}
	wh, _ := standardwebhooks.NewWebhook(secret)
	if err := wh.Verify([]byte(sqsRecord("evt_t1", 1).Body), got[0].header); err == nil {
		t.Error("the signature covers the original body; want the transformed one")
	}
}

// TestTransformFailureIsDeadAtOnce: a transform that fails on an event
// (a runtime error, a non-JSON body) makes its record DEAD with the error
// after one attempt, sends nothing and releases the message at once, for
// the queue's redrive policy to move to the DLQ: nothing is sent to the
// DLQ by the function.
func TestTransformFailureIsDeadAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name, expr, body, want string
	}{
		{"runtime error", `.amount | keys`, "", "transform: the expression failed: keys cannot be applied to: number"},
		{"not JSON", `.`, "amount=4200", "transform: the body is not JSON (syntax error at byte 0)"},
		{"two outputs", `.id, .type`, "", "transform: the expression yields more than one value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, nil)
			h := newHarness(t, sub.URL, secret, withTransform(tt.expr))
			rec := sqsRecord("evt_t2", 1)
			if tt.body != "" {
				rec.Body = tt.body
			}
			resp, _ := h.h.Handle(context.Background(), batch(rec))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 || !slices.Equal(h.sqs.visibility()["rh-evt_t2"], []int32{0}) {
				t.Fatalf("failures %v, %d requests, visibility %v; want the message released at once and nothing sent", f, len(sub.requests()), h.sqs.visibility())
			}
			r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_t2"))
			if r.Status != dedupe.StatusDead || !strings.HasPrefix(r.LastError, tt.want) || r.Attempts != 1 || r.LeaseToken != "" {
				t.Errorf("record %s after %d attempts, %q, lease %q; want DEAD after 1 with %q, released", r.Status, r.Attempts, r.LastError, r.LeaseToken, tt.want)
			}
			if h.sink.sum(metrics.DeliveryDead) != 1 || h.sink.sum(metrics.DeliveryFailed) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 0 {
				t.Errorf("dead %v, failed %v, attempts %v; want 1 dead, 1 failed, no POST attempt",
					h.sink.sum(metrics.DeliveryDead), h.sink.sum(metrics.DeliveryFailed), h.sink.sum(metrics.DeliveryAttempts))
			}
		})
	}
}

// TestTransformFailurePassesToTheDLQ: the message's remaining receives
// apply the transform again; one that fails as the record's latest attempt
// did passes the message on (released at once, the lease released, no
// metric or warning again, the history as it was), until SQS's redrive
// policy moves it to the DLQ. A replay that fails is a failure of its own.
// Once the transform is fixed (a deploy), a receive, such as the message's
// redrive from the DLQ, delivers the event. Both dedupe modes.
func TestTransformFailurePassesToTheDLQ(t *testing.T) {
	for _, mode := range []dedupe.Mode{dedupe.ModeLease, dedupe.ModeCheck} {
		t.Run(string(mode), func(t *testing.T) { testTransformPassThrough(t, mode) })
	}
}

func testTransformPassThrough(t *testing.T, mode dedupe.Mode) {
	mem := dedupe.NewMemory()
	store := func(o *laneOptions) { o.Store = mem.InMode(mode) }
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	ctx := context.Background()
	pk := dedupe.Key("orders", "evt_t3")
	h := newHarness(t, sub.URL, secret, withTransform(`.amount | keys`), store)
	if _, err := h.h.Handle(ctx, batch(sqsRecord("evt_t3", 1))); err != nil {
		t.Fatal(err)
	}
	first, _, _ := mem.Get(ctx, pk)
	for n := 2; n <= 4; n++ {
		h.clock.Advance(time.Second)
		resp, _ := h.h.Handle(ctx, batch(sqsRecord("evt_t3", n)))
		if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
			t.Fatalf("receive %d: failures %v, %d requests; want it released, nothing sent", n, f, len(sub.requests()))
		}
	}
	if v := h.sqs.visibility()["rh-evt_t3"]; !slices.Equal(v, []int32{0, 0, 0, 0}) {
		t.Errorf("visibility %v, want each receive released at once", v)
	}
	r, _, _ := mem.Get(ctx, pk)
	if r.Status != dedupe.StatusDead || r.LastError != first.LastError || r.LeaseToken != "" || r.Attempts != 4 {
		t.Errorf("record %s %q, lease %q, %d claims; want DEAD with the same error, released, after 4 claims", r.Status, r.LastError, r.LeaseToken, r.Attempts)
	}
	if diff := cmp.Diff(first.History, r.History); diff != "" {
		t.Errorf("the pass-throughs changed the history (-first +now):\n%s", diff)
	}
	if h.sink.sum(metrics.DeliveryDead) != 1 || h.sink.sum(metrics.DeliveryFailed) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 0 {
		t.Errorf("dead %v, failed %v, attempts %v; want the first failure counted once, no POST",
			h.sink.sum(metrics.DeliveryDead), h.sink.sum(metrics.DeliveryFailed), h.sink.sum(metrics.DeliveryAttempts))
	}
	var dead, spent int
	for _, l := range h.logs.lines(t) {
		switch {
		case l["outcome"] == "dead" && l["level"] == "WARN":
			dead++
		case l["outcome"] == "spent" && l["level"] == "INFO" && strings.Contains(l["reason"].(string), "passing to the DLQ"):
			spent++
		}
	}
	if dead != 1 || spent != 3 {
		t.Errorf("%d dead warnings, %d pass-through lines; want 1 and one per pass-through (3)", dead, spent)
	}

	// A replay with the transform still broken: a new failure, counted.
	replay := sqsRecord("evt_t3", 1)
	replay.MessageAttributes[message.AttrReplay] = sqsString(message.ReplayIDPrefix + h.clock.Now().UTC().Format("20060102T150405Z") + "-a")
	if _, err := h.h.Handle(ctx, batch(replay)); err != nil {
		t.Fatal(err)
	}
	if r, _, _ := mem.Get(ctx, pk); len(r.History) != 2 || h.sink.sum(metrics.DeliveryDead) != 2 {
		t.Errorf("after a failed replay: %d history entries, %v dead; want 2 and 2", len(r.History), h.sink.sum(metrics.DeliveryDead))
	}

	// Fixed and deployed: the same record, the message redriven.
	fixed := newHarness(t, sub.URL, secret, withTransform(`{amount}`), store)
	resp, _ := fixed.h.Handle(ctx, batch(sqsRecord("evt_t3", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v after the fix, want it delivered", f)
	}
	if got := sub.requests(); len(got) != 1 || string(got[0].body) != `{"amount":4200}` || got[0].err != nil {
		t.Fatalf("requests %v; want the fixed transform's output, signed", got)
	}
	if r, _, _ := mem.Get(ctx, pk); r.Status != dedupe.StatusDelivered {
		t.Errorf("record %s after the fix, want DELIVERED", r.Status)
	}
}

// TestTransformAppliesTheCurrentExpression: a handler built with a new
// transform (a deploy, or the local stack's restart) shapes a replayed
// message with it.
func TestTransformAppliesTheCurrentExpression(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	for i, expr := range []string{`{v: 1}`, `{v: 2}`} {
		h := newHarness(t, sub.URL, secret, withTransform(expr))
		rec := sqsRecord("evt_t4", 1)
		if i == 1 {
			replay := message.ReplayIDPrefix + time.Now().UTC().Format("20060102T150405Z") + "-a"
			rec.MessageAttributes[message.AttrReplay] = sqsString(replay)
		}
		if _, err := h.h.Handle(context.Background(), batch(rec)); err != nil {
			t.Fatal(err)
		}
	}
	got := sub.requests()
	if len(got) != 2 || string(got[0].body) != `{"v":1}` || string(got[1].body) != `{"v":2}` {
		t.Fatalf("bodies %v; want {\"v\":1} then {\"v\":2}", got)
	}
}

func sqsString(v string) events.SQSMessageAttribute {
	return events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
}

// TestProbeIsShapedAndSigned: a paused lane's probe goes through the
// destination's transform (so a chat webhook can answer it) and SigV4;
// a transform that fails on the probe's body leaves the probe as it is.
func TestProbeIsShapedAndSigned(t *testing.T) {
	for _, tt := range []struct{ expr, want string }{
		{`{text: "probe of \(.destination)"}`, `{"text":"probe of orders"}`},
		{`.data.object.amount | keys`, ""}, // fails: the probe's own body
	} {
		secret := newSecret(t)
		sub := newSubscriber(t, secret, nil)
		ps := newPausing(t, sub.URL, secret, config.Pause{}, withTransform(tt.expr), withSigV4(credentials.StaticCredentialsProvider{Value: testCreds}))
		ctx := context.Background()
		if _, err := ps.lanes.Pause(ctx, "orders", pausing.PauseInput{At: ps.clock.Now(), ResumeBy: ps.clock.Now().Add(time.Hour), By: pausing.ByDeliverer}); err != nil {
			t.Fatal(err)
		}
		_ = ps.sw.Disable(ctx)
		if rep, err := ps.h.Tick(ctx); err != nil || rep.Change != "resumed" {
			t.Fatalf("%s: tick %+v, %v; want the probe answered and the lane resumed", tt.expr, rep, err)
		}
		reqs := sub.requests()
		if len(reqs) != 1 || reqs[0].err != nil {
			t.Fatalf("%s: %d probe requests", tt.expr, len(reqs))
		}
		if tt.want != "" && string(reqs[0].body) != tt.want {
			t.Errorf("probe body %s, want %s", reqs[0].body, tt.want)
		}
		if tt.want == "" && !strings.Contains(string(reqs[0].body), `"type":"hookfan.probe"`) {
			t.Errorf("probe body %s, want the probe as it is", reqs[0].body)
		}
		if _, err := sigv4test.Verify(asReceived(t, sub.URL, reqs[0]), reqs[0].body, testCreds, "execute-api", "eu-west-1", 0); err != nil {
			t.Errorf("probe SigV4: %v", err)
		}
	}
}
