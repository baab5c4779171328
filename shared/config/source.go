package config

import (
	"slices"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/provider"
)

// A source's body limits.
const (
	// MaxSNSMessageBytes is SNS's limit for one message, body and attributes together.
	MaxSNSMessageBytes = 256 * 1024
	// AttributeReserveBytes is kept free for the message attributes ingest adds.
	AttributeReserveBytes = 2 * 1024
	// MaxBodyBytesCeiling is the default body limit of a source and the
	// largest body that travels inside one SNS message. A source may accept
	// more (up to API.MaxBodyBytes): such bodies travel through S3.
	MaxBodyBytesCeiling = MaxSNSMessageBytes - AttributeReserveBytes
)

// A source's clock-skew tolerance, in seconds.
const (
	DefaultToleranceSeconds = int(provider.DefaultTolerance / time.Second)
	MaxToleranceSeconds     = 3600
)

// Source is one webhook sender with its own URL, /webhooks/{name}.
type Source struct {
	Name   string `json:"name"`
	Verify Verify `json:"verify"`
	// MaxBodyBytes caps the request body; bigger bodies get 413. Default
	// MaxBodyBytesCeiling (what one SNS message carries); up to
	// API.MaxBodyBytes, a body that does not fit one SNS message is stored in
	// S3 and published as a reference.
	MaxBodyBytes int `json:"maxBodyBytes,omitempty"`
	// Event says where the generic kinds (hmac, token) find the event id and
	// type. The provider kinds have fixed places and reject this block.
	Event EventFields `json:"event,omitzero"`
	// Limits are what the API enforces on this source's route before ingest
	// runs: throttling, the alarm on client errors, the WAF allow-list.
	Limits SourceLimits `json:"limits,omitzero"`
	// ReplayProtection remembers the source's verified requests so that a
	// copy is answered as the original: on by default for the kinds that
	// sign no timestamp.
	ReplayProtection ReplayProtection `json:"replayProtection,omitzero"`
	// Reconcile, when set, reconciles the source with its provider's API
	// on a schedule (reconcile.go; shared/reconcile).
	Reconcile *Reconcile `json:"reconcile,omitempty"`
}

// Verify says how a source's requests are authenticated.
type Verify struct {
	// Kind names a registered kind (shared/provider).
	Kind string `json:"kind"`
	// SecretName is the Secrets Manager name (or ARN) holding the secret: a
	// string, or a JSON array of strings while a secret rotates.
	SecretName string `json:"secretName"`
	// ToleranceSeconds bounds the clock skew accepted by timestamped kinds
	// (stripe, slack, standard-webhooks). Default 300.
	ToleranceSeconds int `json:"toleranceSeconds,omitempty"`
	// Header carries the signature (hmac) or the token (token).
	Header string `json:"header,omitempty"`
	// Algorithm is sha1, sha256 or sha512 (hmac only; default sha256).
	Algorithm string `json:"algorithm,omitempty"`
	// Encoding is hex or base64 (hmac only; default hex).
	Encoding string `json:"encoding,omitempty"`
	// Prefix precedes the encoded digest in the header, such as "sha256=" (hmac only).
	Prefix string `json:"prefix,omitempty"`
}

// EventFields locates a generic source's event id and type. Header and
// field are exclusive; field is a dot-separated path into a JSON body. With
// neither, the id is the SHA-256 of the body and the type is "webhook".
type EventFields struct {
	IDHeader   string `json:"idHeader,omitempty"`
	IDField    string `json:"idField,omitempty"`
	TypeHeader string `json:"typeHeader,omitempty"`
	TypeField  string `json:"typeField,omitempty"`
}

// Tolerance is the accepted clock skew for timestamped kinds.
func (v Verify) Tolerance() time.Duration {
	if v.ToleranceSeconds == 0 {
		return provider.DefaultTolerance
	}
	return time.Duration(v.ToleranceSeconds) * time.Second
}

// Params is what this verify block says to its kind.
func (v Verify) Params() provider.Params {
	return provider.Params{Tolerance: v.Tolerance(), Header: v.Header, Algorithm: v.Algorithm, Encoding: v.Encoding, Prefix: v.Prefix}
}

// Params is what this source's configuration says to its kind.
func (s Source) Params() provider.Params {
	p := s.Verify.Params()
	p.Event = s.Event.Places()
	return p
}

// Places is the event block as the kinds read it.
func (e EventFields) Places() provider.Places {
	return provider.Places{IDHeader: e.IDHeader, IDField: e.IDField, TypeHeader: e.TypeHeader, TypeField: e.TypeField}
}

// BodyLimit is the largest body this source accepts.
func (s Source) BodyLimit() int {
	if s.MaxBodyBytes == 0 {
		return MaxBodyBytesCeiling
	}
	return s.MaxBodyBytes
}

func (s *Source) validate(p *problems, at string, seen map[string]int, index int, api API) {
	validName(p, at+".name", s.Name, "source", seen, index)
	v := &s.Verify
	kind := at + ".verify"
	k, known := provider.Lookup(v.Kind)
	if !known {
		p.add(kind+".kind", "unknown verification kind %q; use one of %s", v.Kind, strings.Join(provider.Names(nil), ", "))
	}
	if v.SecretName == "" {
		p.add(kind+".secretName", "missing; every source needs the name of the Secrets Manager secret that holds its signing secret or token")
	} else {
		validSecretName(p, kind+".secretName", v.SecretName)
	}
	switch {
	case v.ToleranceSeconds != 0 && !k.Timestamped:
		p.add(kind+".toleranceSeconds", "set for kind %q, which carries no timestamp; remove it (it applies to %s)", v.Kind, kindList(func(k provider.Kind) bool { return k.Timestamped }))
	case v.ToleranceSeconds < 0 || v.ToleranceSeconds > MaxToleranceSeconds:
		p.add(kind+".toleranceSeconds", "%d is out of range; use 1 to %d seconds (default %d)", v.ToleranceSeconds, MaxToleranceSeconds, DefaultToleranceSeconds)
	}
	named := func(k provider.Kind) bool { return k.HeaderCarries != "" }
	switch {
	case named(k) && v.Header == "":
		p.add(kind+".header", "missing; kind %q needs the name of the request header that carries the %s", v.Kind, k.HeaderCarries)
	case named(k) && !isHeaderName(v.Header):
		p.add(kind+".header", "%q is not a valid HTTP header name", v.Header)
	case !named(k) && v.Header != "":
		p.add(kind+".header", "set for kind %q, whose header is fixed; remove it (it applies to %s)", v.Kind, kindList(named))
	}
	setting := func(field, value string, takes func(provider.Kind) bool, allowed []string) {
		switch {
		case value == "":
		case !takes(k):
			p.add(kind+"."+field, "set for kind %q; remove it (it applies to %s only)", v.Kind, kindList(takes))
		case len(allowed) > 0 && !slices.Contains(allowed, value):
			p.add(kind+"."+field, "%q is not supported; use one of %s", value, strings.Join(allowed, ", "))
		}
	}
	setting("algorithm", v.Algorithm, func(k provider.Kind) bool { return len(k.Algorithms) > 0 }, k.Algorithms)
	setting("encoding", v.Encoding, func(k provider.Kind) bool { return len(k.Encodings) > 0 }, k.Encodings)
	setting("prefix", v.Prefix, func(k provider.Kind) bool { return k.Prefix }, nil)
	if ceiling := api.MaxBodyBytes(); s.MaxBodyBytes < 0 || s.MaxBodyBytes > ceiling {
		p.add(at+".maxBodyBytes", "%d is out of range; use 1 to %d (the largest body an API Gateway %s API hands to Lambda within its 6 MB payload; bodies over %d travel through S3), or omit it for %d (one SNS message)",
			s.MaxBodyBytes, ceiling, api.Kind(), MaxBodyBytesCeiling, MaxBodyBytesCeiling)
	}
	s.Event.validate(p, at+".event", v.Kind, k.Places)
	s.ReplayProtection.validate(p, at+".replayProtection", v.Kind, k, known)
	if s.Reconcile != nil {
		s.Reconcile.validate(p, at+".reconcile", v.Kind, known)
	}
}

// kindList names the kinds for which keep is true, for a message: "a, b
// and c".
func kindList(keep func(provider.Kind) bool) string {
	names := provider.Names(keep)
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

func (e *EventFields) validate(p *problems, at, kind string, places bool) {
	if *e == (EventFields{}) {
		return
	}
	if !places {
		p.add(at, "set for kind %q, whose event id and type come from the provider's own headers or body; remove it (it applies to %s)", kind, kindList(func(k provider.Kind) bool { return k.Places }))
		return
	}
	pair := func(name, header, field string) {
		if header != "" && field != "" {
			p.add(at, "both %sHeader and %sField are set; keep one", name, name)
		}
		if header != "" && !isHeaderName(header) {
			p.add(at+"."+name+"Header", "%q is not a valid HTTP header name", header)
		}
		if field != "" && !isFieldPath(field) {
			p.add(at+"."+name+"Field", "%q is not a valid JSON field path; use dot-separated names such as \"data.id\"", field)
		}
	}
	pair("id", e.IDHeader, e.IDField)
	pair("type", e.TypeHeader, e.TypeField)
}
