package config

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/netguard"
)

// A destination's delivery deadline and event source mapping settings.
const (
	DefaultTimeoutSeconds = 10
	MinTimeoutSeconds     = 1
	MaxTimeoutSeconds     = 120

	DefaultMaxConcurrency = 5
	MinMaxConcurrency     = 2 // the SQS event source mapping's minimum
	MaxMaxConcurrency     = 1000

	DefaultBatchSize = 10
	MaxBatchSize     = 10

	MaxBatchWindowSeconds = 300
)

// Destination is one subscriber lane: queue, DLQ, deliver function, alarms.
type Destination struct {
	Name string `json:"name"`
	// URL is where deliveries are POSTed. Exactly one of URL and
	// URLSecretName is set.
	URL string `json:"url,omitempty"`
	// URLSecretName names a Secrets Manager secret whose whole value is
	// the URL, read at run time: for endpoints that carry a token in their
	// path or query, which would otherwise live in the configuration, the
	// template, the function's environment and the SSM index.
	URLSecretName string `json:"urlSecretName,omitempty"`
	// Type is TypeHTTPS (the default), TypeSQS, TypeEventBridge or
	// TypeLambda (target.go).
	Type string `json:"type,omitempty"`
	// Target is the ARN an sqs, eventbridge or lambda destination delivers
	// to, in any account; unset on an https destination.
	Target string `json:"target,omitempty"`
	Filter Filter `json:"filter,omitzero"`
	Retry  Retry  `json:"retry,omitzero"`
	// TimeoutSeconds is the whole-request deadline of one delivery. Default 10.
	TimeoutSeconds int `json:"timeoutSeconds,omitempty"`
	// MaxConcurrency caps concurrent deliver functions (event source mapping).
	MaxConcurrency int `json:"maxConcurrency,omitempty"`
	// BatchSize is the number of messages per invocation (1..10). Default 10.
	BatchSize int `json:"batchSize,omitempty"`
	// BatchWindowSeconds is the event source mapping's batching window.
	BatchWindowSeconds int `json:"batchWindowSeconds,omitempty"`
	// AllowPrivateNetworks lets deliveries reach private, loopback and
	// link-local addresses, and http:// URLs. For local development only.
	AllowPrivateNetworks bool `json:"allowPrivateNetworks,omitempty"`
	// SecretName names an existing signing secret; when empty the CDK stack
	// generates one.
	SecretName string `json:"secretName,omitempty"`
	// Headers are sent with every delivery, after Hookfan's own: a static
	// value from the config, or a secret's value read from Secrets Manager
	// (an Authorization or API-key header).
	Headers []Header `json:"headers,omitempty"`
	// Pause, when set, pauses the lane while the destination keeps failing
	// instead of spending every event's attempts (pause.go).
	Pause *Pause `json:"pause,omitempty"`
	// Egress is "public" (default) or "static": deliveries from the
	// stack's Elastic IPs (egress.go).
	Egress string `json:"egress,omitempty"`
	// AllowCIDRs lists the private ranges the destination may reach
	// besides public addresses (egress.go); metadata and link-local
	// ranges never.
	AllowCIDRs []string `json:"allowCidrs,omitempty"`
	// TLS, when set, presents a client certificate (mutual TLS; tls.go).
	TLS *TLS `json:"tls,omitempty"`
	// Auth authenticates the requests beyond their signature: auth.sigv4
	// (auth.go) or auth.oauth2 (oauth2.go).
	Auth *Auth `json:"auth,omitempty"`
	// Transform is a jq expression that reshapes each JSON body before it
	// is signed and sent (transform.go).
	Transform string `json:"transform,omitempty"`
	// Ordering, when set, makes the lane ordered: a FIFO lane delivering
	// each key's events in the order they were accepted (ordering.go).
	Ordering *Ordering `json:"ordering,omitempty"`
	// RateLimit, when set, paces the lane: a limit on requests a second
	// or a minute that holds across all its deliver functions
	// (ratelimit.go).
	RateLimit *RateLimit `json:"rateLimit,omitempty"`
	// Batch, when set, sends several events in one signed POST (one
	// attempt) instead of one POST each (batch.go). Off by default.
	Batch *Batch `json:"batch,omitempty"`
	// Alarms are the lane's own alarm settings (alarms.go).
	Alarms *DestinationAlarms `json:"alarms,omitempty"`
}

// Timeout is the whole-request deadline of one delivery.
func (d Destination) Timeout() time.Duration {
	if d.TimeoutSeconds == 0 {
		return DefaultTimeoutSeconds * time.Second
	}
	return time.Duration(d.TimeoutSeconds) * time.Second
}

// Concurrency is the event source mapping's MaximumConcurrency.
func (d Destination) Concurrency() int {
	if d.MaxConcurrency == 0 {
		return DefaultMaxConcurrency
	}
	return d.MaxConcurrency
}

// ReceiveBatch is the event source mapping's batch size: the messages
// one invocation receives (batch.maxEvents on a batched lane).
func (d Destination) ReceiveBatch() int {
	if d.Batch != nil && d.Batch.MaxEvents > 0 {
		return d.Batch.MaxEvents
	}
	if d.BatchSize == 0 {
		return DefaultBatchSize
	}
	return d.BatchSize
}

// BatchWindow is the event source mapping's maximum batching window
// (batch.windowSeconds on a batched lane).
func (d Destination) BatchWindow() time.Duration {
	if d.Batch != nil {
		return d.Batch.Window
	}
	return time.Duration(d.BatchWindowSeconds) * time.Second
}

func (d *Destination) validate(p *problems, at string, seen map[string]int, index int, sources map[string]int) {
	validName(p, at+".name", d.Name, "destination", seen, index)
	d.validateTarget(p, at)
	d.Filter.validate(p, at+".filter", sources)
	d.validateHeaders(p, at+".headers")
	d.validateTLS(p, at+".tls")
	d.validateAuth(p, at)
	d.validateOAuth2(p, at+".auth")
	d.Retry.validate(p, at+".retry")
	if d.TimeoutSeconds != 0 && (d.TimeoutSeconds < MinTimeoutSeconds || d.TimeoutSeconds > MaxTimeoutSeconds) {
		p.add(at+".timeoutSeconds", "%d is out of range; use %d to %d seconds (default %d)", d.TimeoutSeconds, MinTimeoutSeconds, MaxTimeoutSeconds, DefaultTimeoutSeconds)
	}
	if d.MaxConcurrency != 0 && (d.MaxConcurrency < MinMaxConcurrency || d.MaxConcurrency > MaxMaxConcurrency) {
		p.add(at+".maxConcurrency", "%d is out of range; the SQS event source mapping accepts %d to %d (default %d)", d.MaxConcurrency, MinMaxConcurrency, MaxMaxConcurrency, DefaultMaxConcurrency)
	}
	if d.BatchSize < 0 || d.BatchSize > MaxBatchSize {
		p.add(at+".batchSize", "%d is out of range; use 1 to %d (default %d)", d.BatchSize, MaxBatchSize, DefaultBatchSize)
	}
	if d.BatchWindowSeconds < 0 || d.BatchWindowSeconds > MaxBatchWindowSeconds {
		p.add(at+".batchWindowSeconds", "%d is out of range; use 0 to %d seconds", d.BatchWindowSeconds, MaxBatchWindowSeconds)
	}
	if d.SecretName != "" {
		validSecretName(p, at+".secretName", d.SecretName)
	}
	if d.Batch != nil {
		d.validateBatch(p, at)
	}
	d.validateQueueTiming(p, at)
	d.validateEgress(p, at)
	if d.Alarms != nil && d.Alarms.DLQ != nil {
		d.Alarms.DLQ.validate(p, at+".alarms.dlq")
	}
	if d.Pause != nil {
		d.Pause.validate(p, at+".pause", d)
	}
	if d.Ordering != nil {
		d.Ordering.validate(p, at+".ordering", d)
	}
	if d.RateLimit != nil {
		d.RateLimit.validate(p, at+".rateLimit")
		if d.Ordering != nil && d.Attempts()*d.ReceiveBatch() > PacedOrderedRoom {
			p.add(at+".rateLimit", "paces an ordered lane whose attempts (%d) × batchSize (%d) = %d leave too few receives for pacing holds; keep the product at most %d (fewer retries or a smaller batchSize)",
				d.Attempts(), d.ReceiveBatch(), d.Attempts()*d.ReceiveBatch(), PacedOrderedRoom)
		}
	}
}

func (d *Destination) validateURL(p *problems, at string) {
	switch {
	case d.URL != "" && d.URLSecretName != "":
		p.add(at, "both url and urlSecretName are set; keep one (urlSecretName when the URL carries a token in its path or query)")
		return
	case d.URLSecretName != "":
		validSecretName(p, at+".urlSecretName", d.URLSecretName)
		return
	}
	at += ".url"
	u, ok := parseAbsolute(d.URL)
	if !ok {
		p.add(at, "%q is not an absolute URL; use https://host/path (or urlSecretName, a secret holding it)", d.URL)
		return
	}
	subject := fmt.Sprintf("%q", d.URL)
	if u.User != nil {
		subject = fmt.Sprintf("%q", redactUser(u))
	}
	probs, _ := urlProblems(u, d.AllowPrivateNetworks, d.AllowedCIDRs(), subject)
	for _, msg := range probs {
		p.add(at, "%s", msg)
	}
	d.validateURLQuery(p, at, u)
}

func redactUser(u *url.URL) string {
	c := *u
	c.User = url.User("REDACTED")
	return c.String()
}

// urlProblems says what makes u unfit as a destination URL, each message
// starting with subject (the URL as the message may show it). Messages
// about the host name only the host. host is the address guard's refusal
// of the host (a *netguard.RefusedError) when it is one of them.
func urlProblems(u *url.URL, allowPrivate bool, allowed netguard.Allowed, subject string) (out []string, host error) {
	switch {
	case u.Scheme == "https":
	case u.Scheme == "http" && allowPrivate:
	case u.Scheme == "http":
		out = append(out, subject+" uses http; deliveries must use https (http is accepted only with allowPrivateNetworks, for local development)")
	default:
		// The scheme is not quoted: at run time the URL is a secret's, and
		// its messages show none of it but the host.
		out = append(out, subject+" has a scheme other than https; use https")
	}
	if u.User != nil {
		out = append(out, subject+" carries credentials; remove them from the URL (deliveries are authenticated by their signature; a subscriber's credential goes in a header with secretName)")
	}
	if u.Fragment != "" {
		out = append(out, subject+" has a fragment; remove the #part")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			out = append(out, fmt.Sprintf("%s has port %s; use a TCP port from 1 to 65535, or none (443 for https)", subject, p))
		}
	}
	if !allowPrivate {
		// The same classifier the delivery transport applies to every
		// resolved address at connect time.
		switch err := allowed.CheckHost(u.Hostname()); {
		case err != nil && len(allowed) > 0:
			out, host = append(out, fmt.Sprintf("host %v; use a public host or one inside the ranges allowCidrs lists", err)), err
		case err != nil:
			out, host = append(out, fmt.Sprintf("host %v; use a public host, or set allowPrivateNetworks for local development", err)), err
		}
	}
	return out, host
}

// parseAbsolute parses an absolute URL with a host, or returns false.
func parseAbsolute(raw string) (*url.URL, bool) {
	u, err := url.Parse(raw)
	if err != nil || raw == "" || u.Host == "" || u.Opaque != "" {
		return nil, false
	}
	return u, true
}

// CheckURL reports why raw, a destination URL read from its secret at run
// time (urlSecretName), cannot be delivered to: the checks validation
// applies to a configured url. The error never quotes the URL, which
// carries a token: only its host.
func CheckURL(raw string, allowPrivateNetworks bool) error {
	return checkURL(raw, allowPrivateNetworks, nil)
}

// CheckURL is the package's CheckURL under the destination's own rules:
// allowPrivateNetworks and allowCidrs, and on a static lane the ports its
// security group opens (a *PortError). A host the address guard refuses
// is reported as a *netguard.RefusedError (errors.As finds it).
func (d Destination) CheckURL(raw string) error {
	if err := checkURL(raw, d.AllowPrivateNetworks, d.AllowedCIDRs()); err != nil {
		return err
	}
	return d.checkEgressPort(raw)
}

func checkURL(raw string, allowPrivateNetworks bool, allowed netguard.Allowed) error {
	u, ok := parseAbsolute(raw)
	if !ok {
		return errors.New("the URL is not an absolute URL; store https://host/path, verbatim (no quotes, no trailing newline)")
	}
	if probs, host := urlProblems(u, allowPrivateNetworks, allowed, "the URL"); len(probs) > 0 {
		return &urlError{msg: strings.Join(probs, "; "), host: host}
	}
	return nil
}

// urlError is why a URL read at run time cannot be delivered to; it wraps
// the address guard's refusal of its host when that is one of the reasons.
type urlError struct {
	msg  string
	host error
}

func (e *urlError) Error() string { return e.msg }
func (e *urlError) Unwrap() error { return e.host }

// URLHost is the scheme and host of a destination's configured URL
// (https://host[:port]), what the stack's index and the logs show of it:
// never the path or the query, which may carry a token. It is "" for a
// destination whose URL is read from a secret.
func (d Destination) URLHost() string {
	u, ok := parseAbsolute(d.URL)
	if !ok {
		return ""
	}
	return (&url.URL{Scheme: u.Scheme, Host: u.Host}).String()
}
