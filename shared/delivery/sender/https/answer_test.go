package https

import (
	"bytes"
	"context"
	"encoding/base64"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
)

// TestSendKeepsTheReceiversAnswer: a failed attempt's result keeps the
// first sender.MaxAnswer bytes of the receiver's answer, binary as it
// came; a 2xx's answer and an empty one keep nothing; an answer that
// stalls ends with the attempt's deadline, keeping what arrived.
func TestSendKeepsTheReceiversAnswer(t *testing.T) {
	long := bytes.Repeat([]byte("why-"), 1000)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get(HeaderType) {
		case "long":
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write(long)
		case "binary":
			w.WriteHeader(http.StatusBadRequest)
			_, _ = w.Write([]byte{0, 0xff, '<', 's', '>'})
		case "ok":
			_, _ = w.Write([]byte("thanks"))
		case "empty":
			w.WriteHeader(http.StatusServiceUnavailable)
		case "stall":
			w.WriteHeader(http.StatusBadGateway)
			_, _ = w.Write([]byte("partial"))
			w.(http.Flusher).Flush()
			select { // until the client gives up (the attempt's deadline) or the test ends
			case <-r.Context().Done():
			case <-release:
			}
		}
	}))
	defer srv.Close()
	defer close(release)
	secret := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	d := config.Destination{Name: "orders", URL: srv.URL, AllowPrivateNetworks: true}
	s, err := New(Options{Destination: d, SecretID: testSecretID, Secrets: &fakeSecrets{values: []string{secret}}, Client: NewClient(d)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		typ     string
		timeout time.Duration
		status  int
		answer  []byte
	}{
		{"long", 5 * time.Second, 500, long[:sender.MaxAnswer]},
		{"binary", 5 * time.Second, 400, []byte{0, 0xff, '<', 's', '>'}},
		{"ok", 5 * time.Second, 200, nil},
		{"empty", 5 * time.Second, 503, nil},
		{"stall", 300 * time.Millisecond, 502, []byte("partial")},
	} {
		res := s.Send(context.Background(), sender.Delivery{ID: "evt_1", Type: c.typ, Body: []byte("{}"), ContentType: "application/json", Attempt: 1, Timeout: c.timeout})
		if res.Status != c.status || !bytes.Equal(res.Answer, c.answer) {
			t.Errorf("%s: status %d answer %q (%d bytes), want %d %q", c.typ, res.Status, truncate(res.Answer), len(res.Answer), c.status, truncate(c.answer))
		}
	}
}

func truncate(b []byte) string {
	s := string(b)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return strings.ToValidUTF8(s, "?")
}
