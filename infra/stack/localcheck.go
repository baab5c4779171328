package stack

import (
	"fmt"
	"strings"

	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/shared/config"
)

// AllowLocalKey is the CDK context key that lets a configuration made for
// local development synthesize for a deploy
// (cdk deploy -c hookfanAllowLocal=true).
const AllowLocalKey = "hookfanAllowLocal"

// checkLocalDestinations refuses a configuration with destinations made
// for local development (config.LocalDestinations) unless the context
// acknowledges them: the local stack's dev.json must not reach an account
// by mistake, where allowPrivateNetworks would let a lane reach the
// account's private addresses.
func checkLocalDestinations(scope constructs.Construct, cfg *config.Config) error {
	local := cfg.LocalDestinations()
	if len(local) == 0 || allowLocal(scope.Node().TryGetContext(jsii.String(AllowLocalKey))) {
		return nil
	}
	return fmt.Errorf("hookfan stack: the configuration is made for local development: %s; deployed, such a lane may reach private addresses (the VPC's, instance metadata) or send events in clear text. Give each destination a public https url and drop allowPrivateNetworks, or, if this deploy is meant to, acknowledge it with -c %s=true",
		strings.Join(local, "; "), AllowLocalKey)
}

// allowLocal reads the context value: true from cdk.json, "true" from -c.
func allowLocal(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v == "true"
	}
	return false
}

// checkMetricsSink refuses metrics.sink "cloudwatch", whatever the context
// says: the local stack's PutMetricData sink runs in its own process, and
// the deployed functions write Embedded Metric Format lines only (no
// function binary links the CloudWatch client: docs/decisions.md), so in
// a deployed stack the setting could mean nothing.
func checkMetricsSink(cfg *config.Config) error {
	if cfg.Metrics.Sink != config.SinkCloudWatch {
		return nil
	}
	return fmt.Errorf("hookfan stack: metrics.sink %q is the local stack's (make dev, on an emulator that does not read Embedded Metric Format); the deployed functions write EMF lines, which CloudWatch Logs turns into the same metrics. Remove metrics.sink, or set it to %q, for a deploy",
		cfg.Metrics.Sink, config.SinkEMF)
}
