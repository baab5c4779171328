package provider

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

var testPaths = [][]string{{"id"}, {"type"}, {"event", "type"}, {"a", "b", "c"}}

func TestReadFields(t *testing.T) {
	str := func(s string) field { return field{found: true, kind: '"', text: s, valid: true} }
	none := field{}
	tests := []struct {
		name string
		in   string
		want []field
		err  error
	}{
		{"flat", `{"id":"evt_1","type":"a.b"}`, []field{str("evt_1"), str("a.b"), none, none}, nil},
		{"space everywhere", " \t\r\n{ \"id\" : \"x\" , \"type\":\"t\" } \n", []field{str("x"), str("t"), none, none}, nil},
		{"nested", `{"event":{"user":"U","type":"m"},"a":{"b":{"c":"deep"}}}`, []field{none, none, str("m"), str("deep")}, nil},
		{"number", `{"id":-12.5e3}`, []field{{found: true, kind: '0', text: "-12.5e3", valid: true}, none, none, none}, nil},
		{"other kinds", `{"id":null,"type":true,"event":[1]}`, []field{{found: true, kind: 'n', valid: true}, {found: true, kind: 't', valid: true}, none, none}, nil},
		{"escapes", `{"id":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/"}`, []field{str("café 😀 \"q\" \\ /"), none, none, none}, nil},
		{"invalid UTF-8 in a wanted string", "{\"id\":\"a\xffb\"}", []field{{found: true, kind: '"', text: "a\uFFFDb", valid: false}, none, none, none}, nil},
		{"a lone surrogate", `{"type":"\ud800"}`, []field{none, {found: true, kind: '"', text: "\uFFFD", valid: false}, none, none}, nil},
		{"invalid UTF-8 elsewhere", "{\"id\":\"x\",\"note\":\"\xff\"}", []field{str("x"), none, none, none}, nil},
		{"keys are exact", `{"ID":"x","Type":"y","type ":"z"}`, []field{none, none, none, none}, nil},
		{"path through a non-object", `{"event":"x","a":{"b":[{"c":1}]}}`, []field{none, none, none, none}, nil},
		{"not an object", `["id","type"]`, []field{none, none, none, none}, nil},
		{"a scalar", `"id"`, []field{none, none, none, none}, nil},
		{"duplicates off the path", `{"x":1,"x":2,"event":{"y":1,"y":2},"id":"i"}`, []field{str("i"), none, none, none}, nil},
		{"duplicate key", `{"type":"a","type":"b"}`, nil, ErrDuplicateKey},
		{"duplicate parent", `{"event":{"type":"a"},"event":{}}`, nil, ErrDuplicateKey},
		{"duplicate parent, scalar first", `{"event":"a","event":{"type":"b"}}`, nil, ErrDuplicateKey},
		{"duplicate deep", `{"a":{"b":{"c":1,"c":2}}}`, nil, ErrDuplicateKey},
		{"duplicate through an escape", `{"id":"a","\u0069d":"b"}`, nil, ErrDuplicateKey},
		{"a case variant of a wanted key", `{"id":"a","ID":"b"}`, nil, ErrDuplicateKey},
		{"a case variant first", `{"Type":"b","type":"a"}`, nil, ErrDuplicateKey},
		{"two case variants", `{"ID":"a","Id":"b"}`, nil, ErrDuplicateKey},
		{"a case variant through an escape", `{"id":"a","\u0049D":"b"}`, nil, ErrDuplicateKey},
		{"a case variant of a parent", `{"event":{"type":"a"},"EVENT":{"type":"b"}}`, nil, ErrDuplicateKey},
		{"a case variant deep", `{"a":{"b":{"c":1,"C":2}}}`, nil, ErrDuplicateKey},
		{"case variants off the path", `{"id":"i","note":1,"Note":2,"event":{"user":1,"User":2}}`, []field{str("i"), none, none, none}, nil},
		{"not JSON wins over a duplicate", `{"id":"a","id":"b"`, nil, ErrNotJSON},
		{"garbage after", `{"id":"a"} x`, nil, ErrNotJSON},
		{"second document", `{"id":"a"} {}`, nil, ErrNotJSON},
		{"NUL after", "{\"id\":\"a\"}\x00", nil, ErrNotJSON},
		{"truncated", `{"id":"a","data":{"x":`, nil, ErrNotJSON},
		{"empty", ``, nil, ErrNotJSON},
		{"control character in a string", "{\"id\":\"a\x01\"}", nil, ErrNotJSON},
		{"bad escape", `{"id":"\x"}`, nil, ErrNotJSON},
		{"trailing comma", `{"id":"a",}`, nil, ErrNotJSON},
		{"byte order mark", "\ufeff{}", nil, ErrNotJSON},
		{"nesting at encoding/json's limit", strings.Repeat("[", 10000) + strings.Repeat("]", 10000), []field{none, none, none, none}, nil},
		{"nesting past it", strings.Repeat("[", 10001) + strings.Repeat("]", 10001), nil, ErrNotJSON},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, text, err := readFields([]byte(tt.in), testPaths...)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("error = %v, want %v", err, tt.err)
			}
			if text && !utf8.ValidString(tt.in) {
				t.Errorf("text = true for a body that is not valid UTF-8")
			}
			if diff := cmp.Diff(tt.want, got, cmp.AllowUnexported(field{})); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}
}

// oracleFields reads the paths with encoding/json's tokenizer: the value
// (as encoding/json unescapes it) of each path, and whether a key on the
// way to one repeats.
func oracleFields(data []byte, paths [][]string) (vals []any, found []bool, dup bool) {
	vals, found = make([]any, len(paths)), make([]bool, len(paths))
	var walk func(raw json.RawMessage, depth int, want []int)
	walk = func(raw json.RawMessage, depth int, want []int) {
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
			return
		}
		seen := map[string]bool{}
		for dec.More() {
			tok, _ := dec.Token()
			key := tok.(string)
			var v json.RawMessage
			_ = dec.Decode(&v)
			var next []int
			wanted := false
			for _, i := range want {
				if paths[i][depth] != key {
					continue
				}
				wanted = true
				if len(paths[i]) == depth+1 {
					var x any
					d := json.NewDecoder(bytes.NewReader(v))
					d.UseNumber()
					_ = d.Decode(&x)
					vals[i], found[i] = x, true
				} else {
					next = append(next, i)
				}
			}
			if wanted && seen[key] {
				dup = true
			}
			seen[key] = seen[key] || wanted
			if len(next) > 0 {
				walk(v, depth+1, next)
			}
		}
	}
	all := make([]int, len(paths))
	for i := range all {
		all[i] = i
	}
	walk(data, 0, all)
	return vals, found, dup
}

// FuzzReadFields checks readFields against encoding/json: it accepts
// exactly what json.Valid accepts (unless a wanted key repeats), and reads
// the values encoding/json reads.
func FuzzReadFields(f *testing.F) {
	for _, s := range []string{
		`{"id":"evt_1","type":"a"}`, `{"event":{"type":"m"},"a":{"b":{"c":"d"}}}`, `{"type":"a","type":"b"}`,
		`{"id":"a"} x`, `[1,{"id":2}]`, `{"id":"\ud800"}`, "{\"id\":\"\xff\"}", `{"id":1e5,"type":null}`,
		`{"event":"x","event":{"type":"y"}}`, `{"\u0069d":"escaped"}`, ` {} `, `"`, `{"a":{"b":{"c":[]}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got, text, err := readFields(data, testPaths...)
		if text && !utf8.Valid(data) {
			t.Fatalf("readFields(%q) reports text, but it is not valid UTF-8", data)
		}
		if !json.Valid(data) {
			if !errors.Is(err, ErrNotJSON) {
				t.Fatalf("readFields(%q) = %v, json.Valid refuses it", data, err)
			}
			return
		}
		vals, found, dup := oracleFields(data, testPaths)
		if dup {
			if !errors.Is(err, ErrDuplicateKey) {
				t.Fatalf("readFields(%q) = %v, a wanted key repeats", data, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("readFields(%q) = %v on valid JSON", data, err)
		}
		for i, f := range got {
			if f.found != found[i] {
				t.Fatalf("%q path %v: found %v, encoding/json %v", data, testPaths[i], f.found, found[i])
			}
			switch v := vals[i].(type) {
			case string:
				switch {
				case f.kind != '"':
					t.Fatalf("%q path %v: kind %q, encoding/json read a string", data, testPaths[i], f.kind)
				case f.valid && f.text != v:
					t.Fatalf("%q path %v: %q, encoding/json %q", data, testPaths[i], f.text, v)
				case !f.valid && !strings.ContainsRune(v, utf8.RuneError):
					t.Fatalf("%q path %v: invalid, but encoding/json read %q without replacing anything", data, testPaths[i], v)
				}
			case json.Number:
				if f.kind != '0' || f.text != v.String() {
					t.Fatalf("%q path %v: %q (kind %q), encoding/json %s", data, testPaths[i], f.text, f.kind, v)
				}
			}
		}
	})
}

// TestReadFieldsText: the read reports a body of valid UTF-8, on which
// ingest skips its own UTF-8 pass, and reads a document with invalid UTF-8
// as well, reporting it.
func TestReadFieldsText(t *testing.T) {
	for _, tt := range []struct {
		in   string
		text bool
	}{
		{`{"id":"evt_1","type":"a"}`, true},
		{"{\"id\":\"caf\u00e9 \U0001F600\",\"type\":\"\uFFFF\"}", true}, // U+FFFF is UTF-8: message.JSONText looks for it
		{`{"id":"\ud83d\ude00","type":"a"}`, true},
		{"{\"id\":\"x\",\"note\":\"\xff\"}", false},
		{"{\"id\":\"\xed\xa0\x80\"}", false}, // an encoded surrogate
		{`{"id":"\ud800"}`, false},           // a lone surrogate escape, read as U+FFFD
	} {
		got, text, err := readFields([]byte(tt.in), testPaths...)
		if err != nil || len(got) != len(testPaths) || text != tt.text {
			t.Errorf("readFields(%q) = %v, text %v; want the fields, text %v", tt.in, err, text, tt.text)
		}
	}
}
