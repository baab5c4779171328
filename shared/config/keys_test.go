package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeysDifferingInCase: encoding/json matches keys to fields ignoring
// case, so these were accepted (the first two as the field they resemble,
// the last silently overriding the first).
func TestKeysDifferingInCase(t *testing.T) {
	tests := []struct {
		name, json string
		want       []string
	}{
		{
			name: "a field spelled in another case",
			json: `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretname": "hookfan/sources/stripe"}}]}`,
			want: []string{`sources[0].verify.secretname: unknown field; did you mean secretName? (field names are case-sensitive)`},
		},
		{
			name: "every one at once, at every depth",
			json: `{"Sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
			  "destinations": [{"name": "a", "URL": "https://a.example.com", "filter": {"Types": ["x"]}, "retry": {"Schedule": ["1s"]}}]}`,
			want: []string{
				`Sources: unknown field; did you mean sources? (field names are case-sensitive)`,
				`destinations[0].URL: unknown field; did you mean url? (field names are case-sensitive)`,
				`destinations[0].filter.Types: unknown field; did you mean types? (field names are case-sensitive)`,
				`destinations[0].retry.Schedule: unknown field; did you mean schedule? (field names are case-sensitive)`,
			},
		},
		{
			name: "both spellings",
			json: `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe", "SecretName": "other"}}]}`,
			want: []string{`sources[0].verify.SecretName: unknown field; did you mean secretName? (field names are case-sensitive)`},
		},
		{
			name: "a key set twice",
			json: `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "a", "secretName": "b"}}]}`,
			want: []string{`sources[0].verify.secretName: is set twice in the same object; keep one (the last would silently win)`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKeysOfSelfDecodingValues: a body filter's keys are the body's,
// matched exactly by SNS and the deliver function; they are not fields.
func TestKeysOfSelfDecodingValues(t *testing.T) {
	_, err := Parse([]byte(`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [{"name": "a", "url": "https://a.example.com", "filter": {"body": {"Status": ["paid"], "status": ["paid"]}},
	    "retry": {"schedule": ["1s"]}, "pause": {"failureRate": 0.5, "window": "5m"}}]}`))
	if err != nil {
		t.Fatal(err)
	}
}

// TestKeysOfTheEnvironment: a function's slice is checked the same way.
func TestKeysOfTheEnvironment(t *testing.T) {
	_, err := DecodeDestination("HOOKFAN_DESTINATION", `{"name": "a", "url": "https://a.example.com", "timeoutseconds": 5}`)
	want := `HOOKFAN_DESTINATION: timeoutseconds: unknown field; did you mean timeoutSeconds? (field names are case-sensitive)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestSyntaxErrorLineAndColumn(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"a trailing comma", "{\n  \"sources\": [\n    {\"name\": \"x\",}\n  ]\n}",
			`decode config: invalid JSON at line 3, column 18: invalid character '}' looking for beginning of object key string`},
		{"on the first line", `{"sources" []}`,
			`decode config: invalid JSON at line 1, column 12: invalid character '[' after object key`},
		{"cut short", "{\n  \"sources\": [\n",
			`decode config: invalid JSON: the document ends at line 3, column 1 before it is complete; close every { and [ and string`},
		{"data after the object", "{\"sources\": []}\n{}",
			`decode config: unexpected data after the JSON object at line 2, column 1; remove it`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.json))
			if err == nil || err.Error() != tt.want {
				t.Errorf("got %v\nwant %s", err, tt.want)
			}
		})
	}
	// The file's name comes first.
	path := filepath.Join(t.TempDir(), "dev.json")
	if err := os.WriteFile(path, []byte(tests[0].json), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := LoadFile(path)
	if want := "config " + path + ": " + tests[0].want; err == nil || err.Error() != want {
		t.Errorf("LoadFile: got %v\nwant %s", err, want)
	}
}

func TestLineColumn(t *testing.T) {
	data := []byte("ab\ncd\n")
	for _, tt := range []struct {
		offset    int64
		line, col int
	}{{0, 1, 1}, {1, 1, 2}, {2, 1, 3}, {3, 2, 1}, {5, 2, 3}, {6, 3, 1}, {99, 3, 1}, {-1, 1, 1}} {
		if l, c := LineColumn(data, tt.offset); l != tt.line || c != tt.col {
			t.Errorf("LineColumn(%d) = %d:%d, want %d:%d", tt.offset, l, c, tt.line, tt.col)
		}
	}
}
