package https

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/secrets"
)

// urlSecret answers the URL secret "u" with a value or an error, as the
// secrets cache returns them.
type urlSecret struct {
	value string
	err   error
}

func (f urlSecret) Value(context.Context, string) (string, error) { return f.value, f.err }

func (f urlSecret) RefreshValue(ctx context.Context, name string) (string, bool, error) {
	v, err := f.Value(ctx, name)
	return v, false, err
}

// TestURLSecretOutcomes: the sender's side of a URL secret the operator
// must fix (shared/delivery's urlsecret_test.go checks the record): Prepare
// lets the attempt go on and Send fails it unsent with the reason, naming
// the secret and never the value; a store that may answer later is a
// NotReadyError from Prepare ("url secret unavailable"), nothing claimed.
func TestURLSecretOutcomes(t *testing.T) {
	denied := &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "GetSecretValue",
		Err: &smithy.GenericAPIError{Code: "AccessDeniedException", Message: "not authorized"}}
	kms := &smithy.OperationError{ServiceID: "Secrets Manager", OperationName: "GetSecretValue",
		Err: &smtypes.DecryptionFailure{Message: new(string)}}
	for _, tt := range []struct {
		name string
		hs   urlSecret
		want string // the Send error's text; "" for a back-off in Prepare
	}{
		{"another scheme", urlSecret{value: "ftp://hooks.example.com/do-not-log"}, `url_secret_invalid: secret "u": the URL has a scheme other than https; use https`},
		{"a fragment", urlSecret{value: "https://hooks.example.com/x#do-not-log"}, `url_secret_invalid: secret "u": the URL has a fragment; remove the #part`},
		{"empty or binary", urlSecret{err: fmt.Errorf("secret %q: %w", "u", secrets.ErrInvalid)}, `url_secret_invalid: secret "u" holds no text (empty or binary); store https://host/path, verbatim`},
		{"not found", urlSecret{err: fmt.Errorf("secret %q: %w", "u", secrets.ErrNotSet)}, `url_secret_unreadable: secret "u" does not exist, is scheduled for deletion or has no current value; create or restore it`},
		{"access denied", urlSecret{err: fmt.Errorf("secret %q: %w: %w", "u", secrets.ErrUnavailable, denied)}, `url_secret_unreadable: secret "u": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)`},
		{"KMS", urlSecret{err: fmt.Errorf("secret %q cannot be decrypted: %w: %w", "u", secrets.ErrUnavailable, kms)}, `url_secret_unreadable: secret "u" cannot be decrypted with its KMS key (DecryptionFailure); check that the key is enabled and the lane's role may use it`},
		{"throttled", urlSecret{err: fmt.Errorf("secret %q: %w: %w", "u", secrets.ErrUnavailable, &smithy.GenericAPIError{Code: "ThrottlingException"})}, ""},
		{"store unreachable", urlSecret{err: fmt.Errorf("secret %q: %w: %w", "u", secrets.ErrUnavailable, context.DeadlineExceeded)}, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			key := "whsec_" + base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))
			d := config.Destination{Name: "orders", URLSecretName: "u"}
			s, err := New(Options{Destination: d, SecretID: testSecretID, Secrets: &fakeSecrets{values: []string{key}},
				HeaderSecrets: tt.hs, Client: NewClient(d)})
			if err != nil {
				t.Fatal(err)
			}
			perr := s.Prepare(context.Background())
			if tt.want == "" {
				var nr *sender.NotReadyError
				if !errors.As(perr, &nr) || nr.Reason != "url secret unavailable" {
					t.Errorf("Prepare = %v, want a NotReadyError: url secret unavailable", perr)
				}
				return
			}
			if perr != nil {
				t.Fatalf("Prepare = %v, want nil: the attempt is claimed and recorded", perr)
			}
			res := s.Send(context.Background(), sender.Delivery{ID: "evt_u", Body: []byte("{}"), Timeout: time.Second})
			if !res.Unsent || res.Verdict() != sender.Failed || res.Describe() != tt.want {
				t.Errorf("Send = unsent %v, %q; want unsent, %q", res.Unsent, res.Describe(), tt.want)
			}
			if strings.Contains(res.Describe(), "do-not-log") || strings.Contains(res.Describe(), "ftp") {
				t.Errorf("the result quotes the URL: %q", res.Describe())
			}
		})
	}
}
