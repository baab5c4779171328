//go:build integration

package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/payload"
)

// withSecrets adds secret values to the stack's secrets file.
func withSecrets(values map[string]string) envOption {
	return func(o *devstack.Options) {
		for k, v := range values {
			o.Secrets[k] = []string{v}
		}
	}
}

// padded returns an edit that grows a JSON body to size bytes with a
// "padding" field (and sets its "amount").
func padded(size int, amount int) func(*events.Sample) {
	return func(s *events.Sample) {
		var doc map[string]any
		_ = json.Unmarshal(s.Body, &doc)
		doc["amount"] = amount
		doc["padding"] = ""
		base, _ := json.Marshal(doc)
		if fill := size - len(base); fill > 0 {
			doc["padding"] = strings.Repeat("p", fill)
		}
		s.Body, _ = json.Marshal(doc)
	}
}

// TestLargePayloadTwoDestinations: a 900 KiB body (under the HTTP API's 1,004,885-byte limit, over one SNS message) goes through S3 and is
// delivered byte for byte to two destinations, each delivery verified with
// the Standard Webhooks library with the destination's secret; the object
// sits under a key derived from the event id, in a bucket whose lifecycle
// expires it.
func TestLargePayloadTwoDestinations(t *testing.T) {
	t.Parallel()
	a, b := newReceiver(t, nil), newReceiver(t, nil)
	large := `[
	  {"name": "stripe", "verify": {"kind": "stripe", "secretName": "%[1]s/sources/stripe"}, "maxBodyBytes": 1004885},
	  {"name": "github", "verify": {"kind": "github", "secretName": "%[1]s/sources/github"}}
	]`
	e := startEnvSources(t, large, []string{destJSON("a", a, ""), destJSON("b", b, `"filter": {"types": ["payment_intent.*"]}`)},
		map[string]*receiver{"a": a, "b": b})
	var body []byte
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_large_1", func(s *events.Sample) {
		padded(900<<10, 5000)(s)
		body = s.Body
	})
	if len(body) != 900<<10 {
		t.Fatalf("body of %d bytes, want 900 KiB", len(body))
	}
	waitFor(t, 30*time.Second, "both deliveries", func() bool { return len(a.ids()) >= 1 && len(b.ids()) >= 1 })
	e.settled()
	for name, rc := range map[string]*receiver{"a": a, "b": b} {
		got := rc.deliveries()
		if len(got) != 1 {
			t.Fatalf("%s got %d deliveries, want 1", name, len(got))
		}
		d := got[0]
		if !bytes.Equal(d.body, body) || !d.verified || d.header.Get("webhook-id") != ev.id {
			t.Errorf("%s: %d bytes (equal: %v), verified %v, id %s", name, len(d.body), bytes.Equal(d.body, body), d.verified, d.header.Get("webhook-id"))
		}
		if r, _ := e.record(name, ev.id); r.Status != dedupe.StatusDelivered {
			t.Errorf("%s record %s, want DELIVERED", name, r.Status)
		}
	}
	bucket := e.stack.Topology.PayloadBucket
	list, err := clients.S3.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &bucket, Prefix: aws.String(payload.SourcePrefix("stripe") + ev.id + "/")})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.Contents) != 1 || aws.ToInt64(list.Contents[0].Size) != int64(len(body)) {
		t.Errorf("objects under the event's key: %+v, want one of %d bytes", list.Contents, len(body))
	}
	lc, err := clients.S3.GetBucketLifecycleConfiguration(context.Background(), &s3.GetBucketLifecycleConfigurationInput{Bucket: &bucket})
	if err != nil {
		t.Fatal(err)
	}
	if len(lc.Rules) != 1 || aws.ToInt32(lc.Rules[0].Expiration.Days) != int32(e.cfg.PayloadExpirationDays()) {
		t.Errorf("lifecycle %+v, want objects expiring after %d days", lc.Rules, e.cfg.PayloadExpirationDays())
	}
}

// TestDestinationHeadersOnTheWire: a destination's static header and a
// header read from Secrets Manager reach the subscriber with a verifying
// signature; the secret's value appears in no log line.
func TestDestinationHeadersOnTheWire(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	secretName := uniquePrefix(t) + "/headers/token"
	token := "Bearer tok_integration_secret_value"
	e := startEnv(t, []string{destJSON("api", rc, fmt.Sprintf(`"headers": [{"name": "Authorization", "secretName": %q}, {"name": "X-Tenant", "value": "acme"}]`, secretName))},
		map[string]*receiver{"api": rc}, withSecrets(map[string]string{secretName: token}))
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_headers_1", nil)
	waitFor(t, 20*time.Second, "delivery", func() bool { return len(rc.ids()) >= 1 })
	d := rc.deliveries()[0]
	if d.header.Get("Authorization") != token || d.header.Get("X-Tenant") != "acme" || !d.verified || d.header.Get("webhook-id") != ev.id {
		t.Errorf("headers Authorization %q X-Tenant %q, verified %v", d.header.Get("Authorization"), d.header.Get("X-Tenant"), d.verified)
	}
	if strings.Contains(e.logs.String(), "tok_integration") {
		t.Error("the header secret's value reached the logs")
	}
}

// TestDestinationURLFromSecretOnTheWire: a destination whose URL carries a
// token reads it from Secrets Manager (the local stack's secrets): the
// subscriber gets the token's path and query with a verifying signature,
// and the token appears in no log line.
func TestDestinationURLFromSecretOnTheWire(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var uris []string
	rc := newReceiver(t, func(_ int, r *http.Request) int {
		mu.Lock()
		defer mu.Unlock()
		uris = append(uris, r.URL.RequestURI())
		return http.StatusNoContent
	})
	secretName := uniquePrefix(t) + "/url"
	e := startEnv(t, []string{fmt.Sprintf(`{"name": "tokened", "urlSecretName": %q, "allowPrivateNetworks": true}`, secretName)},
		map[string]*receiver{"tokened": rc}, withSecrets(map[string]string{secretName: rc.srv.URL + "/hooks/tok_integration_path?key=tok_integration_query"}))
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_url_secret_1", nil)
	waitFor(t, 20*time.Second, "delivery", func() bool { return rc.accepted(ev.id) >= 1 })
	mu.Lock()
	defer mu.Unlock()
	if len(uris) != 1 || uris[0] != "/hooks/tok_integration_path?key=tok_integration_query" || !rc.deliveries()[0].verified {
		t.Errorf("requests to %v (verified %v), want one to the secret's path and query", uris, rc.deliveries()[0].verified)
	}
	if strings.Contains(e.logs.String(), "tok_integration") {
		t.Error("the URL's token reached the logs")
	}
}

// TestHeaderSecretMissingOnTheWire: a header secret the emulator's Secrets
// Manager does not hold (ResourceNotFoundException over the wire) is the
// operator's to fix: each attempt is claimed and recorded with its reason,
// header_secret_unreadable, naming the secret and the header, and the last
// one DEAD; nothing reaches the receiver.
func TestHeaderSecretMissingOnTheWire(t *testing.T) {
	t.Parallel()
	rc := newReceiver(t, nil)
	secretName := uniquePrefix(t) + "/never-created"
	e := startEnv(t, []string{destJSON("headered", rc,
		fmt.Sprintf(`"headers": [{"name": "Authorization", "secretName": %q}], "retry": {"schedule": ["1s"], "jitter": 0}`, secretName))},
		map[string]*receiver{"headered": rc})
	ev := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_header_secret_1", nil)
	var rec dedupe.Record
	waitFor(t, 30*time.Second, "the record's last attempt", func() bool {
		var ok bool
		rec, ok = e.record("headered", ev.id)
		return ok && rec.Status == dedupe.StatusDead
	})
	want := `header_secret_unreadable: secret "` + secretName + `" (header Authorization) does not exist, is scheduled for deletion or has no current value; create or restore it`
	if rec.Attempts != 2 || rec.LastError != dedupe.ShortError(want) {
		t.Errorf("record DEAD after %d attempts: %q; want 2: %q", rec.Attempts, rec.LastError, want)
	}
	if n := len(rc.deliveries()); n != 0 {
		t.Errorf("the receiver got %d requests, want none", n)
	}
	if logs := e.logs.String(); strings.Contains(logs, `"not_attempted"`) || !strings.Contains(logs, `"outcome":"dead"`) {
		t.Errorf("logs, want failed attempts and no back-off unattempted:\n%s", logs)
	}
}

// TestBodyFilterEndToEnd: through the local stack, a destination filtering
// on the body alone (SNS's MessageBody scope on AWS; the deliver function
// on the emulator), one filtering on source and body (attribute scope at
// SNS, the body in the deliver function) and one with a numeric body
// filter (deliver function only) each receive exactly the events their
// filter selects; the others are acknowledged without a POST and leave no
// record.
func TestBodyFilterEndToEnd(t *testing.T) {
	t.Parallel()
	bodyOnly, both, numeric := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	e := startEnv(t, []string{
		destJSON("body-only", bodyOnly, `"filter": {"body": {"data": {"object": {"currency": ["usd"]}}}}`),
		destJSON("both", both, `"filter": {"sources": ["stripe"], "body": {"data": {"object": {"currency": [{"anything-but": ["usd"]}]}}}}`),
		destJSON("numeric", numeric, `"filter": {"body": {"amount": [{"numeric": [">=", 1000]}]}}`),
	}, map[string]*receiver{"body-only": bodyOnly, "both": both, "numeric": numeric})
	for _, name := range []string{"body-only", "both", "numeric"} {
		d, _ := e.cfg.Destination(name)
		_, scope := e.cfg.SubscriptionFilter(d)
		want := map[string]string{"body-only": config.ScopeBody, "both": config.ScopeAttributes, "numeric": ""}[name]
		if scope != want {
			t.Fatalf("%s: SNS scope %q, want %q", name, scope, want)
		}
		if _, local := devstack.EmulatorSubscriptionFilter(e.cfg, d); local == config.ScopeBody {
			t.Fatalf("%s: the emulator got a MessageBody policy", name)
		}
	}
	currency := func(c string, amount int) func(*events.Sample) {
		return func(s *events.Sample) {
			var doc map[string]any
			_ = json.Unmarshal(s.Body, &doc)
			doc["data"].(map[string]any)["object"].(map[string]any)["currency"] = c
			doc["amount"] = amount
			s.Body, _ = json.Marshal(doc)
		}
	}
	usdBig := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_bf_1", currency("usd", 5000))
	eurSmall := e.send("stripe", "stripe", "payment_intent.succeeded", "evt_bf_2", currency("eur", 10))
	push := e.send("github", "github", "push", "d1f0c2a0-0000-4000-8000-0000000000bf", nil)

	want := map[string][]string{
		"body-only": {usdBig.id},
		"both":      {eurSmall.id},
		"numeric":   {usdBig.id},
	}
	rcs := map[string]*receiver{"body-only": bodyOnly, "both": both, "numeric": numeric}
	waitFor(t, 20*time.Second, "filtered deliveries", func() bool {
		return len(bodyOnly.ids()) >= 1 && len(both.ids()) >= 1 && len(numeric.ids()) >= 1
	})
	e.settled()
	for name, ids := range want {
		if diff := cmp.Diff(sorted(ids), sorted(rcs[name].ids())); diff != "" {
			t.Errorf("%s received (-want +got):\n%s", name, diff)
		}
	}
	// The numeric lane got every event from SNS and acknowledged the two
	// its filter refuses without a record.
	for _, id := range []string{eurSmall.id, push.id} {
		if _, ok := e.record("numeric", id); ok {
			t.Errorf("numeric: a filtered event %s left a record", id)
		}
	}
	if n := strings.Count(e.logs.String(), `"outcome":"filtered"`); n < 2 {
		t.Errorf("%d filtered log lines, want at least 2 (numeric's two refusals)", n)
	}
}
