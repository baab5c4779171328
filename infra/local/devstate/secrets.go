package devstate

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// LoadSecrets reads a secrets file: a JSON object of secret name → value or
// list of values (several while rotating). Keys starting with "_" are
// comments.
func LoadSecrets(path string) (map[string][]string, error) {
	out := map[string][]string{}
	if path == "" {
		return out, nil
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read secrets: %w", err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("secrets file %s: want a JSON object of name → value or [values]: %w", path, err)
	}
	for name, v := range doc {
		if strings.HasPrefix(name, "_") {
			continue
		}
		var one string
		if json.Unmarshal(v, &one) == nil && one != "" {
			out[name] = []string{one}
			continue
		}
		var many []string
		if err := json.Unmarshal(v, &many); err != nil || len(many) == 0 {
			return nil, fmt.Errorf("secrets file %s: %q must be a non-empty string or list of strings", path, name)
		}
		out[name] = many
	}
	return out, nil
}
