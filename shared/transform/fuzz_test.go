package transform

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/itchyny/gojq"
)

// fuzzBudget is a budget no fuzzed input reaches: the fuzz targets compare
// values within the bound.
const (
	fuzzBudget  = 1 << 30
	fuzzTimeout = time.Minute
)

// stdDecode is encoding/json's reading of body: exactly one value, numbers
// kept exact (as gojq's fromjson reads them).
func stdDecode(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("more after the value")
	}
	return v, nil
}

// FuzzDecode: the streaming decoder (decode.go) reads what encoding/json
// reads, to the same value, and refuses what it refuses.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `0`, `-0`, `1e400`, `-1.5E-7`, `123456789012345678901234567890`,
		`"a\u00e9\ud83d\ude00\"\\\/\b\f\n\r\t"`, `"\ud800"`, `"\udc00x"`, "\"\xff\xfe\"", `{"a":1,"a":2}`,
		`{"a":{"b":[1,{"c":null}]},"d":""}`, ` [ 1 , 2 ] `, `[1,]`, `{"a"}`, `01`, `1 2`, `[`, ``, `"`,
		`{"id":"evt_1","amount":2000,"currency":"usd","data":{"object":{"tags":["x","y"]}}}`,
		"\"\x01\"", `{"":0}`, `[[[[[[[[]]]]]]]]`, `nul`, `"\u0000"`, `1.`, `.5`, `-`, `+1`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		want, werr := stdDecode(body)
		ev, cancel := newEvaluation(context.Background(), fuzzTimeout, fuzzBudget)
		defer cancel()
		got, gerr := decode(body, ev)
		switch {
		case werr != nil && gerr != nil:
			return
		case werr != nil:
			t.Fatalf("decode(%q) = %#v, encoding/json refuses it: %v", body, got, werr)
		case gerr != nil:
			t.Fatalf("decode(%q) fails (%v), encoding/json reads %#v", body, gerr, want)
		case !reflect.DeepEqual(got, want):
			t.Fatalf("decode(%q) = %#v, encoding/json reads %#v", body, got, want)
		}
	})
}

// FuzzEncode: the bounded encoder (encode.go) writes, for every value
// within its limit, byte for byte what gojq.Marshal writes: the value as
// decoded from a JSON document (json.Number), the values gojq's
// evaluation makes of it (int, float64, *big.Int) and a float of any bits.
func FuzzEncode(f *testing.F) {
	for _, s := range []string{
		`{}`, `[]`, `null`, `true`, `{"b":1,"a":[2,3.5,"x"]}`, `1e400`, `-1e-7`, `1e21`, `1e20`, `0.000001`,
		`123456789012345678901234567890`, `-0`, `"\u007f\u0000\u001f<>&\u2028\u2029é"`, "\"\xff\"",
		`{"id":"evt_1","amount":2000,"currency":"usd","tags":["x",null,false]}`, `[1.0,1.5e300,-2e-300]`,
	} {
		f.Add([]byte(s), 0.0)
	}
	f.Add([]byte(`0`), math.NaN())
	f.Add([]byte(`0`), math.Inf(-1))
	f.Add([]byte(`0`), 1e-7)
	f.Add([]byte(`0`), 5e-324)
	normalize, err := gojq.Parse(`[., (tojson | fromjson), (.. | numbers |= . + 0)]`)
	if err != nil {
		f.Fatal(err)
	}
	code, err := gojq.Compile(normalize)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, doc []byte, x float64) {
		v, err := stdDecode(doc)
		if err != nil {
			return
		}
		values := []any{v, x, []any{x, -x}}
		if out, ok := code.Run(v).Next(); ok {
			if _, isErr := out.(error); !isErr {
				values = append(values, out)
			}
		}
		for _, v := range values {
			want, err := gojq.Marshal(v)
			if err != nil {
				t.Fatalf("gojq.Marshal(%#v): %v", v, err)
			}
			ev, cancel := newEvaluation(context.Background(), fuzzTimeout, fuzzBudget)
			got, err := encodeBounded(v, len(want), ev)
			cancel()
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("encode(%#v) = %q, %v; gojq.Marshal writes %q", v, got, err, want)
			}
			// One byte short of it, the encoder stops at the limit.
			if len(want) > 0 {
				ev, cancel := newEvaluation(context.Background(), fuzzTimeout, fuzzBudget)
				_, err := encodeBounded(v, len(want)-1, ev)
				cancel()
				if !errors.Is(err, errFull) {
					t.Fatalf("encode(%#v) with a limit of %d = %v, want errFull", v, len(want)-1, err)
				}
			}
		}
	})
}
