package config

import (
	"fmt"
	"slices"
	"strings"
)

// Destination types: where a lane's deliveries go (docs/configuration.md#aws-targets).
const (
	// TypeHTTPS POSTs each event, signed per Standard Webhooks, to url (the default).
	TypeHTTPS = "https"
	// TypeSQS sends each event as one message to the queue target names.
	TypeSQS = "sqs"
	// TypeEventBridge puts each event on the event bus target names.
	TypeEventBridge = "eventbridge"
	// TypeLambda invokes the function (or alias, or version) target names,
	// synchronously, with the event in a JSON envelope.
	TypeLambda = "lambda"
)

// TargetType is the destination's type, TypeHTTPS when unset.
func (d Destination) TargetType() string {
	if d.Type == "" {
		return TypeHTTPS
	}
	return d.Type
}

// TargetKind is one kind of AWS target: a destination type whose lane
// makes each attempt with one AWS API call. The table of kinds
// (targetKinds) is what every consumer reads: validation (the ARN's
// shape), the stack (the IAM action its lane role is granted), the deliver
// function's senders (shared/delivery, one package per kind), the local
// stack, the cost model and the docs. It is plain data, light enough for
// every function's cold start.
type TargetKind struct {
	// Type is the destination's type.
	Type string
	// Service is the ARN's service; Resource reports whether the ARN's
	// resource names a target of the kind; Example is an ARN of one, for
	// errors.
	Service  string
	Resource func(resource string) bool
	Example  string
	// Action is the one IAM action the lane's role is granted, on the
	// target's ARN alone.
	Action string
	// Call is the API call each attempt makes, as the docs name it.
	Call string
}

// targetKinds is the table of AWS target kinds, in the order the docs
// present them (read-only). A new kind is a line here and its sender's
// package in shared/delivery/sender, registered in shared/delivery.
var targetKinds = []TargetKind{
	{TypeSQS, "sqs", sqsQueueName, "arn:aws:sqs:us-east-1:123456789012:orders (a queue; .fifo for a FIFO queue)", "sqs:SendMessage", "SendMessage"},
	{TypeEventBridge, "events", eventBusResource, "arn:aws:events:us-east-1:123456789012:event-bus/orders (or event-bus/default)", "events:PutEvents", "PutEvents"},
	{TypeLambda, "lambda", lambdaResource, "arn:aws:lambda:us-east-1:123456789012:function:orders (optionally :alias or :version)", "lambda:InvokeFunction", "Invoke"},
}

// TargetKinds returns every AWS target kind, in the order the docs
// present them.
func TargetKinds() []TargetKind { return slices.Clone(targetKinds) }

// LookupTargetKind returns the AWS target kind of a destination type.
func LookupTargetKind(typ string) (TargetKind, bool) {
	for _, k := range targetKinds {
		if k.Type == typ {
			return k, true
		}
	}
	return TargetKind{}, false
}

// AWSTarget reports whether the destination delivers through an AWS API
// (an AWS target kind) rather than by an HTTP POST.
func (d Destination) AWSTarget() bool {
	_, ok := LookupTargetKind(d.Type)
	return ok
}

// Signs reports whether the lane signs its deliveries (and so has a
// signing secret): only https destinations do. An AWS target is reached
// with the lane role's credentials, and its own resource policy names
// who may send to it.
func (d Destination) Signs() bool { return !d.AWSTarget() }

// ARN is the parts of an Amazon Resource Name Hookfan reads.
type ARN struct {
	Partition, Service, Region, Account string
	// Resource is everything after the account: "orders.fifo",
	// "event-bus/default", "function:name:alias".
	Resource string
}

// The shape of each part of a target ARN, checked with loops: this
// package's initialisation runs at every cold start (no regexp at init).

// word reports whether s is minLen to maxLen bytes of letters, digits and
// the bytes of extra.
func word(s string, minLen, maxLen int, extra string) bool {
	if len(s) < minLen || len(s) > maxLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return true
}

func digits(s string, minLen, maxLen int) bool {
	return word(s, minLen, maxLen, "") && strings.Trim(s, "0123456789") == ""
}

func lowerWord(s string) bool { return s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyz") == "" }

// arnPartition: aws, aws-cn, aws-us-gov, …
func arnPartition(s string) bool {
	first, rest, _ := strings.Cut(s, "-")
	if first != "aws" {
		return false
	}
	for rest != "" {
		var part string
		part, rest, _ = strings.Cut(rest, "-")
		if !lowerWord(part) {
			return false
		}
	}
	return true
}

// arnRegion: us-east-1, ap-southeast-2, us-gov-west-1, …
func arnRegion(s string) bool {
	parts := strings.Split(s, "-")
	if len(parts) < 3 || len(parts[0]) != 2 || !lowerWord(parts[0]) || !digits(parts[len(parts)-1], 1, 2) {
		return false
	}
	for _, p := range parts[1 : len(parts)-1] {
		if !lowerWord(p) {
			return false
		}
	}
	return true
}

func arnAccount(s string) bool { return len(s) == 12 && digits(s, 12, 12) }

// sqsQueueName: 1 to 80 letters, digits, - and _, .fifo included.
func sqsQueueName(s string) bool {
	return word(strings.TrimSuffix(s, ".fifo"), 1, 75, "-_") || word(s, 1, 80, "-_")
}

// eventBusResource: event-bus/ and the bus's name.
func eventBusResource(r string) bool {
	name, ok := strings.CutPrefix(r, "event-bus/")
	return ok && word(name, 1, 256, "._/-")
}

// lambdaResource: function:<name>, then optionally :$LATEST, a version
// number or an alias.
func lambdaResource(r string) bool {
	parts := strings.Split(r, ":")
	if len(parts) < 2 || len(parts) > 3 || parts[0] != "function" || !word(parts[1], 1, 64, "-_") {
		return false
	}
	return len(parts) == 2 || parts[2] == "$LATEST" || word(parts[2], 1, 128, "-_")
}

// ParseARN splits an ARN into its parts; it checks the partition, region
// and account shapes, not the resource's.
func ParseARN(s string) (ARN, error) {
	parts := strings.SplitN(s, ":", 6)
	if len(parts) != 6 || parts[0] != "arn" {
		return ARN{}, fmt.Errorf("%q is not an ARN; want arn:aws:<service>:<region>:<account>:<resource>", s)
	}
	a := ARN{Partition: parts[1], Service: parts[2], Region: parts[3], Account: parts[4], Resource: parts[5]}
	switch {
	case !arnPartition(a.Partition):
		return a, fmt.Errorf("%q has partition %q; want aws (or aws-cn, aws-us-gov, …)", s, a.Partition)
	case !arnRegion(a.Region):
		return a, fmt.Errorf("%q has region %q; name the region the target is in, such as us-east-1", s, a.Region)
	case !arnAccount(a.Account):
		return a, fmt.Errorf("%q has account %q; want the 12 digits of the account that owns the target", s, a.Account)
	}
	return a, nil
}

// TargetARN is the destination's target, parsed; the zero ARN for an
// https destination or a target that does not parse (validation refuses
// those).
func (d Destination) TargetARN() ARN {
	a, err := ParseARN(d.Target)
	if err != nil {
		return ARN{}
	}
	return a
}

// FIFOTarget reports whether an sqs destination's queue is a FIFO queue
// (its name ends in .fifo).
func (d Destination) FIFOTarget() bool {
	return d.Type == TypeSQS && strings.HasSuffix(d.Target, ".fifo")
}

// validateTarget checks the destination's type and where it delivers:
// an https destination's url, an AWS target's ARN, and that an AWS target
// sets none of the options only an HTTP POST has.
func (d *Destination) validateTarget(p *problems, at string) {
	typ := d.TargetType()
	if typ == TypeHTTPS {
		if d.Target != "" {
			p.add(at+".target", "is set on an https destination, which delivers to url; remove target, or set type to %s", orList(targetTypes()))
		}
		d.validateURL(p, at)
		return
	}
	shape, ok := LookupTargetKind(typ)
	if !ok {
		p.add(at+".type", "%q is not a destination type; use https (the default), %s", d.Type, orList(targetTypes()))
		return
	}
	switch a, err := ParseARN(d.Target); {
	case d.Target == "":
		p.add(at+".target", "missing; a %s destination delivers to the ARN target names, such as %s", typ, shape.Example)
	case err != nil:
		p.add(at+".target", "%v; for example %s", err, shape.Example)
	case a.Service != shape.Service || !shape.Resource(a.Resource):
		p.add(at+".target", "%q is not the ARN of a %s target; want %s", d.Target, typ, shape.Example)
	}
	// What only an HTTP POST has. Each is refused rather than ignored: a
	// setting that does nothing would look like it does something.
	refuse := func(field, why string) {
		p.add(at+"."+field, "is set on a %s destination, which %s; remove it", typ, why)
	}
	if d.URL != "" {
		refuse("url", "delivers to target (an ARN), not a URL")
	}
	if d.URLSecretName != "" {
		refuse("urlSecretName", "delivers to target (an ARN), not a URL")
	}
	if len(d.Headers) > 0 {
		refuse("headers", "sends no HTTP request (what travels with the event: docs/configuration.md#aws-targets)")
	}
	if d.AllowPrivateNetworks {
		refuse("allowPrivateNetworks", "reaches its target through the AWS API, not by an address the guard checks")
	}
	if d.SecretName != "" {
		refuse("secretName", "is not signed: the target's own policy names the lane's role as the one sender (docs/configuration.md#aws-targets)")
	}
	if d.TLS != nil {
		refuse("tls", "makes no TLS connection of its own to present a certificate on (the AWS API authenticates the lane's role)")
	}
	if d.Auth != nil {
		refuse("auth", "is authorized by the target's own policy naming the lane's role, not by a token or a signature of its own")
	}
	if d.Egress != "" && d.Egress != EgressPublic {
		refuse("egress", "calls the AWS API, which authorizes the lane's role, not an address a receiver allow-lists")
	}
	if len(d.AllowCIDRs) > 0 {
		refuse("allowCidrs", "reaches its target through the AWS API, not by an address the guard checks")
	}
}

// targetTypes are the AWS target kinds' types.
func targetTypes() []string {
	out := make([]string, len(targetKinds))
	for i, k := range targetKinds {
		out[i] = k.Type
	}
	return out
}

// orList renders names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
