package config

import (
	"fmt"
	"strings"
)

// LocalDestinations describes the destinations made for local
// development: those with allowPrivateNetworks, and those whose URL is
// http://. Deployed, such a lane may reach the VPC's and the instance
// metadata's addresses, or send events and their signatures in clear
// text, so the CDK app synthesizes them only when told to (docs:
// configuration.md, "Local destinations in a deploy"). The URL is shown by
// its host only.
func (c *Config) LocalDestinations() []string {
	var out []string
	for i, d := range c.Destinations {
		var why []string
		if d.AllowPrivateNetworks {
			why = append(why, "sets allowPrivateNetworks")
		}
		if d.allowsLoopback() {
			why = append(why, "lists a loopback range in allowCidrs (in Lambda, loopback is the runtime API's)")
		}
		if strings.HasPrefix(strings.ToLower(d.URL), "http://") {
			why = append(why, "posts over http ("+d.URLHost()+")")
		}
		if len(why) > 0 {
			out = append(out, fmt.Sprintf("destinations[%d] (%q) %s", i, d.Name, strings.Join(why, " and ")))
		}
	}
	return out
}
