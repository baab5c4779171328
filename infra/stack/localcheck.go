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
