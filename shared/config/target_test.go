package config

import (
	"strings"
	"testing"
)

const targetSources = `"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}]`

// TestTargetsValid: each AWS type takes its ARN, in any account and
// region, and reads back with its type; https stays the default.
func TestTargetsValid(t *testing.T) {
	c, err := Parse([]byte(`{` + targetSources + `, "destinations": [
	  {"name": "web", "url": "https://hooks.example.com/h"},
	  {"name": "queue", "type": "sqs", "target": "arn:aws:sqs:eu-west-1:210987654321:orders"},
	  {"name": "fifo", "type": "sqs", "target": "arn:aws:sqs:us-east-1:123456789012:orders.fifo"},
	  {"name": "bus", "type": "eventbridge", "target": "arn:aws:events:us-east-1:210987654321:event-bus/default", "timeoutSeconds": 5},
	  {"name": "fn", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:orders-handler:live",
	   "retry": {"schedule": ["10s", "1m"]}, "filter": {"types": ["payment_intent.succeeded"]}},
	  {"name": "fnv", "type": "lambda", "target": "arn:aws-cn:lambda:cn-north-1:123456789012:function:orders:$LATEST"}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"web": TypeHTTPS, "queue": TypeSQS, "fifo": TypeSQS, "bus": TypeEventBridge, "fn": TypeLambda, "fnv": TypeLambda}
	for name, typ := range want {
		d, _ := c.Destination(name)
		if d.TargetType() != typ || d.AWSTarget() == (typ == TypeHTTPS) || d.Signs() != (typ == TypeHTTPS) {
			t.Errorf("%s: type %q, AWSTarget %v, Signs %v", name, d.TargetType(), d.AWSTarget(), d.Signs())
		}
		back, err := DecodeDestination("HOOKFAN_DESTINATION", EncodeDestination(d))
		if err != nil || back.Type != d.Type || back.Target != d.Target {
			t.Errorf("%s: round trip %+v, %v", name, back, err)
		}
	}
	q, _ := c.Destination("queue")
	if a := q.TargetARN(); a.Account != "210987654321" || a.Region != "eu-west-1" || a.Resource != "orders" || q.FIFOTarget() {
		t.Errorf("queue ARN %+v, fifo %v", a, q.FIFOTarget())
	}
	if f, _ := c.Destination("fifo"); !f.FIFOTarget() {
		t.Error("fifo: FIFOTarget false")
	}
}

// TestTargetsInvalid: every problem of a target is reported at once, each
// naming the field, the value and the fix.
func TestTargetsInvalid(t *testing.T) {
	tests := []struct {
		name, dest string
		want       []string
	}{
		{"unknown type", `{"name": "d", "type": "kafka", "target": "arn:aws:kafka:us-east-1:123456789012:x"}`,
			[]string{`destinations[0].type: "kafka" is not a destination type; use https (the default), sqs, eventbridge or lambda`}},
		{"missing target", `{"name": "d", "type": "sqs"}`,
			[]string{"destinations[0].target: missing; a sqs destination delivers to the ARN target names, such as arn:aws:sqs:us-east-1:123456789012:orders"}},
		{"not an ARN", `{"name": "d", "type": "lambda", "target": "orders-handler"}`,
			[]string{`destinations[0].target: "orders-handler" is not an ARN; want arn:aws:<service>:<region>:<account>:<resource>; for example arn:aws:lambda:`}},
		{"wrong service", `{"name": "d", "type": "sqs", "target": "arn:aws:sns:us-east-1:123456789012:orders"}`,
			[]string{`destinations[0].target: "arn:aws:sns:us-east-1:123456789012:orders" is not the ARN of a sqs target; want arn:aws:sqs:`}},
		{"bus without event-bus/", `{"name": "d", "type": "eventbridge", "target": "arn:aws:events:us-east-1:123456789012:rule/orders"}`,
			[]string{`is not the ARN of a eventbridge target; want arn:aws:events:us-east-1:123456789012:event-bus/orders`}},
		{"bad account", `{"name": "d", "type": "eventbridge", "target": "arn:aws:events:us-east-1:1234:event-bus/default"}`,
			[]string{`has account "1234"; want the 12 digits of the account that owns the target`}},
		{"bad region", `{"name": "d", "type": "sqs", "target": "arn:aws:sqs:*:123456789012:orders"}`,
			[]string{`has region "*"; name the region the target is in`}},
		{"queue name too long", `{"name": "d", "type": "sqs", "target": "arn:aws:sqs:us-east-1:123456789012:` + strings.Repeat("q", 81) + `"}`,
			[]string{"is not the ARN of a sqs target"}},
		{"wildcard function", `{"name": "d", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:*"}`,
			[]string{"is not the ARN of a lambda target"}},
		{"target on https", `{"name": "d", "url": "https://h.example.com/", "target": "arn:aws:sqs:us-east-1:123456789012:orders"}`,
			[]string{"destinations[0].target: is set on an https destination, which delivers to url; remove target, or set type to sqs, eventbridge or lambda"}},
		{"what an sqs target cannot do", `{"name": "d", "type": "sqs", "target": "arn:aws:sqs:us-east-1:123456789012:orders",
		   "url": "https://h.example.com/", "headers": [{"name": "X-Team", "value": "a"}], "allowPrivateNetworks": true, "secretName": "hookfan/x"}`,
			[]string{
				"destinations[0].url: is set on a sqs destination, which delivers to target (an ARN), not a URL; remove it",
				"destinations[0].headers: is set on a sqs destination, which sends no HTTP request",
				"destinations[0].allowPrivateNetworks: is set on a sqs destination, which reaches its target through the AWS API",
				"destinations[0].secretName: is set on a sqs destination, which is not signed",
			}},
		{"tls and auth on an eventbridge target", `{"name": "d", "type": "eventbridge", "target": "arn:aws:events:us-east-1:123456789012:event-bus/default",
		   "tls": {"clientCertificateSecret": "hookfan/cert"}, "auth": {"sigv4": {"service": "execute-api", "region": "us-east-1"}}}`,
			[]string{
				"destinations[0].tls: is set on a eventbridge destination, which makes no TLS connection of its own",
				"destinations[0].auth: is set on a eventbridge destination, which is authorized by the target's own policy",
			}},
		{"egress and allowCidrs on a lambda target", `{"name": "d", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:f",
		   "egress": "static", "allowCidrs": ["10.20.0.0/16"]}`,
			[]string{
				"destinations[0].egress: is set on a lambda destination, which calls the AWS API",
				"destinations[0].allowCidrs: is set on a lambda destination, which reaches its target through the AWS API",
			}},
		{"url secret on lambda", `{"name": "d", "type": "lambda", "target": "arn:aws:lambda:us-east-1:123456789012:function:f", "urlSecretName": "hookfan/u"}`,
			[]string{"destinations[0].urlSecretName: is set on a lambda destination, which delivers to target (an ARN), not a URL; remove it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(`{` + targetSources + `, "destinations": [` + tt.dest + `]}`))
			if err == nil {
				t.Fatal("accepted")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

func FuzzParseARN(f *testing.F) {
	for _, s := range []string{"arn:aws:sqs:us-east-1:123456789012:q", "arn:aws:events:us-east-1:123456789012:event-bus/x", "arn::::::", "arn:aws", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseARN(s)
		if err == nil && "arn:"+a.Partition+":"+a.Service+":"+a.Region+":"+a.Account+":"+a.Resource != s {
			t.Errorf("ParseARN(%q) = %+v does not read back", s, a)
		}
	})
}
