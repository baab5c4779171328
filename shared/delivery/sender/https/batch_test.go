package https

import (
	"context"
	"encoding/base64"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// TestSendBatch: a batch is one POST of the envelope, signed over its
// exact bytes under the batch's webhook-id, with its size in
// hookfan-batch-size and the highest attempt; every entry gets the
// POST's result.
func TestSendBatch(t *testing.T) {
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	var got *http.Request
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, body = r, must(io.ReadAll(r.Body))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	d := config.Destination{Name: "orders", URL: srv.URL, AllowPrivateNetworks: true}
	s, err := New(Options{Destination: d, SecretID: testSecretID, Secrets: &fakeSecrets{values: []string{secret}}, Client: NewClient(d)})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	ds := []sender.Delivery{
		{ID: "e1", Source: "stripe", Type: "a", ContentType: "application/json", Body: []byte(`{"n":1}`), Attempt: 2, ReceivedAt: at, Timeout: 2 * time.Second},
		{ID: "e2", Source: "github", Type: "b", ContentType: "text/plain", Body: []byte("hi"), Attempt: 3, ReceivedAt: at, Timeout: 2 * time.Second},
	}
	res := s.SendBatch(context.Background(), ds)
	if len(res) != 2 || res[0].Status != 202 || res[1].Status != 202 {
		t.Fatalf("results %+v; want 202 for each entry", res)
	}
	want, _ := sender.BatchBody(ds)
	if string(body) != string(want) {
		t.Errorf("body %s\nwant %s", body, want)
	}
	if err := wh.Verify(body, got.Header); err != nil {
		t.Errorf("the Standard Webhooks library refuses the batch: %v", err)
	}
	for h, want := range map[string]string{HeaderID: sender.BatchID(ds), HeaderBatchSize: "2", HeaderAttempt: "3", "Content-Type": "application/json", HeaderSource: "", HeaderType: ""} {
		if v := got.Header.Get(h); v != want {
			t.Errorf("%s: %q, want %q", h, v, want)
		}
	}
	// A single delivery carries no batch size.
	s.Send(context.Background(), ds[0])
	if v := got.Header.Get(HeaderBatchSize); v != "" || got.Header.Get(HeaderSource) != "stripe" {
		t.Errorf("a single delivery: batch size %q, source %q", v, got.Header.Get(HeaderSource))
	}
	// An empty batch is refused unsent.
	if res := s.SendBatch(context.Background(), nil); len(res) != 0 {
		t.Errorf("empty batch: %+v", res)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
