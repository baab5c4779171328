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

// oracle reads the value at path with encoding/json, the reference.
func oracle(data []byte, path jsonPath) (value any, found bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	for _, seg := range path {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[seg]; !ok {
			return nil, false
		}
	}
	return v, true
}

// checkAgainstOracle compares scanJSON with encoding/json on one input.
func checkAgainstOracle(t *testing.T, data []byte) {
	t.Helper()
	var out [maxJSONPaths]jsonValue
	err := scanJSON(data, oraclePaths, out[:])
	if valid := json.Valid(data); (err == nil) != valid {
		t.Fatalf("scanJSON(%q) error = %v, json.Valid = %v", data, err, valid)
	}
	if err != nil {
		return
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
