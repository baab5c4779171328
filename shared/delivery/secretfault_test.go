package delivery

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

// secretStore is Secrets Manager holding each secret as a value or an
// error the SDK returns (urlSM's answers); a name it does not hold is not
// found. Answers may change.
type secretStore struct {
	mu      sync.Mutex
	answers map[string]urlSM
}

func (s *secretStore) GetSecretValue(ctx context.Context, in *secretsmanager.GetSecretValueInput, opts ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	s.mu.Lock()
	a, ok := s.answers[*in.SecretId]
	s.mu.Unlock()
	if !ok {
		a = urlSM{err: &smtypes.ResourceNotFoundException{Message: ptr("Secrets Manager can't find the specified secret.")}}
	}
	return a.GetSecretValue(ctx, in, opts...)
}

func (s *secretStore) set(name string, a urlSM) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.answers[name] = a
}

// laneSecret is one kind of secret an https lane reads, as a test lane
// reads it: through a real secrets cache over a secretStore.
type laneSecret struct {
	kind, name string
	// q is the reason's prefix up to the secret ("…_unreadable: secret
	// \"name\" (what)"), for each of the kind's two reasons.
	unreadable, invalid string
	value               string // a value of no use, holding "do-not-log"
	problem             string // what the record says of it
	notReady            string // the back-off's reason while the store may answer later
	lane                func(t *testing.T, sm secrets.API) func(*laneOptions)
}

// laneSecrets are the secrets an https lane reads besides its URL's
// (urlsecret_test.go).
var laneSecrets = []laneSecret{
	{kind: "signing", name: testSecretID,
		unreadable: `signing_secret_unreadable: secret "` + testSecretID + `"`, invalid: `signing_secret_invalid: secret "` + testSecretID + `"`,
		value: "whsec_do-not-log", problem: ": secret value 1 of 1: not whsec_ followed by standard base64: invalid signing secret; store whsec_ followed by the base64 of 24 to 64 random bytes (a JSON array of such values while rotating)",
		notReady: "signing secret unavailable",
		lane: func(_ *testing.T, sm secrets.API) func(*laneOptions) {
			return func(o *laneOptions) { o.Secrets = secrets.NewCache(sm, secrets.WithClock(o.Now)) }
		}},
	{kind: "header", name: "hookfan/orders/token",
		unreadable: `header_secret_unreadable: secret "hookfan/orders/token" (header Authorization)`, invalid: `header_secret_invalid: secret "hookfan/orders/token" (header Authorization)`,
		value: "Bearer do-not-log ", problem: ": its value starts or ends with white space, which HTTP drops; remove it",
		notReady: "header secret unavailable",
		lane: func(_ *testing.T, sm secrets.API) func(*laneOptions) {
			return func(o *laneOptions) {
				o.Destination.Headers = []config.Header{{Name: "Authorization", SecretName: "hookfan/orders/token"}}
				o.HeaderSecrets = secrets.NewCache(sm, secrets.WithClock(o.Now))
			}
		}},
	{kind: "client certificate", name: certSecret,
		unreadable: `tls_secret_unreadable: secret "` + certSecret + `" (tls.clientCertificateSecret)`, invalid: `tls_secret_invalid: secret "` + certSecret + `" (tls.clientCertificateSecret)`,
		value: "-----BEGIN PRIVATE KEY-----\ndo-not-log\n-----END PRIVATE KEY-----\n", problem: ": not a usable certificate and private key (tls: failed to find any PEM data in certificate input); store the PEM certificate chain, leaf first, and its unencrypted private key",
		notReady: "client credentials unavailable",
		lane: func(t *testing.T, sm secrets.API) func(*laneOptions) {
			return withClientAuth(t, sm, &clock{t: time.Now()}, &config.TLS{ClientCertificateSecret: certSecret}, nil)
		}},
	{kind: "CA", name: caSecret,
		unreadable: `tls_secret_unreadable: secret "` + caSecret + `" (tls.caSecret)`, invalid: `tls_secret_invalid: secret "` + caSecret + `" (tls.caSecret)`,
		value: "do-not-log", problem: ": not a PEM bundle of CA certificates; store the CA certificates as PEM CERTIFICATE blocks",
		notReady: "client credentials unavailable",
		lane: func(t *testing.T, sm secrets.API) func(*laneOptions) {
			return withClientAuth(t, sm, &clock{t: time.Now()}, &config.TLS{CASecret: caSecret}, nil)
		}},
	{kind: "OAuth 2.0 client", name: oauthSecret,
		unreadable: `oauth2_client_secret_unusable: secret "` + oauthSecret + `" (auth.oauth2.clientSecret)`, invalid: `oauth2_client_secret_unusable: secret "` + oauthSecret + `" (auth.oauth2.clientSecret)`,
		value: `{"clientId": "do-not-log", "clientSecret": ""}`, problem: `: the JSON object lacks "clientId" or "clientSecret"; store both`,
		notReady: "client credentials unavailable",
		lane: func(t *testing.T, sm secrets.API) func(*laneOptions) {
			return withClientAuth(t, sm, &clock{t: time.Now()}, nil, &config.OAuth2{TokenURL: "https://idp.example.com/token", ClientSecret: oauthSecret})
		}},
}

// deniedFix follows the secret's name in an access-denied reason.
const deniedFix = ": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)"

// accessDenied is Secrets Manager's answer to a role that may not read a
// secret or use its KMS key.
var accessDenied = &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: arn:aws:sts::123456789012:assumed-role/x is not authorized"}

// secretLane is a lane on sub whose secret of kind k Secrets Manager
// answers with a; every other secret it reads is good.
func secretLane(t *testing.T, sub *subscriber, signing string, k laneSecret, a urlSM, opts ...func(*laneOptions)) (*harness, *secretStore) {
	t.Helper()
	sm := &secretStore{answers: map[string]urlSM{testSecretID: {value: &signing}}}
	sm.set(k.name, a)
	return newHarness(t, sub.URL, signing, append([]func(*laneOptions){k.lane(t, sm)}, opts...)...), sm
}

// TestSecretFaultIsAFailedAttempt: each secret an https lane reads that
// the operator must fix is recorded like url_secret_unreadable: the
// attempt is claimed and recorded FAILED with the kind's reason (access
// denied, at attempt 1), DEAD at the last (a value of no use, at attempt
// 10), counted, on the retry schedule, nothing sent and no message text
// holding the value. A throttle still backs the message off unattempted
// and unrecorded, logged not_attempted with the kind's reason.
func TestSecretFaultIsAFailedAttempt(t *testing.T) {
	for _, k := range laneSecrets {
		t.Run(k.kind+"/access denied", func(t *testing.T) {
			signing := newSecret(t)
			sub := newSubscriber(t, signing, nil)
			h, _ := secretLane(t, sub, signing, k, urlSM{err: accessDenied})
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_s", 1)))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the record released, nothing sent", f, len(sub.requests()))
			}
			checkFailedAttempt(t, h, "evt_s", 1, k.unreadable+deniedFix, "not authorized")
		})
		t.Run(k.kind+"/invalid at the last attempt", func(t *testing.T) {
			signing := newSecret(t)
			sub := newSubscriber(t, signing, nil)
			h, _ := secretLane(t, sub, signing, k, urlSM{value: ptr(k.value)})
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_s", 10)))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the record released for the DLQ, nothing sent", f, len(sub.requests()))
			}
			checkFailedAttempt(t, h, "evt_s", 10, k.invalid+k.problem, "do-not-log", "BEGIN")
		})
		t.Run(k.kind+"/throttled", func(t *testing.T) {
			signing := newSecret(t)
			sub := newSubscriber(t, signing, nil)
			h, _ := secretLane(t, sub, signing, k, urlSM{err: &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}})
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_s", 1)))
			if f := failures(resp); len(f) != 1 || len(sub.requests()) != 0 {
				t.Fatalf("failures %v, %d requests; want the message backed off", f, len(sub.requests()))
			}
			if _, ok, err := h.store.Get(context.Background(), dedupe.Key("orders", "evt_s")); ok || err != nil {
				t.Errorf("a record (%v) for a store that may answer later", err)
			}
			if diff := cmp.Diff([]int32{5}, h.sqs.visibility()["rh-evt_s"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			for name, want := range map[string]float64{metrics.DeliveryAttempts: 0, metrics.DeliveryFailed: 1, metrics.DeliveryDead: 0} {
				if got := h.sink.sum(name); got != want {
					t.Errorf("%s = %g, want %g", name, got, want)
				}
			}
			reason, _, _ := strings.Cut(k.unreadable, ":")
			if logs := h.logs.b.String(); !strings.Contains(logs, `"outcome":"not_attempted"`) || !strings.Contains(logs, k.notReady) || strings.Contains(logs, reason) {
				t.Errorf("log, want the not_attempted line %q without %s: %s", k.notReady, reason, logs)
			}
		})
	}
}

// TestSecretFaultPausesAndProbes: failed attempts for a secret to fix
// count toward pause like any failed attempt; the paused lane's probe
// fails with the same reason, unsent, and the lane stays paused until the
// secret is fixed, when the next probe resumes it.
func TestSecretFaultPausesAndProbes(t *testing.T) {
	for _, k := range laneSecrets[:2] { // the signing secret and a header's
		t.Run(k.kind, func(t *testing.T) {
			signing := newSecret(t)
			sub := newSubscriber(t, signing, nil)
			sm := &secretStore{answers: map[string]urlSM{testSecretID: {value: &signing}}}
			sm.set(k.name, urlSM{err: accessDenied})
			ps := newPausing(t, sub.URL, signing, config.Pause{AfterFailures: 2}, k.lane(t, sm))
			ctx := context.Background()
			if _, err := ps.h.Handle(ctx, batch(sqsRecord("a", 1), sqsRecord("b", 1))); err != nil {
				t.Fatal(err)
			}
			if s := ps.state(t); !s.IsPaused() || ps.switchOn(t) {
				t.Fatalf("lane %+v after two failed attempts; want paused", s)
			}
			ps.clock.Advance(time.Minute)
			rep, err := ps.h.Tick(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Mode != "PAUSED" || len(sub.requests()) != 0 || !strings.Contains(ps.logs.b.String(), `"probe_error":"`+strings.ReplaceAll(k.unreadable, `"`, `\"`)) {
				t.Errorf("tick %+v, %d requests; want paused, the probe failed unsent with its reason; log:\n%s", rep, len(sub.requests()), ps.logs.b.String())
			}
			// Fixed: the cache reads it again after its back-off.
			value := "Bearer t"
			if k.name == testSecretID {
				value = signing
			}
			sm.set(k.name, urlSM{value: &value})
			ps.clock.Advance(time.Minute)
			if rep, err := ps.h.Tick(ctx); err != nil || rep.Mode != "ACTIVE" || rep.ProbeStatus != http.StatusOK || len(sub.requests()) != 1 {
				t.Errorf("tick %+v, %v, %d requests; want the probe answered and the lane resumed", rep, err, len(sub.requests()))
			}
		})
	}
}

// TestSecretFaultBatchedAndOrdered: on a batched lane the secret's fault
// fails the batch's one attempt, recorded for each of its events; on an
// ordered lane it holds the event's key like any failed attempt, its later
// events coming back unsent behind it.
func TestSecretFaultBatchedAndOrdered(t *testing.T) {
	k := laneSecrets[1] // a header's secret
	want := k.invalid + k.problem
	t.Run("batched", func(t *testing.T) {
		signing := newSecret(t)
		sub := newSubscriber(t, signing, nil)
		h, _ := secretLane(t, sub, signing, k, urlSM{value: ptr(k.value)}, batched(config.Batch{MaxEvents: 10}))
		resp, _ := h.h.Handle(context.Background(), records("e1", "e2", "e3"))
		if len(failures(resp)) != 3 || len(sub.requests()) != 0 {
			t.Fatalf("failures %v, %d requests; want all three released, nothing sent", failures(resp), len(sub.requests()))
		}
		for _, id := range []string{"e1", "e2", "e3"} {
			if r := record(t, h, id); r.Status != dedupe.StatusFailed || r.LastError != want || r.Attempts != 1 || len(r.History) != 1 || r.History[0].Batch == "" {
				t.Errorf("%s: record %s after %d attempts, history %+v: %q; want FAILED after 1 in a batch: %q", id, r.Status, r.Attempts, r.History, r.LastError, want)
			}
		}
		if h.sink.sum(metrics.DeliveryAttempts) != 3 || h.sink.sum(metrics.DeliveryFailed) != 3 || h.sink.sum(metrics.DeliveryBatches) != 1 {
			t.Errorf("attempts %g, failed %g, batches %g; want 3, 3, 1", h.sink.sum(metrics.DeliveryAttempts), h.sink.sum(metrics.DeliveryFailed), h.sink.sum(metrics.DeliveryBatches))
		}
	})
	t.Run("ordered", func(t *testing.T) {
		signing := newSecret(t)
		sub := newSubscriber(t, signing, nil)
		h, _ := secretLane(t, sub, signing, k, urlSM{value: ptr(k.value)}, ordered)
		resp, _ := h.h.Handle(context.Background(), batch(orderedRecord("a1", "stripe:A", 1), orderedRecord("a2", "stripe:A", 1), orderedRecord("b1", "stripe:B", 1)))
		if diff := cmp.Diff([]string{"msg-a1-1", "msg-a2-1", "msg-b1-1"}, failures(resp)); diff != "" || len(sub.requests()) != 0 {
			t.Fatalf("failures (-want +got):\n%s%d requests", diff, len(sub.requests()))
		}
		for _, id := range []string{"a1", "b1"} {
			if r := record(t, h, id); r.Status != dedupe.StatusFailed || r.LastError != want {
				t.Errorf("%s: record %s %q, want FAILED %q", id, r.Status, r.LastError, want)
			}
		}
		if _, ok, _ := h.store.Get(context.Background(), dedupe.Key("orders", "a2")); ok {
			t.Error("a2 was claimed behind a1, which holds its key")
		}
		vis := h.sqs.visibility()
		if diff := cmp.Diff(map[string][]int32{"rh-a1": {5}, "rh-a2": {0}, "rh-b1": {5}}, vis); diff != "" {
			t.Errorf("visibility (-want +got):\n%s", diff)
		}
	})
}
