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
	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sigv4test"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/pausing"
)

var testCreds = aws.Credentials{AccessKeyID: "AKIDLANEROLE", SecretAccessKey: "lane-role-secret", SessionToken: "lane-session-token"}

func withSigV4(creds aws.CredentialsProvider) func(*Options) {
	return func(o *Options) {
		o.Destination.Auth = &config.Auth{SigV4: &config.SigV4{Service: "execute-api", Region: "eu-west-1"}}
		o.Credentials = creds
	}
}

func withTransform(expr string, dlq *fakeRequeue) func(*Options) {
	return func(o *Options) {
		o.Destination.Transform = expr
		if dlq != nil {
			o.DeadLetterURL, o.DeadLetters = "https://sqs.us-east-1.amazonaws.com/123456789012/hookfan-orders-dlq", dlq
		}
	}
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
	h := newHarness(t, sub.URL, secret, withTransform(`{text: "\(.type): \(.amount / 100)", id}`, nil))
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
// after one attempt, sends nothing, and moves the message as received to
// the DLQ; without a DLQ it is released for the queue's redrive.
func TestTransformFailureIsDeadAtOnce(t *testing.T) {
	for _, tt := range []struct {
		name, expr, body, want string
	}{
		{"runtime error", `.amount | keys`, "", "transform: the expression failed: keys cannot be applied to: number (4200)"},
		{"not JSON", `.`, "amount=4200", "transform: the body is not JSON (syntax error at byte 1)"},
		{"two outputs", `.id, .type`, "", "transform: the expression yields more than one value"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, nil)
			dlq := &fakeRequeue{}
			h := newHarness(t, sub.URL, secret, withTransform(tt.expr, dlq))
			rec := sqsRecord("evt_t2", 1)
			if tt.body != "" {
				rec.Body = tt.body
			}
			rec.Attributes[sqsTraceHeader] = "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"
			resp, _ := h.h.Handle(context.Background(), batch(rec))
			if f := failures(resp); len(f) != 0 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the message acknowledged (moved to the DLQ) and nothing sent", f, len(sub.requests()))
			}
			r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_t2"))
			if r.Status != dedupe.StatusDead || !strings.HasPrefix(r.LastError, tt.want) || r.Attempts != 1 {
				t.Errorf("record %s after %d attempts, %q; want DEAD after 1 with %q", r.Status, r.Attempts, r.LastError, tt.want)
			}
			sent := dlq.calls()
			if len(sent) != 1 || *sent[0].MessageBody != rec.Body || *sent[0].MessageAttributes[message.AttrID].StringValue != "evt_t2" ||
				!strings.HasSuffix(*sent[0].QueueUrl, "-dlq") || *sent[0].MessageSystemAttributes[sqsTraceHeader].StringValue != rec.Attributes[sqsTraceHeader] {
				t.Errorf("DLQ sends %+v; want the message as received, once", sent)
			}
			if h.sink.sum(metrics.DeliveryDead) != 1 || h.sink.sum(metrics.DeliveryAttempts) != 0 {
				t.Errorf("dead %v, attempts %v; want 1 dead, no POST attempt", h.sink.sum(metrics.DeliveryDead), h.sink.sum(metrics.DeliveryAttempts))
			}
		})
	}
	t.Run("without a DLQ", func(t *testing.T) {
		secret := newSecret(t)
		h := newHarness(t, "http://127.0.0.1:9", secret, withTransform(`error("no")`, nil))
		resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_t3", 1)))
		if f := failures(resp); len(f) != 1 || !slices.Equal(h.sqs.visibility()["rh-evt_t3"], []int32{0}) {
			t.Fatalf("failures %v, visibility %v; want the record released at once", f, h.sqs.visibility())
		}
		r, _, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_t3"))
		if r.Status != dedupe.StatusDead {
			t.Errorf("record %s, want DEAD", r.Status)
		}
	})
}

// TestTransformAppliesTheCurrentExpression: a handler built with a new
// transform (a deploy, or the local stack's restart) shapes a replayed
// message with it.
func TestTransformAppliesTheCurrentExpression(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	for i, expr := range []string{`{v: 1}`, `{v: 2}`} {
		h := newHarness(t, sub.URL, secret, withTransform(expr, nil))
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
		ps := newPausing(t, sub.URL, secret, config.Pause{}, withTransform(tt.expr, nil), withSigV4(credentials.StaticCredentialsProvider{Value: testCreds}))
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
