package lambdaenv

import (
	"bytes"
	"encoding/json"
	"testing"
)

// TestJSONLoggerUsesLambdaKeys: a line carries Lambda's JSON log keys
// (timestamp, level, message) and the attributes as given.
func TestJSONLoggerUsesLambdaKeys(t *testing.T) {
	var buf bytes.Buffer
	JSONLogger(&buf).Info("deliver", "outcome", "delivered", "attempt", 2)
	var line map[string]any
	if err := json.Unmarshal(buf.Bytes(), &line); err != nil {
		t.Fatalf("not one JSON line: %q: %v", buf.String(), err)
	}
	for key, want := range map[string]any{"message": "deliver", "level": "INFO", "outcome": "delivered", "attempt": 2.0} {
		if line[key] != want {
			t.Errorf("%s = %v, want %v (line %s)", key, line[key], want, buf.String())
		}
	}
	if _, ok := line["timestamp"]; !ok {
		t.Errorf("no timestamp: %s", buf.String())
	}
	for _, key := range []string{"msg", "time"} {
		if _, ok := line[key]; ok {
			t.Errorf("slog's own key %q: %s", key, buf.String())
		}
	}
}
