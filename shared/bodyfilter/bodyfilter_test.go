package bodyfilter

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/bodyfilter/cases"
)

func TestCompileInvalid(t *testing.T) {
	tests := []struct {
		name   string
		policy string
		want   []string
	}{
		{"not JSON", `{"a": [`, []string{"body: not a JSON object: unexpected EOF"}},
		{"not an object", `["a"]`, []string{`body: want a JSON object of keys and conditions, such as {"data": {"object": {"amount": [{"numeric": [">=", 1000]}]}}}`}},
		{"empty object", `{}`, []string{`body: want a JSON object of keys and conditions, such as {"data": {"object": {"amount": [{"numeric": [">=", 1000]}]}}}`}},
		{"repeated key", `{"a": ["x"], "a": ["y"]}`, []string{`body: duplicate object member name "a"; list each key once`}},
		{"scalar instead of list", `{"status": "paid"}`, []string{`body.status: is the string "paid"; want a list of conditions, such as ["paid"] or [{"prefix": "pi_"}], or an object of nested keys`}},
		{"empty list", `{"status": []}`, []string{"body.status: is an empty list, which matches nothing; list at least one condition"}},
		{"empty nested object", `{"data": {}}`, []string{"body.data: is an empty object; give the nested keys to match, or remove it"}},
		{"$or", `{"$or": [{"a": ["x"]}, {"b": ["y"]}]}`, []string{`body.$or: keys starting with "$" are SNS operators ($or), which body filters do not support; list the conditions of one key in its array instead`}},
		{"unknown operator", `{"ip": [{"cidr": "10.0.0.0/24"}]}`, []string{`body.ip[0]: operator "cidr" is not supported; use prefix, suffix, equals-ignore-case, numeric, exists or anything-but (or a plain string or number for an exact match)`}},
		{"empty suffix", `{"a": [{"suffix": ""}]}`, []string{`body.a[0]: suffix takes a non-empty string of at most 1024 bytes, such as {"suffix": "@example.com"}; got the string ""`}},
		{"equals-ignore-case not a string", `{"a": [{"equals-ignore-case": 5}]}`, []string{`body.a[0]: equals-ignore-case takes a non-empty string of at most 1024 bytes, such as {"equals-ignore-case": "Paid"}; got the number 5`}},
		{"two operators in one", `{"a": [{"prefix": "x", "exists": true}]}`, []string{"body.a[0]: has 2 operators; write each condition as an object with one of prefix, suffix, equals-ignore-case, numeric, exists, anything-but"}},
		{"boolean value", `{"live": [true]}`, []string{"body.live[0]: is true; a condition is a string, a number, or an object with one of prefix, suffix, equals-ignore-case, numeric, exists, anything-but"}},
		{"null value", `{"a": [null]}`, []string{"body.a[0]: is null; a condition is a string, a number, or an object with one of prefix, suffix, equals-ignore-case, numeric, exists, anything-but"}},
		{"empty prefix", `{"a": [{"prefix": ""}]}`, []string{`body.a[0]: prefix takes a non-empty string of at most 1024 bytes, such as {"prefix": "pi_"}; got the string ""`}},
		{"exists not bool", `{"a": [{"exists": "yes"}]}`, []string{`body.a[0]: exists takes true or false; got the string "yes"`}},
		{"number too large", `{"amount": [1000000001]}`, []string{"body.amount[0]: 1000000001 is out of range; SNS compares numbers from -1e9 to 1e9"}},
		{"too precise", `{"amount": [0.123456]}`, []string{"body.amount[0]: 0.123456 has more than 5 decimal places, the precision SNS compares numbers with; round it"}},
		{"numeric odd arguments", `{"amount": [{"numeric": [">", 1, "<"]}]}`, []string{`body.amount[0]: numeric takes an operator and a number, or a lower and an upper bound: ["=", 100], [">", 0], [">=", 10, "<", 20]; got a list`}},
		{"numeric bad operator", `{"amount": [{"numeric": ["!=", 1]}]}`, []string{`body.amount[0]: numeric takes an operator and a number, or a lower and an upper bound: ["=", 100], [">", 0], [">=", 10, "<", 20]; got a list`}},
		{"numeric upper first", `{"amount": [{"numeric": ["<", 10, ">", 1]}]}`, []string{`body.amount[0]: numeric takes an operator and a number, or a lower and an upper bound: ["=", 100], [">", 0], [">=", 10, "<", 20]; got a list`}},
		{"numeric empty range", `{"amount": [{"numeric": [">=", 10, "<", 10]}]}`, []string{"body.amount[0]: numeric range [>= 10, < 10] is empty; put the lower bound first and below the upper"}},
		{"numeric out of range", `{"amount": [{"numeric": [">", -2000000000]}]}`, []string{"body.amount[0]: -2000000000 is out of range; SNS compares numbers from -1e9 to 1e9"}},
		{"anything-but mixed", `{"a": [{"anything-but": ["x", 1]}]}`, []string{"body.a[0]: anything-but mixes strings and numbers; list one kind"}},
		{"anything-but empty list", `{"a": [{"anything-but": []}]}`, []string{`body.a[0]: anything-but takes a string, a number, a non-empty list of strings or of numbers, or {"prefix": "…"}; got a list`}},
		{"anything-but suffix", `{"a": [{"anything-but": {"suffix": "x"}}]}`, []string{`body.a[0]: anything-but takes a string, a number, a non-empty list of strings or of numbers, or {"prefix": "…"}; got an object`}},
		{"too many keys", `{"a": ["1"], "b": ["1"], "c": {"d": ["1"], "e": ["1"]}, "f": ["1"], "g": ["1"]}`, []string{"body: has 6 keys with conditions; SNS allows at most 5 per filter policy"}},
		{"too many combinations", `{"a": ["1","2","3","4","5","6","7","8","9","10","11","12","13"], "b": ["1","2","3","4","5","6","7","8","9","10","11","12"]}`, []string{"body: has 151 combinations of conditions (the product of each key's count); SNS allows at most 150"}},
		{"too deep", `{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":["x"]}}}}}}}}}`, []string{"body.a.b.c.d.e.f.g.h.i: is nested 9 levels deep; use at most 8"}},
		{"every problem at once", `{"a": [{"prefix": 1}], "b": {"c": "x"}}`, []string{
			`body.a[0]: prefix takes a non-empty string of at most 1024 bytes, such as {"prefix": "pi_"}; got the number 1`,
			`body.b.c: is the string "x"; want a list of conditions, such as ["paid"] or [{"prefix": "pi_"}], or an object of nested keys`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := Compile([]byte(tt.policy))
			if err == nil {
				t.Fatalf("Compile accepted %s: %+v", tt.policy, f)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestCompileCounts(t *testing.T) {
	f, err := Compile([]byte(`{"type": ["a", "b"], "data": {"object": {"amount": [{"numeric": [">=", 10, "<", 20.5]}, 7], "currency": [{"anything-but": ["usd", "eur"]}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if got := []int{f.Keys(), f.Combinations()}; !cmp.Equal(got, []int{3, 4}) {
		t.Errorf("keys, combinations = %v, want [3 4] (anything-but and a range count once each)", got)
	}
}

// TestSNSSafe: only exact strings and prefixes, whose meaning on a body
// SNS documents in full, go to SNS; exists (a value SNS calls empty, an
// object), anything-but (its page contradicts itself on arrays) and
// numbers are the deliver function's alone.
func TestSNSSafe(t *testing.T) {
	tests := []struct {
		policy string
		want   bool
	}{
		{`{"type": ["a", {"prefix": "b."}]}`, true},
		{`{"email": [{"suffix": "@example.com"}]}`, false},
		{`{"status": [{"equals-ignore-case": "paid"}]}`, false},
		{`{"data": {"object": {"status": ["paid"], "id": [{"prefix": "pi_"}]}}}`, true},
		{`{"a": {"b": [{"exists": true}]}}`, false},
		{`{"a": [{"exists": true}]}`, false},
		{`{"a": ["x", {"exists": true}]}`, false},
		{`{"a": [{"exists": false}]}`, false},
		{`{"a": [{"anything-but": ["x", "y"]}]}`, false},
		{`{"a": [{"anything-but": "x"}]}`, false},
		{`{"b": [{"anything-but": {"prefix": "t"}}]}`, false},
		{`{"a": [5]}`, false},
		{`{"a": [{"numeric": [">", 5]}]}`, false},
		{`{"a": [{"anything-but": [1, 2]}]}`, false},
		{`{"a": ["x"], "b": [{"numeric": ["=", 1]}]}`, false},
	}
	for _, tt := range tests {
		f, err := Compile([]byte(tt.policy))
		if err != nil {
			t.Fatalf("%s: %v", tt.policy, err)
		}
		if f.SNSSafe() != tt.want {
			t.Errorf("SNSSafe(%s) = %v, want %v", tt.policy, f.SNSSafe(), tt.want)
		}
	}
}

// TestMatch runs the operator table (SNS's documented rules) that the
// integration tests also run through the local stack.
func TestMatch(t *testing.T) {
	for _, tc := range cases.Operators {
		if tc.Doc == "" {
			t.Errorf("%s: no documentation section", tc.Operator)
		}
		f, err := Compile([]byte(tc.Policy))
		if err != nil {
			t.Fatalf("%s: %v", tc.Policy, err)
		}
		for _, b := range tc.Bodies {
			got, err := f.Match([]byte(b.Body))
			if err != nil {
				t.Errorf("%s: body %s: %v", tc.Operator, b.Body, err)
			}
			if got != b.Match {
				t.Errorf("%s (%s): policy %s body %s: Match = %v, want %v", tc.Operator, tc.Doc, tc.Policy, b.Body, got, b.Match)
			}
		}
		if got, _ := f.Match([]byte(`{"unrelated": true}`)); got != tc.Absent {
			t.Errorf("%s: a body without the policy's keys: Match = %v, want %v", tc.Operator, got, tc.Absent)
		}
	}
}

func TestMatchRefusesWhatSNSCannotRead(t *testing.T) {
	f, err := Compile([]byte(`{"a": [{"exists": false}]}`))
	if err != nil {
		t.Fatal(err)
	}
	bodies := []string{
		``,
		`a=1&b=2`,
		`["x"]`,
		`"text"`,
		`{"b": 1} {"c": 2}`,
		`{"b": 1, "b": 2}`,
		`{"b": "` + "\xff" + `"}`,
		`{"b": "` + "\uffff" + `"}`,
		`{"b": "` + "\x01" + `"}`,
	}
	for _, b := range bodies {
		ok, err := f.Match([]byte(b))
		if ok || !errors.Is(err, ErrNotJSON) {
			t.Errorf("Match(%q) = %v, %v; want false, ErrNotJSON", b, ok, err)
		}
	}
	var none *Filter
	if ok, err := none.Match([]byte("not json")); !ok || err != nil {
		t.Errorf("a nil filter: Match = %v, %v; want true, nil", ok, err)
	}
}

func FuzzMatch(f *testing.F) {
	for _, tc := range cases.Operators {
		for _, b := range tc.Bodies {
			f.Add(tc.Policy, b.Body)
		}
	}
	f.Fuzz(func(t *testing.T, policy, body string) {
		flt, err := Compile([]byte(policy))
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Compile error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if flt.Keys() > MaxKeys || flt.Combinations() > MaxCombinations {
			t.Fatalf("Compile accepted %d keys, %d combinations", flt.Keys(), flt.Combinations())
		}
		ok, err := flt.Match([]byte(body))
		if ok && err != nil {
			t.Fatalf("Match = true with error %v", err)
		}
		if err != nil && !errors.Is(err, ErrNotJSON) {
			t.Fatalf("Match error %v does not wrap ErrNotJSON", err)
		}
	})
}
