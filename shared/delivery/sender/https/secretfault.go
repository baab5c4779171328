package https

import (
	"errors"
	"strconv"

	smtypes "github.com/aws/aws-sdk-go-v2/service/secretsmanager/types"
	"github.com/aws/smithy-go"

	"github.com/hookfan/hookfan/shared/secrets"
)

// A secret a lane reads that the operator must fix — one Secrets Manager
// refuses for good, or one whose value is of no use — is the destination's
// current setting, like a refused address (egress.go): Prepare lets the
// event be claimed and Send fails the attempt unsent with a stable reason,
// recorded, counted, retried on the schedule and DEAD at the last. A store
// that may answer later (a throttle, a 5xx, a timeout) is no such thing:
// Prepare backs the message off unattempted. The reason's text names the
// secret, the problem and the fix, never the value, not even a prefix.

// Reasons a record's error starts with when a secret of the lane other
// than its URL's (ReasonURLSecretInvalid, ReasonURLSecretUnreadable) gives
// nothing to attempt with. "Unreadable": no such secret (or deleted, or
// without a current value), access denied, or its KMS key cannot decrypt
// it. "Invalid": its value is of no use. An OAuth 2.0 client secret keeps
// its one reason for both, ReasonOAuth2Secret (oauth2.go).
const (
	// ReasonSigningSecretUnreadable: the lane's signing secret.
	ReasonSigningSecretUnreadable = "signing_secret_unreadable"
	// ReasonSigningSecretInvalid: a value of the signing secret is no
	// whsec_ key of 24 to 64 bytes.
	ReasonSigningSecretInvalid = "signing_secret_invalid"
	// ReasonHeaderSecretUnreadable: a header's secret (headers[].secretName).
	ReasonHeaderSecretUnreadable = "header_secret_unreadable"
	// ReasonHeaderSecretInvalid: a header's secret holds no value a header
	// may carry (empty, too long, a control character, white space at
	// either end).
	ReasonHeaderSecretInvalid = "header_secret_invalid"
	// ReasonTLSSecretUnreadable: the client certificate's or the CA's
	// secret (tls.clientCertificateSecret, tls.caSecret).
	ReasonTLSSecretUnreadable = "tls_secret_unreadable"
	// ReasonTLSSecretInvalid: the client certificate's secret holds no
	// usable pair (or one outside its validity), or the CA's no PEM
	// bundle of certificates.
	ReasonTLSSecretInvalid = "tls_secret_invalid"
)

// secretKind is one kind of secret a lane reads: the reasons its faults
// are recorded with, and what its value should hold.
type secretKind struct {
	unreadable, invalid string
	// noValue follows the secret's name when the secrets cache found no
	// value to use (secrets.ErrInvalid): what is wrong and the fix.
	noValue string
}

// The kinds of secret a lane reads.
var (
	urlSecretKind = secretKind{ReasonURLSecretUnreadable, ReasonURLSecretInvalid,
		" holds no text (empty or binary); store https://host/path, verbatim"}
	signingSecretKind = secretKind{ReasonSigningSecretUnreadable, ReasonSigningSecretInvalid,
		" holds no usable value (empty, binary, or a JSON array without a non-empty string); " + storeSigningKey}
	headerSecretKind = secretKind{ReasonHeaderSecretUnreadable, ReasonHeaderSecretInvalid,
		" holds no text (empty or binary); store the header's value, verbatim"}
	certificateSecretKind = secretKind{ReasonTLSSecretUnreadable, ReasonTLSSecretInvalid,
		" holds no text (empty or binary); store the PEM certificate chain, leaf first, and its unencrypted private key"}
	caSecretKind = secretKind{ReasonTLSSecretUnreadable, ReasonTLSSecretInvalid,
		" holds no text (empty or binary); store the CA certificates as PEM CERTIFICATE blocks"}
	oauth2SecretKind = secretKind{ReasonOAuth2Secret, ReasonOAuth2Secret,
		` holds no text (empty or binary); store {"clientId": "…", "clientSecret": "…"}`}
)

// storeSigningKey is the fix of a signing secret's value.
const storeSigningKey = "store whsec_ followed by the base64 of 24 to 64 random bytes (a JSON array of such values while rotating)"

// fault is the attempt's reason when reading the secret that q names
// (`secret "name"`, with what uses it) failed for good, matched by the
// error's type, never its text; nil for a failure that may pass (throttled,
// a 5xx, a timeout, the store unreachable).
func (k secretKind) fault(q string, err error) *refusedError {
	var api smithy.APIError
	var decrypt *smtypes.DecryptionFailure
	switch {
	case errors.Is(err, secrets.ErrInvalid):
		return &refusedError{reason: k.invalid, detail: q + k.noValue}
	case errors.Is(err, secrets.ErrNotSet):
		return &refusedError{reason: k.unreadable, detail: q + " does not exist, is scheduled for deletion or has no current value; create or restore it"}
	case errors.As(err, &decrypt):
		return &refusedError{reason: k.unreadable, detail: q + " cannot be decrypted with its KMS key (DecryptionFailure); check that the key is enabled and the lane's role may use it"}
	case errors.As(err, &api) && api.ErrorCode() == "AccessDeniedException":
		return &refusedError{reason: k.unreadable, detail: q + ": access denied (AccessDeniedException); let the lane's role read it (secretsmanager:GetSecretValue, and kms:Decrypt with a customer managed key)"}
	}
	return nil
}

// bad is the attempt's reason when the value of the secret q names is of
// no use: problem says what is wrong and the fix, never quoting the value.
func (k secretKind) bad(q, problem string) *refusedError {
	return &refusedError{reason: k.invalid, detail: q + ": " + problem}
}

// secretOf names a secret in a reason's text, with what reads it ("" for
// the lane's own signing and URL secrets, which their reasons name).
func secretOf(name, usedBy string) string {
	q := "secret " + strconv.Quote(name)
	if usedBy != "" {
		q += " (" + usedBy + ")"
	}
	return q
}
