package config

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestKeysDifferingInCase: encoding/json matched keys to fields ignoring
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
			want: []string{`sources[0].verify.secretName: is set twice in the same object; keep one`},
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
	want := `HOOKFAN_DESTINATION: destination.timeoutseconds: unknown field; did you mean timeoutSeconds? (field names are case-sensitive)`
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
}

func TestSyntaxErrorLineAndColumn(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"a trailing comma", "{\n  \"sources\": [\n    {\"name\": \"x\",}\n  ]\n}",
			`decode config: invalid JSON at line 3, column 18, in sources[0]: invalid character '}' at start of string (expecting '"')`},
		{"on the first line", `{"sources" []}`,
			`decode config: invalid JSON at line 1, column 12, in sources: invalid character '[' after object name (expecting ':')`},
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

// decodeConfig is a valid configuration with extra inside its one
// destination and rest after its destinations.
func decodeConfig(extra, rest string) string {
	return `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
	  "destinations": [{"name": "a", "url": "https://a.example.com"` + extra + `}]` + rest + `}`
}

// TestDecodeProblems: each problem the decoder refuses, named by its path
// as validation names fields, with the value and the fix.
func TestDecodeProblems(t *testing.T) {
	const reference = "; check its spelling against the configuration reference, docs/configuration.md#configuration-reference"
	tests := []struct {
		name, json string
		want       []string
	}{
		{"unknown key at the top", decodeConfig("", `, "colour": "blue"`),
			[]string{"colour: unknown field" + reference}},
		{"unknown key in a destination", decodeConfig(`, "colour": "blue"`, ""),
			[]string{"destinations[0].colour: unknown field" + reference}},
		{"unknown key in a filter", decodeConfig(`, "filter": {"type": ["x"]}`, ""),
			[]string{"destinations[0].filter.type: unknown field; did you mean types?"}},
		{"unknown key in a retry", decodeConfig(`, "retry": {"jiter": 0.1}`, ""),
			[]string{"destinations[0].retry.jiter: unknown field; did you mean jitter?"}},
		{"unknown key in tls", decodeConfig(`, "tls": {"clientCertificateSecret": "c", "ca": "x"}`, ""),
			[]string{"destinations[0].tls.ca: unknown field" + reference}},
		{"unknown key in a source's verify", `{"sources": [{"name": "s", "verify": {"kind": "hmac", "secretName": "s", "headr": "X-Sig"}}]}`,
			[]string{"sources[0].verify.headr: unknown field; did you mean header?"}},
		{"a misspelling", decodeConfig(`, "filters": {"types": ["x"]}`, ""),
			[]string{"destinations[0].filters: unknown field; did you mean filter?"}},
		{"two letters swapped", decodeConfig(`, "retry": {"shcedule": ["1s"]}`, ""),
			[]string{"destinations[0].retry.shcedule: unknown field; did you mean schedule?"}},
		{"the start of a field's name", decodeConfig(`, "timeout": 5`, ""),
			[]string{"destinations[0].timeout: unknown field; did you mean timeoutSeconds?"}},
		{"a case variant", decodeConfig(`, "URL": "https://b.example.com"`, ""),
			[]string{"destinations[0].URL: unknown field; did you mean url? (field names are case-sensitive)"}},
		{"a duplicate key", decodeConfig(`, "url": "https://b.example.com"`, ""),
			[]string{"destinations[0].url: is set twice in the same object; keep one"}},
		{"a duplicate key at the top", decodeConfig("", `, "destinations": []`),
			[]string{"destinations: is set twice in the same object; keep one"}},
		{"a duplicate key in a body filter", decodeConfig(`, "filter": {"body": {"status": ["paid"], "status": ["open"]}}`, ""),
			[]string{"destinations[0].filter.body.status: is set twice in the same object; keep one"}},
		{"a type error keeps the index and the value",
			`{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}}],
			  "destinations": [{"name": "a", "url": "https://a.example.com"}, {"name": "b", "url": "https://b.example.com", "timeoutSeconds": "10"}]}`,
			[]string{`destinations[1].timeoutSeconds: "10" is a string; want a whole number`}},
		{"a number with a fraction", decodeConfig(`, "timeoutSeconds": 2.5`, ""),
			[]string{`destinations[0].timeoutSeconds: 2.5 is not a whole number; write one without a fraction or exponent`}},
		{"a number out of range", decodeConfig(`, "timeoutSeconds": 99999999999999999999`, ""),
			[]string{`destinations[0].timeoutSeconds: 99999999999999999999 is out of range; want a whole number`}},
		{"an object for a string", `{"sources": [{"name": {"first": "a"}}]}`,
			[]string{`sources[0].name: got an object; want a string`}},
		{"a long value is cut", decodeConfig(`, "timeoutSeconds": "`+strings.Repeat("9", 60)+`"`, ""),
			[]string{`destinations[0].timeoutSeconds: "` + strings.Repeat("9", 38) + `… is a string; want a whole number`}},
		{"a number for a duration", decodeConfig(`, "retry": {"schedule": ["1s", 30]}`, ""),
			[]string{`destinations[0].retry.schedule[1]: 30 is a number; want a duration string such as "30s", "2m" or "1h30m"`}},
		{"the top is not an object", `[]`,
			[]string{`(top level): got an array; want an object`}},
		{"every problem at once, in the document's order",
			decodeConfig(`, "retry": {"schedule": ["1s", "soon", "1m"]}, "timeoutSeconds": "5", "name": "b"`, `, "alarm": {}`),
			[]string{
				`destinations[0].retry.schedule[1]: "soon" is not a duration; want a duration string such as "30s", "2m" or "1h30m"`,
				`destinations[0].timeoutSeconds: "5" is a string; want a whole number`,
				`destinations[0].name: is set twice in the same object; keep one`,
				`alarm: unknown field; did you mean alarms?`,
			}},
		{"trailing data", decodeConfig("", "") + "\n  ]",
			[]string{`decode config: unexpected data after the JSON object at line 3, column 3; remove it`}},
		{"trailing data after a problem", decodeConfig(`, "colour": "blue"`, "") + ` {}`,
			[]string{`decode config: unexpected data after the JSON object at line 2, column 87; remove it`}},
		{"a syntax error after a problem", decodeConfig(`, "colour": "blue"`, `, "alarms": {"email": "a@example.com",}`),
			// The problems before it are not told: a document that is not
			// JSON is told as such, alone.
			[]string{`decode config: invalid JSON at line 2, column 123, in alarms: invalid character '}' at start of string (expecting '"')`}},
		{"invalid UTF-8", "{\"sources\": [{\"name\": \"caf\xe9\", \"verify\": {\"kind\": \"stripe\", \"secretName\": \"s\"}}]}",
			[]string{`decode config: invalid JSON at line 1, column 27, in sources[0].name: invalid UTF-8; write the document in UTF-8`}},
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

// TestDecodeProblemsAreBounded: the decoder runs again after each problem;
// a document of many stops at maxDecodeProblems, and says so.
func TestDecodeProblemsAreBounded(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"sources": []`)
	for i := range maxDecodeProblems + 5 {
		fmt.Fprintf(&b, `, "x%d": %d`, i, i)
	}
	b.WriteString(`}`)
	_, err := Parse([]byte(b.String()))
	if err == nil {
		t.Fatal("Parse accepted it")
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != maxDecodeProblems+1 || got[0] != "x0: unknown field; check its spelling against the configuration reference, docs/configuration.md#configuration-reference" ||
		got[maxDecodeProblems] != "decode config: stopped after the first 20 problems; there may be more" {
		t.Errorf("got %d lines, first %q, last %q", len(got), got[0], got[len(got)-1])
	}
}

func TestClosest(t *testing.T) {
	names := []string{"name", "url", "filter", "retry", "timeoutSeconds", "maxConcurrency", "batchSize", "batchWindowSeconds"}
	for _, tt := range []struct{ key, want string }{
		{"filters", "filter"},
		{"fitler", "filter"},
		{"nmae", "name"},
		{"ur", "url"},
		{"retires", ""},
		{"timeout", "timeoutSeconds"},
		{"batch", ""}, // begins two names
		{"max", ""},   // too short to stand for maxConcurrency
		{"colour", ""},
		{"", ""},
	} {
		if got := closest(tt.key, names); got != tt.want {
			t.Errorf("closest(%q) = %q, want %q", tt.key, got, tt.want)
		}
	}
	for _, tt := range []struct {
		a, b string
		want int
	}{{"", "abc", 3}, {"abc", "abc", 0}, {"ab", "ba", 1}, {"kitten", "sitting", 3}, {"café", "cafe", 1}} {
		if got := editDistance(tt.a, tt.b); got != tt.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// FuzzDecode: what the decoder accepts, encoding/json reads the same (the
// library changes what is refused, not what a configuration means), and
// what it refuses is told in the configuration's words, a path first,
// never in the library's.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(base))
	f.Add([]byte(decodeConfig(`, "retry": {"schedule": ["1s", "soon", "1m"]}, "timeoutSeconds": "5", "name": "b"`, `, "alarm": {}`)))
	f.Add([]byte(decodeConfig(`, "filter": {"body": {"status": ["paid"], "Status": [{"prefix": "o"}]}}, "pause": {"failureRate": 0.5, "window": "5m"}`, "")))
	f.Add([]byte(decodeConfig(`, "tls": {"clientCertificateSecret": "c"}, "URL": "x", "filters": {}`, `, "functions": {"ingestMemoryMB": 1e3}`)))
	f.Add([]byte("{\"sources\": [{\"name\": \"caf\xe9\"}]} {}"))
	f.Add([]byte(`{"destinations": [{"retry": {"schedule": [null, 5, "\ud800"]}}], "sources": null}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var got Config
		err := decodeStrict(data, &got, "")
		if err != nil {
			for line := range strings.SplitSeq(err.Error(), "\n") {
				if line == "" || strings.Contains(line, "json: ") || strings.Contains(line, "jsontext: ") {
					t.Fatalf("error line %q is empty or in the library's words:\n%v", line, err)
				}
			}
			return
		}
		var want Config
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&want); err != nil {
			t.Fatalf("accepted, but encoding/json says %v", err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("encoding/json reads it otherwise (-encoding/json +decoded):\n%s", diff)
		}
	})
}
