package delivery

import (
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/delivery/sender"
	"github.com/hookfan/hookfan/shared/delivery/sender/eventbridgetarget"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
	"github.com/hookfan/hookfan/shared/delivery/sender/sqstarget"
)

// senders builds each kind of destination's sender, by the destination's
// type: https, and each AWS target kind of config.TargetKinds with the
// package that sends to it. A new target kind is its package and one line
// here, beside its line in config's targetKinds (TestEverySenderIsRegistered).
var senders = map[string]func(d config.Destination, p senderParts) (sender.Sender, error){
	config.TypeHTTPS:       newHTTPS,
	config.TypeSQS:         target(sqstarget.NewClient, sqstarget.New),
	config.TypeEventBridge: target(eventbridgetarget.NewClient, eventbridgetarget.New),
	config.TypeLambda:      target(lambdatarget.NewClient, lambdatarget.New),
}

// senderParts are what a lane's sender may be built from; each kind reads
// only what it uses, and builds only its own clients.
type senderParts struct {
	// The signing secret and the reader of the destination's other
	// secrets (https).
	secretID      string
	secrets       https.SecretSource
	headerSecrets https.HeaderSecrets
	// client and clientAuth, when set, are the https sender's own (tests);
	// otherwise it builds them (https.NewClient, https.NewClientAuth).
	client     https.Doer
	clientAuth *https.ClientAuth
	// credentials sign an https destination's requests with auth.sigv4.
	credentials aws.CredentialsProvider
	tracing     bool
	// aws is the SDK configuration an AWS target's client is built on, in
	// its target's region; target, when it has the kind's API, is called
	// instead (the local stack's Lambda RIE, tests' fakes).
	aws    *aws.Config
	target any
	now    func() time.Time
}

// newSender builds d's sender for its type.
func newSender(d config.Destination, p senderParts) (sender.Sender, error) {
	build, ok := senders[d.TargetType()]
	if !ok {
		return nil, fmt.Errorf("delivery: destination %s: no sender for type %q", d.Name, d.TargetType())
	}
	return build(d, p)
}

// newHTTPS is an https destination's sender, on a guarded client of its
// own (with its client certificate and OAuth 2.0 token when it sets them).
func newHTTPS(d config.Destination, p senderParts) (sender.Sender, error) {
	client, auth := p.client, p.clientAuth
	if client == nil {
		c := https.NewClient(d)
		a, err := https.NewClientAuth(d, p.headerSecrets, c, p.now)
		if err != nil {
			return nil, fmt.Errorf("deliver %s: %w", d.Name, err)
		}
		client, auth = c, a
	}
	s, err := https.New(https.Options{Destination: d, SecretID: p.secretID, Secrets: p.secrets, HeaderSecrets: p.headerSecrets,
		Client: client, ClientAuth: auth, Credentials: p.credentials, Tracing: p.tracing, Now: p.now})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// target is an AWS target kind's builder: its sender on the given client
// when p.target has the kind's API, else on a client built on p.aws in the
// target's region; on no client (the kind's New then names the one
// missing) when neither.
func target[API any](client func(aws.Config) API, build func(API, config.Destination, bool) (sender.Sender, error)) func(config.Destination, senderParts) (sender.Sender, error) {
	return func(d config.Destination, p senderParts) (sender.Sender, error) {
		api, given := p.target.(API)
		if !given && p.aws != nil {
			// In the target's region: a target may be in another region
			// and account than the lane.
			cfg := *p.aws
			if a := d.TargetARN(); a.Region != "" {
				cfg.Region = a.Region
			}
			api = client(cfg)
		}
		s, err := build(api, d, p.tracing)
		if err != nil {
			return nil, fmt.Errorf("delivery: option Targets: %w", err)
		}
		return s, nil
	}
}
