package ingest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/message"
)

var oraclePaths = []jsonPath{{"id"}, {"type"}, {"event", "type"}, {"a", "b", "c"}}

// oracle reads the first value at path with encoding/json's tokenizer,
// the reference: keys decoded as encoding/json decodes them, the first
// occurrence in document order counting when a key repeats.
func oracle(data []byte, path jsonPath) (value any, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, found, err := oracleFind(dec, path)
	if err != nil {
		return nil, false
	}
	return v, found
}

// oracleFind reads one value from dec and returns the first value at path
// within it.
func oracleFind(dec *json.Decoder, path jsonPath) (value any, found bool, err error) {
	if len(path) == 0 {
		err = dec.Decode(&value)
		return value, err == nil, err
	}
	tok, err := dec.Token()
	if err != nil {
		return nil, false, err
	}
	open, ok := tok.(json.Delim)
	if !ok {
		return nil, false, nil // a scalar holds no field
	}
	for dec.More() {
		if open == '{' {
			key, err := dec.Token()
			if err != nil {
				return nil, false, err
			}
			if !found && key.(string) == path[0] {
				if value, found, err = oracleFind(dec, path[1:]); err != nil {
					return nil, false, err
				}
				continue
			}
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, false, err
		}
	}
	_, err = dec.Token() // the closing delimiter
	return value, found, err
}

// checkAgainstOracle checks scanJSON on one input: on valid JSON, against
// encoding/json; on anything else, against scanJSON's contract for what it
// may accept without reading.
func checkAgainstOracle(t *testing.T, data []byte) {
	t.Helper()
	var out [maxJSONPaths]jsonValue
	err := scanJSON(data, oraclePaths, out[:])
	if !json.Valid(data) {
		checkInvalid(t, data, err, out[:len(oraclePaths)])
		return
	}
	if err != nil {
		t.Fatalf("scanJSON(%q) = %v on valid JSON", data, err)
	}
	for i, p := range oraclePaths {
		want, found := oracle(data, p)
		got := out[i]
		if !found {
			if got.kind != 0 {
				t.Fatalf("path %v in %q: found %q, encoding/json finds nothing", p, data, got.raw)
			}
			continue
		}
		text, ok := got.text()
		switch w := want.(type) {
		case string:
			if got.kind != 's' || !ok || text != w {
				t.Fatalf("path %v in %q: got kind %c %q, want string %q", p, data, got.kind, text, w)
			}
		case json.Number:
			if got.kind != 'n' || !ok || text != string(w) {
				t.Fatalf("path %v in %q: got kind %c %q, want number %s", p, data, got.kind, text, w)
			}
		default:
			if got.kind != 'o' || ok {
				t.Fatalf("path %v in %q: got kind %c, want a non-text value %v", p, data, got.kind, w)
			}
		}
	}
}

// checkInvalid checks scanJSON's answer on data that is not valid JSON:
// only an object that starts with '{' and ends with '}' may be accepted
// (the rest is read only as far as the wanted fields), and every value it
// reports must be valid JSON itself, wanted values being checked in full.
func checkInvalid(t *testing.T, data []byte, err error, out []jsonValue) {
	t.Helper()
	if err != nil {
		return
	}
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) < 2 || trimmed[0] != '{' || trimmed[len(trimmed)-1] != '}' {
		t.Fatalf("scanJSON accepted %q, which is not an object from '{' to '}'", data)
	}
	for i, v := range out {
		if v.kind != 0 && !json.Valid(v.raw) {
			t.Fatalf("path %v in %q: reported %q, which is not valid JSON", oraclePaths[i], data, v.raw)
		}
	}
}

func TestScanJSON(t *testing.T) {
	inputs := []string{
		`{"id":"evt_1","type":"charge.succeeded"}`,
		` {"type" : "a" , "id" : 42 } `,
		`{"id":"x","id":"y"}`,
		`{"event":{"type":"message"},"event":{"x":1}}`,
		`{"event":{"x":1},"event":{"type":"message"}}`,
		`{"event":[{"type":"nested in array"}],"type":"top"}`,
		`{"\u0069d":"escaped key","type":"caf\u00e9 \"quoted\" \ud83d\ude00"}`,
		`{"id":"\ud800 lone surrogate"}`,
		"{\"id\":\"invalid utf8 \xff\"}",
		`{"id":-0.5e+10,"type":true}`,
		`{"id":null,"type":{}}`,
		`{"a":{"b":{"c":"deep"}}}`,
		`[{"id":"not top level"}]`,
		`"just a string"`,
		`12`,
		`{}`,
		`[]`,
		// Invalid documents.
		``, ` `, `{`, `{"id"}`, `{"id":}`, `{"id":"x",}`, `{"id":"x"}}`, `{"id":"x"} x`, `[1,]`, `[01]`, `-`, `1.`, `1e`, `.5`,
		`{"id":"tab	inside"}`, `{"id":"\x"}`, `{"id":"\u12"}`, `tru`, `nul`, `{'id':1}`, `{"id":1 "type":2}`,
		`{"a":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
		strings.Repeat("[", 10000) + strings.Repeat("]", 10000),
	}
	// Special bytes at every offset of a long string exercise the
	// eight-bytes-at-a-time path and its fallback.
	for _, special := range []string{`\"`, `\\`, `\u00e9`, "\x01", `"`, "\x7f", "\xc3\xa9", "\xff"} {
		for i := range 20 {
			inputs = append(inputs, `{"id":"`+strings.Repeat("a", i)+special+strings.Repeat("b", 20-i)+`","type":"t"}`)
		}
	}
	for _, in := range inputs {
		checkAgainstOracle(t, []byte(in))
	}
}

func TestScanJSONDoesNotAllocate(t *testing.T) {
	data := []byte(`{"id":"evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R","object":"event","data":{"object":{"amount":4200,"list":[1,2,{"x":null}]}},"type":"payment_intent.succeeded"}`)
	paths := []jsonPath{{"id"}, {"type"}}
	var out [2]jsonValue
	allocs := testing.AllocsPerRun(100, func() {
		if err := scanJSON(data, paths, out[:]); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Errorf("scanJSON allocates %v times per run, want 0", allocs)
	}
}

func FuzzJSONFields(f *testing.F) {
	for _, s := range []string{
		`{"id":"evt_1","type":"charge.succeeded"}`,
		`{"event":{"type":"message"},"event_id":"Ev1","type":"event_callback"}`,
		`{"a":{"b":{"c":1.5e3}},"id":"x","id":{"y":[true,false,null]}}`,
		`{"\u0069d":"\ud83d\ude00"}`,
		`[1,"2",{"3":[]}]`,
		`{"id":"x",}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkAgainstOracle(t, data)
	})
}

func TestFormatReceivedAt(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 11, 30, 5, 0, 0, 123_456_789, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("X", -7*3600)),
		time.Date(1999, 12, 31, 23, 59, 59, 999_999_999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 1),
	} {
		if got, want := formatReceivedAt(tm), tm.UTC().Format(message.ReceivedAtLayout); got != want {
			t.Errorf("formatReceivedAt(%v) = %s, want %s", tm, got, want)
		}
	}
}

func BenchmarkScanJSON(b *testing.B) {
	var compact bytes.Buffer
	if err := json.Compact(&compact, []byte(`{"id":"evt_3QxJ7bLkdIwHu7ix0Yq1Vw2R","object":"event","api_version":"2025-04-30.basil","created":1764478800,"data":{"object":{"id":"pi_3QxJ7bLkdIwHu7ix0hT5Kc9m","object":"payment_intent","amount":4200,"amount_capturable":0,"amount_received":4200,"capture_method":"automatic_async","client_secret":"pi_3QxJ7bLkdIwHu7ix0hT5Kc9m_secret_REDACTED","confirmation_method":"automatic","created":1764478795,"currency":"eur","customer":"cus_RqzTZl8H1mGd3e","description":"Order #1042","latest_charge":"ch_3QxJ7bLkdIwHu7ix0Nw4Ls8p","livemode":false,"metadata":{"order_id":"1042"},"payment_method":"pm_1QxJ7aLkdIwHu7ixq2b8uYtE","payment_method_types":["card"],"receipt_email":"jane@example.com","status":"succeeded"}},"livemode":false,"pending_webhooks":2,"request":{"id":"req_Vb5mQ1t2hXwE8k","idempotency_key":"8f1c7a9e-53b4-4c1e-9d70-2f6a3b5e1c44"},"type":"payment_intent.succeeded"}`)); err != nil {
		b.Fatal(err)
	}
	data := compact.Bytes()
	paths := []jsonPath{{"id"}, {"type"}}
	var out [2]jsonValue
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if err := scanJSON(data, paths, out[:]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestScanJSONReadsOnlyWhatItNeeds pins the contract for bodies that are
// not valid JSON: what scanJSON reads is checked, what it steps over only
// for its delimiters, and what follows the last wanted field not at all.
func TestScanJSONReadsOnlyWhatItNeeds(t *testing.T) {
	paths := []jsonPath{{"id"}, {"type"}}
	tests := []struct {
		in        string
		ok        bool
		id, type_ string
	}{
		{in: `{"id":"x","type":"y","z":tru}`, ok: true, id: "x", type_: "y"},
		{in: `{"id":"x","type":"y"} x }`, ok: true, id: "x", type_: "y"},
		{in: "{\"a\":\"\x01\\q\",\"id\":\"x\",\"type\":\"y\"}", ok: true, id: "x", type_: "y"},
		{in: `{"a":{"b":[1,,]},"id":"x","type":"y"}`, ok: true, id: "x", type_: "y"},
		{in: `{"id":"x","id":"second","type":"y","type":"second"}`, ok: true, id: "x", type_: "y"},
		{in: `{"id":"x","type":"y"`},              // truncated: no closing '}'
		{in: `{"id":"x","type":"y"} x`},           // does not end with '}'
		{in: `{"a":[}],"id":"x","type":"y"}`},     // brackets do not match
		{in: `{"a":"open,"id":"x","type":"y"}`},   // ends inside a string
		{in: "{\"id\":\"x\x01\",\"type\":\"y\"}"}, // a wanted value is checked in full
		{in: `{"id" "x","type":"y"}`},             // separators on the way are checked
		{in: `{"a":01,"id":"x","type":"y"}`},      // so are numbers on the way
		{in: `{"id":"x","a":"\\q"} `},             // type not found: read to the end, strings delimited only
		{in: `{"id":"x"} {}`},                     // type not found: nothing may follow
		{in: `[{"id":"x","type":"y"}, tru]`},      // not an object: validated in full
	}
	tests[12].ok, tests[12].id = true, "x"
	for _, tt := range tests {
		var out [2]jsonValue
		err := scanJSON([]byte(tt.in), paths, out[:])
		if (err == nil) != tt.ok {
			t.Errorf("scanJSON(%q) error = %v, want ok %v", tt.in, err, tt.ok)
			continue
		}
		if !tt.ok {
			continue
		}
		id, _ := out[0].text()
		typ, _ := out[1].text()
		if id != tt.id || typ != tt.type_ {
			t.Errorf("scanJSON(%q) = id %q type %q, want %q %q", tt.in, id, typ, tt.id, tt.type_)
		}
	}
}

func TestAcceptedAnswer(t *testing.T) {
	for _, tt := range [][2]string{{"stripe", "evt_1"}, {"a", ""}, {strings.Repeat("s", 64), strings.Repeat("é", 128)}} {
		id, body := acceptedAnswer(tt[0], tt[1])
		if want := EventID(tt[0], tt[1]); id != want {
			t.Errorf("acceptedAnswer(%q, %q) id = %s, want %s", tt[0], tt[1], id, want)
		}
		var doc struct{ ID string }
		if err := json.Unmarshal([]byte(body), &doc); err != nil || doc.ID != id {
			t.Errorf("acceptedAnswer(%q, %q) body = %s (%v), want the id %s", tt[0], tt[1], body, err, id)
		}
	}
}
