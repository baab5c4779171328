package transform

import (
	"errors"
	"fmt"

	"github.com/hookfan/hookfan/shared/config"
)

// CheckConfig compiles every destination's transform and reports each one
// that does not compile, naming its field, the expression, gojq's error and
// the fix. The CDK app and the local stack run it beside config.Validate;
// it lives here rather than in shared/config so that the functions that
// never transform (ingest) do not link the jq interpreter and pay for its
// package init at every cold start.
func CheckConfig(c *config.Config) error {
	var errs []error
	for i, d := range c.Destinations {
		if d.Transform == "" {
			continue
		}
		if _, err := Compile(d.Transform); err != nil {
			errs = append(errs, fmt.Errorf("destinations[%d].transform: %q %v; fix the jq expression (docs/configuration.md#destination-transform has examples; test it with jq -c '<expression>' < event.json)", i, d.Transform, err))
		}
	}
	return errors.Join(errs...)
}
