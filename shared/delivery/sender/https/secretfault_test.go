package https

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/secrets"
)

// answerSM is Secrets Manager answering each secret with a value (nil:
// binary), or with an error as the SDK returns one (an operation error
// wrapping the API's).
type answerSM map[string]smAnswer

type smAnswer struct {
	value *string
	err   error
}

func (f answerSM) GetSecretValue(_ context.Context, in *secretsmanager.GetSecretValueInput, _ ...func(*secretsmanager.Options)) (*secretsmanager.GetSecretValueOutput, error) {
	a, ok := f[*in.SecretId]
	if !ok {
		a.err = &smtypes.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}
	}
	if a.err != nil {
		return nil, &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "GetSecretValue", Err: a.err}
	}
	return &secretsmanager.GetSecretValueOutput{SecretString: a.value}, nil
}

// secretUse is one kind of secret a lane reads, as a destination names it.
type secretUse struct {
	kind     string
	secret   string                      // its name
	set      func(d *config.Destination) // names it in the destination
	invalid  string                      // a value of no use, holding "do-not-log"
	problem  string                      // what the record says of it, after the secret's name
	reasons  [2]string                   // unreadable, invalid
	q        string                      // how the record names the secret
	notReady string                      // Prepare's reason while the store may answer later
}

// TestSecretFaultsAreFailedAttempts: every secret an https lane reads
// (the signing secret, a header's, the client certificate's and the CA's,
// the OAuth 2.0 client's) that Secrets Manager refuses for good (access
// denied, not found, scheduled for deletion, its KMS key) or whose value is
// of no use lets Prepare claim the attempt, and Send fail it unsent with
// the kind's reason, naming the secret and the problem and never the
// value; a probe (Send without Prepare) gets the same. A store that may
// answer later (throttled) is a NotReadyError from Prepare, as before.
func TestSecretFaultsAreFailedAttempts(t *testing.T) {
	uses := []secretUse{
		{kind: "signing", secret: testSecretID, set: func(*config.Destination) {},
			invalid: "whsec_do-not-log", problem: ": secret value 1 of 1: not whsec_ followed by standard base64: invalid signing secret; store whsec_ followed by the base64 of 24 to 64 random bytes (a JSON array of such values while rotating)",
			reasons: [2]string{"signing_secret_unreadable", "signing_secret_invalid"}, q: `secret "` + testSecretID + `"`, notReady: "signing secret unavailable"},
		{kind: "header", secret: "hdr", set: func(d *config.Destination) {
			d.Headers = []config.Header{{Name: "X-Tenant", Value: "acme"}, {Name: "Authorization", SecretName: "hdr"}}
		},
			invalid: "Bearer do-not-log\r\nX-Injected: yes", problem: ": its value holds a control character (byte 17, 0x0d); a header value may hold none but tab",
			reasons: [2]string{"header_secret_unreadable", "header_secret_invalid"}, q: `secret "hdr" (header Authorization)`, notReady: "header secret unavailable"},
		{kind: "client certificate", secret: "cert", set: func(d *config.Destination) { d.TLS = &config.TLS{ClientCertificateSecret: "cert"} },
			invalid: "-----BEGIN CERTIFICATE-----\ndo-not-log\n-----END CERTIFICATE-----\n", problem: ": not a usable certificate and private key (tls: failed to find any PEM data in certificate input); store the PEM certificate chain, leaf first, and its unencrypted private key",
			reasons: [2]string{"tls_secret_unreadable", "tls_secret_invalid"}, q: `secret "cert" (tls.clientCertificateSecret)`, notReady: "client credentials unavailable"},
		{kind: "CA", secret: "ca", set: func(d *config.Destination) { d.TLS = &config.TLS{CASecret: "ca"} },
			invalid: "do-not-log", problem: ": not a PEM bundle of CA certificates; store the CA certificates as PEM CERTIFICATE blocks",
			reasons: [2]string{"tls_secret_unreadable", "tls_secret_invalid"}, q: `secret "ca" (tls.caSecret)`, notReady: "client credentials unavailable"},
		{kind: "OAuth 2.0 client", secret: "oauth", set: func(d *config.Destination) {
			d.Auth = &config.Auth{OAuth2: &config.OAuth2{TokenURL: "https://idp.example.com/token", ClientSecret: "oauth"}}
		},
			invalid: `{"clientId": "do-not-log"}`, problem: `: the JSON object lacks "clientId" or "clientSecret"; store both`,
			reasons: [2]string{"oauth2_client_secret_unusable", "oauth2_client_secret_unusable"}, q: `secret "oauth" (auth.oauth2.clientSecret)`, notReady: "client credentials unavailable"},
	}
	faults := []struct {
		name    string
		answer  func(u secretUse) smAnswer
		invalid bool   // the reason is the kind's invalid one
		problem string // "" for the kind's own
	}{
		{"access denied", func(secretUse) smAnswer {
			return smAnswer{err: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "User: arn:aws:sts::123456789012:assumed-role/x is not authorized"}}
		}, false, ": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)"},
		{"not found", func(secretUse) smAnswer {
			return smAnswer{err: &smtypes.ResourceNotFoundException{Message: aws.String("Secrets Manager can't find the specified secret.")}}
		}, false, " does not exist, is scheduled for deletion or has no current value; create or restore it"},
		{"scheduled for deletion", func(secretUse) smAnswer {
			return smAnswer{err: &smtypes.InvalidRequestException{Message: aws.String("You can't perform this operation on the secret because it was marked for deletion.")}}
		}, false, " does not exist, is scheduled for deletion or has no current value; create or restore it"},
		{"KMS cannot decrypt", func(secretUse) smAnswer {
			return smAnswer{err: &smtypes.DecryptionFailure{Message: aws.String("Secrets Manager can't decrypt the protected secret text using the provided KMS key.")}}
		}, false, " cannot be decrypted with its KMS key (DecryptionFailure); check that the key is enabled and the lane's role may use it"},
		{"invalid value", func(u secretUse) smAnswer { return smAnswer{value: aws.String(u.invalid)} }, true, ""},
	}
	signingKey := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
	build := func(t *testing.T, u secretUse, a smAnswer) *Sender {
		t.Helper()
		sm := answerSM{testSecretID: {value: aws.String(signingKey)}, u.secret: a}
		cache := secrets.NewCache(sm)
		d := config.Destination{Name: "orders", URL: "https://hooks.example.com/hooks"}
		u.set(&d)
		client := NewClient(d)
		ca, err := NewClientAuth(d, cache, client, nil)
		if err != nil {
			t.Fatal(err)
		}
		s, err := New(Options{Destination: d, SecretID: testSecretID, Secrets: cache, HeaderSecrets: cache, Client: client, ClientAuth: ca})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	for _, u := range uses {
		for _, f := range faults {
			t.Run(u.kind+"/"+f.name, func(t *testing.T) {
				want := u.reasons[0] + ": " + u.q + f.problem
				if f.invalid {
					want = u.reasons[1] + ": " + u.q + u.problem
				}
				s := build(t, u, f.answer(u))
				if err := s.Prepare(context.Background()); err != nil {
					t.Fatalf("Prepare = %v, want nil: the attempt is claimed and recorded", err)
				}
				res := s.Send(context.Background(), sender.Delivery{ID: "evt_s", Body: []byte("{}"), Timeout: time.Second})
				if !res.Unsent || res.Verdict() != sender.Failed || res.Describe() != want {
					t.Errorf("Send = unsent %v, %q\nwant unsent, %q", res.Unsent, res.Describe(), want)
				}
				// A probe sends without Prepare: the same reason.
				probe := build(t, u, f.answer(u)).Send(context.Background(), sender.Delivery{ID: "probe_s", Body: []byte("{}"), Timeout: time.Second})
				if !probe.Unsent || probe.Describe() != want {
					t.Errorf("probe = unsent %v, %q\nwant unsent, %q", probe.Unsent, probe.Describe(), want)
				}
				if strings.Contains(res.Describe(), "do-not-log") || strings.Contains(res.Describe(), "not authorized") {
					t.Errorf("the result quotes the value or the store's message: %q", res.Describe())
				}
			})
		}
		t.Run(u.kind+"/throttled", func(t *testing.T) {
			s := build(t, u, smAnswer{err: &smithy.GenericAPIError{Code: "ThrottlingException", Message: "Rate exceeded"}})
			var nr *sender.NotReadyError
			if err := s.Prepare(context.Background()); !errors.As(err, &nr) || nr.Reason != u.notReady || !strings.Contains(nr.Error(), `"`+u.secret+`"`) {
				t.Errorf("Prepare = %v, want a NotReadyError %q naming the secret", err, u.notReady)
			}
			res := s.Send(context.Background(), sender.Delivery{ID: "probe_s", Body: []byte("{}"), Timeout: time.Second})
			if res.Verdict() != sender.Failed || !strings.HasPrefix(res.Describe(), "not sent: ") || strings.Contains(res.Describe(), u.reasons[0]) {
				t.Errorf("Send = %q, want not sent, without the reason of a secret to fix", res.Describe())
			}
		})
	}
}

// TestSecretKindFault: a value the secrets cache refuses itself (binary,
// or empty) is the kind's invalid reason, with what to store; errors are
// told apart by type, never by text, and a store that may answer later
// (a 5xx, a timeout, a throttle) is no fault of the secret.
func TestSecretKindFault(t *testing.T) {
	for _, tt := range []struct {
		kind secretKind
		q    string
		want string
	}{
		{signingSecretKind, `secret "s"`, `signing_secret_invalid: secret "s" holds no usable value (empty, binary, or a JSON array without a non-empty string); store whsec_ followed by the base64 of 24 to 64 random bytes (a JSON array of such values while rotating)`},
		{headerSecretKind, `secret "h" (header Authorization)`, `header_secret_invalid: secret "h" (header Authorization) holds no text (empty or binary); store the header's value, verbatim`},
		{certificateSecretKind, `secret "c" (tls.clientCertificateSecret)`, `tls_secret_invalid: secret "c" (tls.clientCertificateSecret) holds no text (empty or binary); store the PEM certificate chain, leaf first, and its unencrypted private key`},
		{caSecretKind, `secret "a" (tls.caSecret)`, `tls_secret_invalid: secret "a" (tls.caSecret) holds no text (empty or binary); store the CA certificates as PEM CERTIFICATE blocks`},
		{oauth2SecretKind, `secret "o" (auth.oauth2.clientSecret)`, `oauth2_client_secret_unusable: secret "o" (auth.oauth2.clientSecret) holds no text (empty or binary); store {"clientId": "…", "clientSecret": "…"}`},
	} {
		err := errors.New("secret holds binary data: " + secrets.ErrInvalid.Error())
		if r := tt.kind.fault(tt.q, err); r != nil {
			t.Errorf("%s: a text that merely reads like ErrInvalid is %q; want no match (errors are matched by type)", tt.q, r)
		}
		r := tt.kind.fault(tt.q, errors.Join(errors.New("secret holds binary data"), secrets.ErrInvalid))
		if r == nil || r.Error() != tt.want {
			t.Errorf("%s: %v\nwant %q", tt.q, r, tt.want)
		}
	}
	for _, err := range []error{
		errors.Join(secrets.ErrUnavailable, &smtypes.InternalServiceError{Message: aws.String("internal")}),
		errors.Join(secrets.ErrUnavailable, context.DeadlineExceeded),
		errors.Join(secrets.ErrUnavailable, &smithy.GenericAPIError{Code: "ThrottlingException"}),
	} {
		if r := headerSecretKind.fault(`secret "h"`, err); r != nil {
			t.Errorf("%v: %q, want nil (a store that may answer later)", err, r)
		}
	}
}
