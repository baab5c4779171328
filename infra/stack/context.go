package stack

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hookfan/hookfan/shared/config"
)

// CDKJSONContext returns the "context" object of a cdk.json: Hookfan's
// configuration and the CDK feature flags. The app passes it to awscdk.App
// as default context, so that a synthesis outside the CDK CLI (make synth,
// the tests) uses the same feature flags as cdk deploy; under the CLI the
// CLI's context, which already holds cdk.json's, takes precedence. A
// missing file gives no context and no error.
func CDKJSONContext(path string) (map[string]any, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var doc struct {
		Context map[string]any `json:"context"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: %w", path, config.DescribeSyntaxError(data, err))
	}
	return doc.Context, nil
}
