package delivery

import (
	"bytes"
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-lambda-go/events"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/message"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/secrets"
)

// fakeHeaderSecrets serves header secrets verbatim and counts refreshes.
type fakeHeaderSecrets struct {
	mu        sync.Mutex
	values    map[string]string
	err       error
	refreshed []string
}

func (f *fakeHeaderSecrets) Value(_ context.Context, name string) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	v, ok := f.values[name]
	if !ok {
		return "", errors.New("secret " + name + ": secret not set")
	}
	return v, nil
}

func (f *fakeHeaderSecrets) RefreshValue(ctx context.Context, name string) (string, bool, error) {
	f.mu.Lock()
	f.refreshed = append(f.refreshed, name)
	f.mu.Unlock()
	v, err := f.Value(ctx, name)
	return v, false, err
}

func withHeaders(hs *fakeHeaderSecrets, headers ...config.Header) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.Headers = headers
		o.HeaderSecrets = hs
	}
}

// TestDestinationHeaders: static and secret-backed headers reach the
// subscriber, beside an intact signature; the secret's value is in no log.
func TestDestinationHeaders(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	token := "Bearer sk_live_do-not-log-this"
	hs := &fakeHeaderSecrets{values: map[string]string{"hookfan/dest/orders/token": token}}
	h := newHarness(t, sub.URL, secret, withHeaders(hs,
		config.Header{Name: "authorization", SecretName: "hookfan/dest/orders/token"},
		config.Header{Name: "X-Tenant", Value: "acme"}))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_h1", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := sub.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests", len(got))
	}
	r := got[0]
	if r.header.Get("Authorization") != token || r.header.Get("X-Tenant") != "acme" || r.err != nil {
		t.Errorf("headers Authorization=%q X-Tenant=%q, signature %v", r.header.Get("Authorization"), r.header.Get("X-Tenant"), r.err)
	}
	if strings.Contains(h.logs.b.String(), "sk_live") {
		t.Error("the header secret's value reached the log")
	}
}

// TestHeaderSecretProblems: a header secret the store cannot give now is
// a failure of ours: nothing is sent, nothing recorded, the message is
// backed off. One that holds no usable header value is the operator's to
// fix: a failed attempt recorded header_secret_invalid. Either way the
// log names the header, not the value.
func TestHeaderSecretProblems(t *testing.T) {
	for _, tt := range []struct {
		name   string
		hs     *fakeHeaderSecrets
		want   string // the record's error; "" for none
		logged string
	}{
		{"unavailable", &fakeHeaderSecrets{err: secrets.ErrUnavailable}, "", "header secret unavailable"},
		{"value with LF", &fakeHeaderSecrets{values: map[string]string{"tok": "Bearer a\nX-Injected: yes"}},
			`header_secret_invalid: secret "tok" (header Authorization): its value holds a control character (byte 8, 0x0a); a header value may hold none but tab`, "header_secret_invalid"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, nil)
			h := newHarness(t, sub.URL, secret, withHeaders(tt.hs, config.Header{Name: "Authorization", SecretName: "tok"}))
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_h2", 1)))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the record failed and nothing sent", f, len(sub.requests()))
			}
			if v := h.sqs.visibility()["rh-evt_h2"]; len(v) != 1 || v[0] != 5 {
				t.Errorf("visibility %v, want the schedule's first delay (5 s)", v)
			}
			r, ok, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_h2"))
			if got := r.LastError; ok != (tt.want != "") || got != tt.want {
				t.Errorf("record %v %q, want %q", ok, got, tt.want)
			}
			logs := h.logs.b.String()
			if !strings.Contains(logs, tt.logged) || !strings.Contains(logs, "header Authorization") || strings.Contains(logs, "X-Injected") {
				t.Errorf("log %s", logs)
			}
		})
	}
}

// TestHeaderSecretRefreshedOn401: a 401 or 403 makes the next attempt read
// the header secrets again; other failures do not.
func TestHeaderSecretRefreshedOn401(t *testing.T) {
	secret := newSecret(t)
	status := http.StatusUnauthorized
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: status} })
	hs := &fakeHeaderSecrets{values: map[string]string{"tok": "Bearer a"}}
	h := newHarness(t, sub.URL, secret, withHeaders(hs, config.Header{Name: "Authorization", SecretName: "tok"}))
	h.h.Handle(context.Background(), batch(sqsRecord("evt_h3", 1)))
	status = http.StatusInternalServerError
	h.h.Handle(context.Background(), batch(sqsRecord("evt_h4", 1)))
	if len(hs.refreshed) != 1 || hs.refreshed[0] != "tok" {
		t.Errorf("refreshed %v, want [tok] once (after the 401 only)", hs.refreshed)
	}
}

func TestNewHandlerNeedsHeaderSecrets(t *testing.T) {
	dest := config.Destination{Name: "orders", URL: "https://a.example.com", Headers: []config.Header{{Name: "Authorization", SecretName: "tok"}}}
	_, err := newLane(laneOptions{Options: Options{Destination: dest, QueueURL: "q", Store: dedupe.NewMemory(), SQS: &fakeSQS{},
		Metrics: metrics.NewRecorder(&captureSink{})}, SecretID: "s", Secrets: &fakeSecrets{}, Client: http.DefaultClient})
	if err == nil || !strings.Contains(err.Error(), "HeaderSecrets") {
		t.Errorf("NewHandler without HeaderSecrets: %v", err)
	}
	dest.Headers = nil
	dest.Filter.Body = config.BodyFilter(`{"amount": "x"}`)
	_, err = newLane(laneOptions{Options: Options{Destination: dest, QueueURL: "q", Store: dedupe.NewMemory(), SQS: &fakeSQS{},
		Metrics: metrics.NewRecorder(&captureSink{})}, SecretID: "s", Secrets: &fakeSecrets{}, Client: http.DefaultClient})
	if err == nil || !strings.Contains(err.Error(), "body.amount") {
		t.Errorf("NewHandler with an invalid body filter: %v", err)
	}
}

// TestBodyFilter: an event whose body the filter refuses is acknowledged
// without a POST or a record, counted and logged; a matching one is
// delivered; a body that is not JSON never matches.
func TestBodyFilter(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Destination.Filter.Body = config.BodyFilter(`{"amount":[{"numeric":[">=",1000]}]}`)
	})
	big := sqsRecord("evt_big", 1) // amount 4200
	small := sqsRecord("evt_small", 1)
	small.Body = `{"id":"evt_small","amount":12}`
	form := sqsRecord("evt_form", 1)
	form.Body = `amount=5000`
	resp, _ := h.h.Handle(context.Background(), batch(big, small, form))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v; filtered events are acknowledged", f)
	}
	if sub.posts("evt_big") != 1 || sub.posts("evt_small") != 0 || sub.posts("evt_form") != 0 {
		t.Errorf("posts big %d small %d form %d; want 1, 0, 0", sub.posts("evt_big"), sub.posts("evt_small"), sub.posts("evt_form"))
	}
	if got := h.sink.sum(metrics.DeliveryFiltered); got != 2 {
		t.Errorf("DeliveryFiltered = %v, want 2", got)
	}
	if _, ok, _ := h.store.Get(context.Background(), dedupe.Key("orders", "evt_small")); ok {
		t.Error("a filtered event left a delivery record")
	}
	filtered := 0
	for _, l := range h.logs.lines(t) {
		if l["outcome"] == "filtered" {
			filtered++
		}
	}
	if filtered != 2 {
		t.Errorf("%d filtered log lines, want 2", filtered)
	}
}

// refRecord is the record ingest publishes for a body stored in S3.
func refRecord(t *testing.T, store *payload.Memory, id string, body []byte) events.SQSMessage {
	t.Helper()
	ref, err := store.Put(context.Background(), "stripe", id, body)
	if err != nil {
		t.Fatal(err)
	}
	rec := sqsRecord(id, 1)
	rec.Body = ref.JSON()
	v := message.PayloadS3
	rec.MessageAttributes[message.AttrPayload] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	return rec
}

// TestLargePayload: a body stored in S3 is read back and sent byte for
// byte, signed over those bytes; the body filter sees it too. A body that
// cannot be read is backed off, never sent as its reference.
func TestLargePayload(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	store := payload.NewMemory("hookfan-payloads")
	h := newHarness(t, sub.URL, secret, func(o *laneOptions) {
		o.Payloads = store
		o.Destination.Filter.Body = config.BodyFilter(`{"kind":["big"]}`)
	})
	body := append([]byte(`{"kind":"big","pad":"`), bytes.Repeat([]byte("x"), 2<<20)...)
	body = append(body, `"}`...)
	other := []byte(`{"kind":"small"}` + strings.Repeat(" ", 300<<10))
	resp, _ := h.h.Handle(context.Background(), batch(refRecord(t, store, "evt_l1", body), refRecord(t, store, "evt_l2", other)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := sub.requests()
	if len(got) != 1 || !bytes.Equal(got[0].body, body) || got[0].err != nil {
		t.Fatalf("%d requests; want the 2 MiB body once, verified", len(got))
	}
	if h.sink.sum(metrics.DeliveryFiltered) != 1 {
		t.Errorf("the stored body the filter refuses was not filtered")
	}

	gone := refRecord(t, store, "evt_l3", body)
	ref, _ := payload.ParseReference(gone.Body)
	store.Delete(ref.Key)
	resp, _ = h.h.Handle(context.Background(), batch(gone))
	if f := failures(resp); len(f) != 1 || len(sub.requests()) != 1 {
		t.Fatalf("failures %v, %d requests; want the record backed off, nothing sent", f, len(sub.requests()))
	}
	if !strings.Contains(h.logs.b.String(), "payload unavailable") {
		t.Error("no log line names the unreadable payload")
	}
}

func TestParseReferenceMessage(t *testing.T) {
	store := payload.NewMemory("hookfan-payloads")
	rec := refRecord(t, store, "evt_p", []byte("body"))
	m, err := ParseMessage(rec)
	if err != nil || m.Ref == nil || m.Body != nil {
		t.Fatalf("ParseMessage = %+v, %v; want a reference and no body yet", m, err)
	}
	bad := rec
	bad.Body = "payloads/evt_p"
	if _, err := ParseMessage(bad); !errors.Is(err, ErrMalformed) {
		t.Errorf("a reference that is not one: %v, want ErrMalformed", err)
	}
	both := refRecord(t, store, "evt_q", []byte("body"))
	v := message.EncodingBase64
	both.MessageAttributes[message.AttrEncoding] = events.SQSMessageAttribute{StringValue: &v, DataType: "String"}
	if _, err := ParseMessage(both); !errors.Is(err, ErrMalformed) {
		t.Errorf("payload with an encoding: %v, want ErrMalformed", err)
	}
}

func withURLSecret(hs *fakeHeaderSecrets, name string) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.URL, o.Destination.URLSecretName = "", name
		o.HeaderSecrets = hs
	}
}

// TestURLFromSecret: a destination whose URL carries a token reads it from
// its secret; the token is in no log line.
func TestURLFromSecret(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	hs := &fakeHeaderSecrets{values: map[string]string{"hookfan/dest/orders/url": sub.URL + "/hooks/tok_do-not-log?key=k_do-not-log"}}
	h := newHarness(t, "", secret, withURLSecret(hs, "hookfan/dest/orders/url"))
	resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u1", 1)))
	if f := failures(resp); len(f) != 0 {
		t.Fatalf("failures %v", f)
	}
	got := sub.requests()
	if len(got) != 1 || got[0].uri != "/hooks/tok_do-not-log?key=k_do-not-log" || got[0].err != nil {
		t.Fatalf("requests %+v, want one signed POST to the secret's path and query", got)
	}
	if strings.Contains(h.logs.b.String(), "do-not-log") {
		t.Errorf("the URL's token reached the log: %s", h.logs.b.String())
	}
}

// TestURLSecretProblems: a URL secret the store cannot give now (it may
// answer later) is a failure of ours: nothing is sent, the message is
// backed off, and the log names the secret, never its value. A secret that
// holds no URL, or cannot be read for good, is a recorded failed attempt
// (urlsecret_test.go).
func TestURLSecretProblems(t *testing.T) {
	for name, hs := range map[string]*fakeHeaderSecrets{
		"unavailable": {err: secrets.ErrUnavailable},
	} {
		t.Run(name, func(t *testing.T) {
			secret := newSecret(t)
			sub := newSubscriber(t, secret, nil)
			h := newHarness(t, "", secret, withURLSecret(hs, "u"))
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u2", 1)))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the record failed and nothing sent", f, len(sub.requests()))
			}
			if v := h.sqs.visibility()["rh-evt_u2"]; len(v) != 1 || v[0] != 5 {
				t.Errorf("visibility %v, want the schedule's first delay (5 s)", v)
			}
			logs := h.logs.b.String()
			if !strings.Contains(logs, "url secret unavailable") || !strings.Contains(logs, `secret \"u\"`) || strings.Contains(logs, "do-not-log") {
				t.Errorf("log %s", logs)
			}
		})
	}
}

// TestURLSecretRefreshedOn401: a 401 reads the URL's secret again, as it
// does the headers'.
func TestURLSecretRefreshedOn401(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, func(string) reply { return reply{status: http.StatusUnauthorized} })
	hs := &fakeHeaderSecrets{values: map[string]string{"u": sub.URL + "/t"}}
	h := newHarness(t, "", secret, withURLSecret(hs, "u"))
	h.h.Handle(context.Background(), batch(sqsRecord("evt_u3", 1)))
	if len(hs.refreshed) != 1 || hs.refreshed[0] != "u" {
		t.Errorf("refreshed %v, want [u]", hs.refreshed)
	}
}

func TestNewHandlerNeedsURLSecretReader(t *testing.T) {
	dest := config.Destination{Name: "orders", URLSecretName: "u"}
	_, err := newLane(laneOptions{Options: Options{Destination: dest, QueueURL: "q", Store: dedupe.NewMemory(), SQS: &fakeSQS{},
		Metrics: metrics.NewRecorder(&captureSink{})}, SecretID: "s", Secrets: &fakeSecrets{}, Client: http.DefaultClient})
	if err == nil || !strings.Contains(err.Error(), "HeaderSecrets") {
		t.Errorf("NewHandler without HeaderSecrets: %v", err)
	}
}
