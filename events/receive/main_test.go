package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
)

const testSecret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"

// deliver POSTs one delivery of event id signed with testSecret (or a
// wrong one) and returns the answer.
func deliver(t *testing.T, url, id string, signed bool) *http.Response {
	t.Helper()
	body := []byte(`{"type":"payment_intent.succeeded"}`)
	secret := testSecret
	if !signed {
		secret = "whsec_" + strings.Repeat("A", 32)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	sig, err := wh.Sign(id, now, body)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

func server(t *testing.T, b behaviour) *httptest.Server {
	t.Helper()
	wh, err := standardwebhooks.NewWebhook(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(handler([]*standardwebhooks.Webhook{wh}, slog.New(slog.NewTextHandler(io.Discard, nil)), &answerer{behaviour: b}))
	t.Cleanup(srv.Close)
	return srv
}

func TestReceiverAnswers(t *testing.T) {
	cases := []struct {
		name       string
		b          behaviour
		ids        []string
		want       []int
		retryAfter string
	}{
		{name: "default", ids: []string{"msg_1"}, want: []int{204}},
		{name: "outage", b: behaviour{Answer: 500}, ids: []string{"msg_1", "msg_1", "msg_2"}, want: []int{500, 500, 500}},
		{name: "gone", b: behaviour{Answer: 410}, ids: []string{"msg_1"}, want: []int{410}},
		{name: "throttled with Retry-After", b: behaviour{Answer: 429, RetryAfter: 30}, ids: []string{"msg_1"}, want: []int{429}, retryAfter: "30"},
		{name: "fail first, each event", b: behaviour{FailFirst: 2}, ids: []string{"msg_1", "msg_2", "msg_1", "msg_1", "msg_2", "msg_2"},
			want: []int{500, 500, 500, 204, 500, 204}},
		{name: "fail first, each destination's path", b: behaviour{FailFirst: 1}, ids: []string{"/a msg_1", "/b msg_1", "/a msg_1", "/b msg_1"},
			want: []int{500, 500, 204, 204}},
		{name: "fail first with an answer", b: behaviour{FailFirst: 1, Answer: 503, RetryAfter: 5}, ids: []string{"msg_1", "msg_1"},
			want: []int{503, 204}, retryAfter: "5"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := server(t, c.b)
			for i, id := range c.ids {
				path, id, ok := strings.Cut(id, " ")
				if !ok {
					path, id = "/", path
				}
				resp := deliver(t, srv.URL+path, id, true)
				if resp.StatusCode != c.want[i] {
					t.Errorf("delivery %d (%s): answered %d, want %d", i+1, id, resp.StatusCode, c.want[i])
				}
				got := resp.Header.Get("Retry-After")
				want := ""
				if resp.StatusCode >= 300 {
					want = c.retryAfter
				}
				if got != want {
					t.Errorf("delivery %d: Retry-After %q, want %q", i+1, got, want)
				}
			}
			if resp := deliver(t, srv.URL, "msg_forged", false); resp.StatusCode != http.StatusUnauthorized {
				t.Errorf("a wrongly signed delivery: answered %d, want 401 whatever the behaviour", resp.StatusCode)
			}
		})
	}
}

// TestReceiverDelays: --delay holds the answer back; the test checks the
// request is still unanswered while the delay runs, not a wall-clock bound.
func TestReceiverDelays(t *testing.T) {
	srv := server(t, behaviour{Delay: time.Hour})
	client := &http.Client{Timeout: 200 * time.Millisecond}
	body := []byte(`{}`)
	wh, _ := standardwebhooks.NewWebhook(testSecret)
	now := time.Now()
	sig, _ := wh.Sign("msg_slow", now, body)
	req, _ := http.NewRequest(http.MethodPost, srv.URL, bytes.NewReader(body))
	req.Header.Set("webhook-id", "msg_slow")
	req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
	req.Header.Set("webhook-signature", sig)
	resp, err := client.Do(req)
	if err == nil {
		resp.Body.Close()
		t.Fatalf("answered %d before the hour's delay", resp.StatusCode)
	}
}

func TestBehaviourCheck(t *testing.T) {
	for _, b := range []behaviour{{Answer: 99}, {Answer: 600}, {RetryAfter: -1}, {Delay: -time.Second}, {FailFirst: -1}, {FailFirst: 3, Answer: 204}} {
		if err := b.check(); err == nil {
			t.Errorf("%+v: accepted", b)
		}
	}
	for _, b := range []behaviour{{}, {Answer: 410}, {Answer: 429, RetryAfter: 30}, {FailFirst: 3}, {Delay: 2 * time.Second}} {
		if err := b.check(); err != nil {
			t.Errorf("%+v: %v", b, err)
		}
	}
}
