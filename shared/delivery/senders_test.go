package delivery

import (
	"context"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/delivery/sender/sqstarget"
	"github.com/hookfan/hookfan/shared/secrets"
)

// TestEverySenderIsRegistered: each AWS target kind of config's table has
// a sender here, which sends on the kind's API (MemoryTargets has them
// all), names the client it lacks without one, and needs no signing
// secret; the registry holds nothing but https and the kinds.
func TestEverySenderIsRegistered(t *testing.T) {
	kinds := config.TargetKinds()
	for _, k := range kinds {
		if _, ok := senders[k.Type]; !ok {
			t.Errorf("target kind %q has no sender (shared/delivery senders)", k.Type)
			continue
		}
		arn, _, _ := strings.Cut(k.Example, " ")
		d := config.Destination{Name: "orders", Type: k.Type, Target: arn, TimeoutSeconds: 2}
		f := &MemoryTargets{}
		s, err := newSender(d, senderParts{target: f})
		if err != nil {
			t.Errorf("%s: %v", k.Type, err)
			continue
		}
		if err := s.Prepare(context.Background()); err != nil {
			t.Errorf("%s: Prepare = %v, want nothing to read", k.Type, err)
		}
		if r := s.Send(context.Background(), sender.Delivery{ID: "evt_1", Source: "stripe", Type: "t", Body: []byte(`{}`), Timeout: d.Timeout()}); r.Verdict() != sender.Delivered {
			t.Errorf("%s: Send = %+v", k.Type, r)
		}
		if n := len(f.Sent) + len(f.Put) + len(f.Invoked); n != 1 {
			t.Errorf("%s: %d calls, want 1", k.Type, n)
		}
		if _, err := newSender(d, senderParts{}); err == nil || !strings.Contains(err.Error(), "client was given") {
			t.Errorf("%s without a client: %v", k.Type, err)
		}
	}
	for typ := range senders {
		if _, ok := config.LookupTargetKind(typ); !ok && typ != config.TypeHTTPS {
			t.Errorf("sender for %q, which is neither https nor a target kind", typ)
		}
	}
}

// TestAssembleBuildsTheLanesOwnSender: Assemble builds the sender of the
// lane's kind alone, with only the options its destination sets: an https
// lane, handed an SDK configuration, builds no target client and no SigV4
// signer without auth.sigv4; an AWS target's lane builds its kind's client
// on that configuration and reads no signing secret.
func TestAssembleBuildsTheLanesOwnSender(t *testing.T) {
	cfg := contractConfig(t, `{"name": "orders", "url": "https://orders.example.com/hooks"}`)
	env := LaneEnv(cfg, cfg.Destinations[0], LaneResources{Table: "records", QueueURL: testQueueURL, QueueARN: "arn:aws:sqs:us-east-1:1:queue", SecretID: "orders-secret"})
	c := Clients{Store: dedupe.NewMemory(), SQS: sqs.New(sqs.Options{Region: "us-east-1"}), Secrets: secrets.NewCache(secretsmanager.New(secretsmanager.Options{Region: "us-east-1"})),
		Metrics: &captureSink{}, AWS: &aws.Config{Region: "us-east-1"}}
	h, err := Assemble(env, c)
	if err != nil {
		t.Fatal(err)
	}
	if s, ok := h.sender.(*https.Sender); !ok || s.SignsSigV4() {
		t.Errorf("an https lane's sender is a %T (signs with SigV4: %v), want an *https.Sender that does not", h.sender, ok && s.SignsSigV4())
	}
	d := config.Destination{Name: "q", Type: config.TypeSQS, Target: "arn:aws:sqs:eu-west-1:210987654321:orders"}
	tenv := LaneEnv(&config.Config{}, d, LaneResources{Table: "records", QueueURL: testQueueURL, QueueARN: "arn:aws:sqs:us-east-1:1:queue"})
	c.Secrets = nil
	h, err = Assemble(tenv, c)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.sender.(sqstarget.Sender); !ok {
		t.Errorf("an sqs lane's sender is a %T, want an sqstarget.Sender", h.sender)
	}
}

// TestTargetClientInItsRegion: an AWS target's client is built on the
// lane's SDK configuration in the target's region (a queue in eu-west-1
// from a lane in us-east-1), and a given client of the kind's API is used
// instead of building one.
func TestTargetClientInItsRegion(t *testing.T) {
	var built []string
	build := target(func(cfg aws.Config) sqstarget.API {
		built = append(built, cfg.Region)
		return &MemoryTargets{}
	}, sqstarget.New)
	d := config.Destination{Name: "q", Type: config.TypeSQS, Target: "arn:aws:sqs:eu-west-1:210987654321:orders"}
	if _, err := build(d, senderParts{aws: &aws.Config{Region: "us-east-1"}}); err != nil || len(built) != 1 || built[0] != "eu-west-1" {
		t.Errorf("built %v, %v; want one client in eu-west-1", built, err)
	}
	if _, err := build(d, senderParts{aws: &aws.Config{Region: "us-east-1"}, target: &MemoryTargets{}}); err != nil || len(built) != 1 {
		t.Errorf("built %v, %v; want the given client used", built, err)
	}
}
