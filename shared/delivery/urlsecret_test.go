package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"
	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

// urlSM is Secrets Manager answering the URL secret "u" with a value, or
// with an error as the SDK returns one (an operation error wrapping the
// API's).
type urlSM struct {
	value *string
	err   error
}

func (f urlSM) GetSecretValue(context.Context, *secretsmanager.GetSecretValueInput, ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	if f.err != nil {
		return nil, &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "GetSecretValue", Err: f.err}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: f.value}, nil
}

// withURLSecretStore reads the URL secret "u" through a real secrets cache
// over sm.
func withURLSecretStore(sm urlSM) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.URL, o.Destination.URLSecretName = "", "u"
		o.HeaderSecrets = secrets.NewCache(sm)
	}
}

// checkRecordedFailure asserts what TestRefusedAddressIsAFailedAttempt
// asserts of an address_refused attempt, for another reason: one record,
// FAILED (DEAD at the last attempt) with want as its error, counted, on
// the retry schedule, no not_attempted line, and nothing of the URL.
func checkRecordedFailure(t *testing.T, h *harness, attempt int, want string) {
	t.Helper()
	checkFailedAttempt(t, h, "evt_u", attempt, want, "do-not-log", "ftp", "mailto", "hooks.example")
}

// checkFailedAttempt asserts that event id's one attempt, its attempt-th
// (1, or 10: the last), is recorded FAILED (DEAD at the last) with want as
// its error (as the record keeps it, within dedupe.MaxErrorLen), counted,
// on the retry schedule, logged with its reason and no not_attempted line,
// and that neither the log nor the record holds any of leaks.
func checkFailedAttempt(t *testing.T, h *harness, id string, attempt int, want string, leaks ...string) {
	t.Helper()
	status, vis, dead := dedupe.StatusFailed, []int32{5}, 0.0
	if attempt == 10 {
		status, vis, dead = dedupe.StatusDead, []int32{0}, 1
	}
	r, ok, err := h.store.Get(context.Background(), dedupe.Key("orders", id))
	if err != nil || !ok {
		t.Fatalf("no delivery record: %v", err)
	}
	if r.Status != status || r.LastError != dedupe.ShortError(want) || r.Attempts != 1 || r.LastStatus != 0 {
		t.Errorf("record %s after %d attempts, status %d: %q; want %s after 1: %q", r.Status, r.Attempts, r.LastStatus, r.LastError, status, want)
	}
	if diff := cmp.Diff(vis, h.sqs.visibility()["rh-"+id]); diff != "" {
		t.Errorf("visibility (-want +got):\n%s", diff)
	}
	for name, want := range map[string]float64{metrics.DeliveryAttempts: 1, metrics.DeliveryFailed: 1, metrics.DeliveryDead: dead} {
		if got := h.sink.sum(name); got != want {
			t.Errorf("%s = %g, want %g", name, got, want)
		}
	}
	reason, _, _ := strings.Cut(want, ":")
	logs := h.logs.b.String()
	if strings.Contains(logs, "not_attempted") || !strings.Contains(logs, reason) {
		t.Errorf("log, want the attempt's line with its reason: %s", logs)
	}
	for _, leak := range leaks {
		if strings.Contains(logs+r.LastError, leak) {
			t.Errorf("%q reached the log or the record: %s %s", leak, logs, r.LastError)
		}
	}
}

// TestURLSecretInvalidIsAFailedAttempt: a URL secret that holds no URL a
// delivery may go to is the operator's configuration to fix, like a
// refused address: the attempt is recorded url_secret_invalid, naming the
// secret and the problem, never any part of the value (not its scheme,
// path, query or credentials).
func TestURLSecretInvalidIsAFailedAttempt(t *testing.T) {
	const prefix = `url_secret_invalid: secret "u": `
	tests := []struct {
		name, value string
		attempt     int
		want        string
	}{
		{"empty", "", 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"not absolute", "hooks.example.com/do-not-log", 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"quoted", `"https://hooks.example.com/do-not-log"`, 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"trailing newline", "https://hooks.example.com/do-not-log\n", 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"relative", "/hooks/do-not-log", 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"opaque", "mailto:do-not-log@example.com", 1, prefix + "the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)"},
		{"another scheme", "ftp://hooks.example.com/do-not-log", 1, prefix + "the URL has a scheme other than https; use https"},
		{"http", "http://hooks.example.com/do-not-log?k=do-not-log", 1, prefix + "the URL uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)"},
		{"fragment", "https://hooks.example.com/x#do-not-log", 1, prefix + "the URL has a fragment; remove the #part"},
		{"credentials", "https://u:do-not-log@hooks.example.com/", 1, prefix + "the URL carries credentials; remove them from the URL (deliveries are authenticated by their signature; a subscriber's credential goes in a header with secretName)"},
		{"last attempt", "ftp://hooks.example.com/do-not-log", 10, prefix + "the URL has a scheme other than https; use https"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := &fakeHeaderSecrets{values: map[string]string{"u": tt.value}}
			h := newHarness(t, "", newSecret(t), withURLSecret(hs, "u"), withGuard())
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u", tt.attempt)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the record released", f)
			}
			checkRecordedFailure(t, h, tt.attempt, tt.want)
		})
	}
	// The secrets cache refuses an empty or binary value itself.
	empty := ""
	for name, sm := range map[string]urlSM{"empty in the store": {value: &empty}, "binary": {}} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, "", newSecret(t), withURLSecretStore(sm), withGuard())
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u", 1)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the record released", f)
			}
			checkRecordedFailure(t, h, 1, `url_secret_invalid: secret "u" holds no text (empty or binary); store https://host/path, verbatim`)
		})
	}
}

// TestURLSecretUnreadable: a URL secret Secrets Manager answers for with
// an error that retrying will not mend (no such secret, access denied, its
// KMS key cannot decrypt it) is a failed attempt recorded
// url_secret_unreadable; one that may pass (throttled, a 5xx) backs the
// message off unsent and unrecorded as before, logged not_attempted with
// the error and counted DeliveryFailed, and to the DLQ at the last.
func TestURLSecretUnreadable(t *testing.T) {
	const prefix = `url_secret_unreadable: secret "u"`
	for _, tt := range []struct {
		name string
		err  error
		want string
	}{
		{"not found", &smtypes.ResourceNotFoundException{Message: ptr("Secrets Manager can't find the specified secret.")},
			prefix + " does not exist, is scheduled for deletion or has no current value; create or restore it"},
		{"access denied", &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: arn:aws:sts::123456789012:assumed-role/x is not authorized"},
			prefix + ": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)"},
		{"KMS cannot decrypt", &smtypes.DecryptionFailure{Message: ptr("Secrets Manager can't decrypt the protected secret text using the provided KMS key.")},
			prefix + " cannot be decrypted with its KMS key (DecryptionFailure); check that the key is enabled and the lane's role may use it"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "", newSecret(t), withURLSecretStore(urlSM{err: tt.err}), withGuard())
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u", 1)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the record released", f)
			}
			checkRecordedFailure(t, h, 1, tt.want)
		})
	}
	for _, tt := range []struct {
		name    string
		err     error
		attempt int
		vis     []int32
		dead    float64
	}{
		{"throttled", &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}, 1, []int32{5}, 0},
		{"5xx", &smtypes.InternalServiceError{Message: ptr("internal error")}, 2, []int32{30}, 0},
		{"5xx at the last attempt", &smtypes.InternalServiceError{Message: ptr("internal error")}, 10, []int32{0}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "", newSecret(t), withURLSecretStore(urlSM{err: tt.err}), withGuard())
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_u", tt.attempt)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the message backed off", f)
			}
			if _, ok, err := h.store.Get(context.Background(), dedupe.Key("orders", "evt_u")); ok || err != nil {
				t.Errorf("a record (%v) for a store that may answer later", err)
			}
			if diff := cmp.Diff(tt.vis, h.sqs.visibility()["rh-evt_u"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			for name, want := range map[string]float64{metrics.DeliveryAttempts: 0, metrics.DeliveryFailed: 1, metrics.DeliveryDead: tt.dead} {
				if got := h.sink.sum(name); got != want {
					t.Errorf("%s = %g, want %g", name, got, want)
				}
			}
			if logs := h.logs.b.String(); !strings.Contains(logs, `"outcome":"not_attempted"`) || !strings.Contains(logs, "url secret unavailable") {
				t.Errorf("log, want the not_attempted line: %s", logs)
			}
		})
	}
}
