package ingest_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

var idPattern = regexp.MustCompile(`^evt_[0-9a-f]{32}$`)

// FuzzHandler sends arbitrary bodies and signature headers to a Stripe
// source. Whatever arrives, the answer is a known status with a JSON body,
// and nothing is published unless stripe-go agrees the signature is valid.
// The same body signed properly is never refused as unauthenticated; it is
// accepted only when it is one JSON document (json.Valid), and what is
// published is deliverable: SQS's characters only, read back by deliver as
// the exact body.
func FuzzHandler(f *testing.F) {
	f.Add([]byte(`{"id":"evt_1","type":"charge.succeeded"}`), "t=1,v1=00", false, "application/json")
	f.Add([]byte(`{"id":"evt_1","type":"a\u0001"}`), "", true, "")
	f.Add([]byte{0xff, 0x00}, "t=1764478800,v0=ab", false, "text/plain\x00")
	f.Add([]byte(`{"id":"evt_1","type":"a","type":"b"}`), "", false, "application/json")
	f.Add([]byte(`{"id":"evt_1","type":"a","ID":"evt_2"}`), "", false, "application/json")
	f.Add([]byte("{\"id\":\"evt_1\",\"type\":\"a\",\"n\":\"\uffff\\u0000\xff\"} "), "", true, "application/json")
	f.Fuzz(func(t *testing.T, body []byte, sig string, asBase64 bool, contentType string) {
		r := newRig(t, testSources())
		check := func(req eventsRequest) int {
			resp := r.do(t, req)
			var doc map[string]any
			if err := json.Unmarshal([]byte(resp.Body), &doc); err != nil {
				t.Fatalf("answer %d body %q is not JSON", resp.StatusCode, resp.Body)
			}
			switch resp.StatusCode {
			case http.StatusAccepted:
				if id, _ := doc["id"].(string); !idPattern.MatchString(id) {
					t.Fatalf("202 with id %q", id)
				}
			case 400, 401, 404, 405, 413, 503:
				errorCode(t, resp.Body)
			default:
				t.Fatalf("unexpected status %d: %s", resp.StatusCode, resp.Body)
			}
			return resp.StatusCode
		}
		build := func(h http.Header) eventsRequest {
			req := events.ProxyRequest("stripe", h, body)
			if asBase64 {
				req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(body), true
			}
			return req
		}

		h := http.Header{}
		h.Set("Stripe-Signature", sig)
		h.Set("Content-Type", contentType)
		check(build(h))
		for _, in := range r.pub.published() {
			if webhook.ValidatePayloadIgnoringTolerance(body, sig, secretOf("stripe")) != nil {
				t.Fatalf("published a request stripe-go rejects: sig %q", sig)
			}
			if typ := attr(in, "type"); typ == "" || len(typ) > 256 || strings.ContainsAny(typ, "\x00\n\r") {
				t.Fatalf("published type %q", typ)
			}
			deliverable(t, in, body)
		}

		signedHeader, err := events.Sign(config.Verify{Kind: provider.Stripe}, events.Sample{Body: body, Header: h}, r.now, secretOf("stripe"))
		if err != nil {
			t.Fatal(err)
		}
		status := check(build(signedHeader))
		switch {
		case status == http.StatusUnauthorized:
			t.Fatalf("a properly signed body was refused as unauthenticated")
		case status == http.StatusAccepted && !json.Valid(body):
			t.Fatalf("accepted a body json.Valid refuses: %q", body)
		case len(body) > 0 && !json.Valid(body) && status != http.StatusBadRequest && status != http.StatusRequestEntityTooLarge:
			t.Fatalf("a body json.Valid refuses got %d, want 400", status)
		}
		if status == http.StatusAccepted {
			deliverable(t, r.pub.published()[len(r.pub.published())-1], body)
		}
	})
}
