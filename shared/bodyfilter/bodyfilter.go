// Package bodyfilter evaluates a destination's body filter: a policy in
// Amazon SNS's filter-policy syntax (the MessageBody scope) over the fields
// of a JSON body. One implementation serves both sides: config validation
// compiles a policy with SNS's own limits (Compile), and the deliver
// function matches bodies with it (Filter.Match).
//
// The operators are the SNS ones Hookfan supports, with the meaning SNS's
// documentation gives them (the Amazon SNS Developer Guide's pages on
// string, numeric and key matching; cases.Operators cites the section of
// each rule):
//
//   - an exact string, case-sensitive, a prefix or a suffix of a string
//     value, or equals-ignore-case: the string equal to it but for case;
//   - a number, or numeric comparisons and ranges, of a number value, both
//     compared within ±1e9 at five decimal places (a value outside that
//     range compares with no number);
//   - anything-but a list of strings, of numbers, or a prefix: a value of
//     that kind which is none of them;
//   - "exists": true: the key holds a leaf value that is neither null nor
//     empty (not "", not [], not an object); "exists": false: the key is
//     missing or holds null, "" or [].
//
// A key whose value is an array matches when one of its elements does (so
// anything-but matches an array holding one value not listed). Keys nest
// through objects; under an array of objects, the nested keys must match
// within one element; where the body has no object at a nested key's
// parent, the nested key is missing. A body with no properties ({})
// matches no filter.
//
// A body matches only when it is one JSON object that SNS could read as it
// is: valid UTF-8 of the characters SQS carries (no U+FFFE, U+FFFF or control
// character but white space), no object with a repeated name. Anything else
// (a form-encoded body, a binary one) has no fields and matches no body
// filter, as SNS matches no MessageBody policy against a body it cannot
// parse.
package bodyfilter

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// SNS's limits on a filter policy.
const (
	// MaxKeys is how many keys with conditions a policy may have (SNS allows
	// five; counting every leaf key, nested or not, is the stricter of the
	// two readings of its documentation, so a policy that passes here is
	// never refused by SNS).
	MaxKeys = 5
	// MaxCombinations bounds the product of the condition counts of the keys.
	MaxCombinations = 150
	// MaxNumber bounds a number in a policy: SNS compares numbers from -1e9
	// to 1e9 (Filter policy constraints: numeric matching); Match compares
	// a body's number outside it with no number.
	MaxNumber = 1e9
	// MaxDecimals is the precision SNS compares numbers with, and Match
	// too (both sides rounded to five decimal places).
	MaxDecimals = 5
	// MaxDepth bounds the nesting of keys: Hookfan's own bound (SNS's
	// documentation states none for payload-based filtering).
	MaxDepth = 8
	// MaxStringBytes bounds a string value in a policy.
	MaxStringBytes = 1024
)

// ErrInvalid is matched by every problem Compile reports.
var ErrInvalid = errors.New("invalid body filter")

// Filter is a compiled body filter. The zero value is not usable; a nil
// *Filter matches every body.
type Filter struct {
	root *node
	// keys and combinations, as SNS counts them.
	keys, combinations int
	snsSafe            bool
}

// node is one object level of a policy: each key leads to a nested level
// or to the conditions on its value.
type node struct {
	names    []string // in policy order
	children map[string]*node
	leaves   map[string][]condition
}

type condKind int

const (
	condString condKind = iota
	condNumber
	condPrefix
	condSuffix
	condEqualsIgnoreCase
	condExists
	condAnythingBut       // strings or numbers
	condAnythingButPrefix // a string prefix
	condNumeric
)

// condition is one element of a key's condition list: the key matches when
// any of its conditions does.
type condition struct {
	kind    condKind
	str     string
	num     float64
	exists  bool
	strs    []string
	nums    []float64
	numeric []comparison
}

type comparison struct {
	op    string // ">", ">=", "<", "<=", "="
	value float64
}

// Problem is one thing wrong with a policy: Path names the key ("body",
// "body.data.amount[0]"), Msg says what is wrong and what would be valid.
type Problem struct {
	Path string
	Msg  string
}

func (p *Problem) Error() string { return p.Path + ": " + p.Msg }

// Unwrap makes every problem match ErrInvalid.
func (p *Problem) Unwrap() error { return ErrInvalid }

// Problems are every problem of one policy, in key order.
type Problems []*Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.Error()
	}
	return strings.Join(lines, "\n")
}

// Unwrap lets errors.Is and errors.As see each problem.
func (ps Problems) Unwrap() []error {
	out := make([]error, len(ps))
	for i, p := range ps {
		out[i] = p
	}
	return out
}

// Compile parses a policy. Every problem is reported at once, as Problems
// (each names the key path, what is wrong and what would be valid, and
// matches ErrInvalid).
func Compile(policy []byte) (*Filter, error) {
	c := &compiler{}
	var doc any
	dec := json.NewDecoder(bytes.NewReader(policy))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		c.add(nil, "not a JSON object: %v", err)
		return nil, c.problems
	}
	if dec.More() {
		c.add(nil, "data after the JSON object; remove it")
		return nil, c.problems
	}
	if err := checkDuplicateNames(policy); err != nil {
		c.add(nil, "%v; list each key once", err)
		return nil, c.problems
	}
	obj, ok := doc.(map[string]any)
	if !ok || len(obj) == 0 {
		c.add(nil, "want a JSON object of keys and conditions, such as {\"data\": {\"object\": {\"amount\": [{\"numeric\": [\">=\", 1000]}]}}}")
		return nil, c.problems
	}
	f := &Filter{root: c.object(obj, nil), combinations: 1, snsSafe: true}
	f.walk(f.root)
	if f.keys > MaxKeys {
		c.add(nil, "has %d keys with conditions; SNS allows at most %d per filter policy", f.keys, MaxKeys)
	}
	if f.combinations > MaxCombinations {
		c.add(nil, "has %d combinations of conditions (the product of each key's count); SNS allows at most %d", f.combinations, MaxCombinations)
	}
	if len(c.problems) > 0 {
		return nil, c.problems
	}
	return f, nil
}

func (f *Filter) walk(n *node) {
	for _, name := range n.names {
		if child, ok := n.children[name]; ok {
			f.walk(child)
			continue
		}
		conds := n.leaves[name]
		f.keys++
		f.combinations = min(f.combinations*len(conds), MaxCombinations+1)
		for _, c := range conds {
			if !c.snsSafe() {
				f.snsSafe = false
			}
		}
	}
}

// Keys is the number of keys with conditions, as SNS counts them.
func (f *Filter) Keys() int { return f.keys }

// Combinations is the policy's number of combinations, as SNS counts them.
func (f *Filter) Combinations() int { return f.combinations }

// SNSSafe reports whether SNS's own MessageBody filtering with this policy
// provably passes every JSON body Match accepts, so that SNS may filter
// before the queue (Match still runs after it). That holds when every
// condition is an exact string or a string prefix: SNS documents both for
// message bodies, case-sensitive, and that a key matches when one of its
// values does, arrays included. Everything else is left to Match alone:
//   - exists: SNS documents it only for leaf nodes with a non-null,
//     non-empty value; what it does with an object, an array of nulls or a
//     missing parent is not written down;
//   - anything-but: its documentation both says an array matches when
//     none of its elements is listed and shows one matching that holds a
//     listed element beside another;
//   - suffix and equals-ignore-case: newer than the rest, with no rule for
//     a body array checked here, and no word on how case folds beyond
//     ASCII (Match folds Unicode's simple case, strings.EqualFold);
//   - numbers: SNS compares them at its own five-decimal precision and
//     writes no rule for a body value outside ±1e9, or for a plain number
//     in a policy (it shows numeric "=").
func (f *Filter) SNSSafe() bool { return f.snsSafe }

func (c condition) snsSafe() bool {
	return c.kind == condString || c.kind == condPrefix
}

type compiler struct{ problems Problems }

func (c *compiler) add(path []string, format string, args ...any) {
	where := "body"
	if len(path) > 0 {
		where += "." + strings.Join(path, ".")
	}
	c.problems = append(c.problems, &Problem{Path: where, Msg: fmt.Sprintf(format, args...)})
}

func (c *compiler) object(obj map[string]any, path []string) *node {
	n := &node{children: map[string]*node{}, leaves: map[string][]condition{}}
	n.names = sortedKeys(obj)
	for _, name := range n.names {
		at := append(slices.Clone(path), name)
		switch {
		case name == "":
			c.add(path, "has an empty key; name the JSON field to match")
			continue
		case strings.HasPrefix(name, "$"):
			c.add(at, "keys starting with \"$\" are SNS operators ($or), which body filters do not support; list the conditions of one key in its array instead")
			continue
		case len(at) > MaxDepth:
			c.add(at, "is nested %d levels deep; use at most %d", len(at), MaxDepth)
			continue
		}
		switch v := obj[name].(type) {
		case map[string]any:
			if len(v) == 0 {
				c.add(at, "is an empty object; give the nested keys to match, or remove it")
				continue
			}
			n.children[name] = c.object(v, at)
		case []any:
			if len(v) == 0 {
				c.add(at, "is an empty list, which matches nothing; list at least one condition")
				continue
			}
			conds := make([]condition, 0, len(v))
			for i, e := range v {
				if cond, ok := c.condition(at, i, e); ok {
					conds = append(conds, cond)
				}
			}
			n.leaves[name] = conds
		default:
			c.add(at, "is %s; want a list of conditions, such as [\"paid\"] or [{\"prefix\": \"pi_\"}], or an object of nested keys", describe(v))
		}
	}
	return n
}

// sortedKeys returns obj's keys sorted, so problems are reported in a
// stable order.
func sortedKeys(obj map[string]any) []string {
	names := make([]string, 0, len(obj))
	for k := range obj {
		names = append(names, k)
	}
	slices.Sort(names)
	return names
}

func (c *compiler) condition(path []string, i int, v any) (condition, bool) {
	at := func() []string {
		p := slices.Clone(path)
		p[len(p)-1] += "[" + strconv.Itoa(i) + "]"
		return p
	}
	switch v := v.(type) {
	case string:
		if len(v) > MaxStringBytes {
			c.add(at(), "is a string of %d bytes; use at most %d", len(v), MaxStringBytes)
			return condition{}, false
		}
		return condition{kind: condString, str: v}, true
	case json.Number:
		n, ok := c.number(at(), v)
		return condition{kind: condNumber, num: n}, ok
	case map[string]any:
		if len(v) != 1 {
			c.add(at(), "has %d operators; write each condition as an object with one of prefix, suffix, equals-ignore-case, numeric, exists, anything-but", len(v))
			return condition{}, false
		}
		for op, arg := range v {
			return c.operator(at(), op, arg)
		}
	}
	c.add(at(), "is %s; a condition is a string, a number, or an object with one of prefix, suffix, equals-ignore-case, numeric, exists, anything-but", describe(v))
	return condition{}, false
}

func (c *compiler) operator(at []string, op string, arg any) (condition, bool) {
	switch op {
	case "prefix":
		s, ok := arg.(string)
		if !ok || s == "" || len(s) > MaxStringBytes {
			c.add(at, "prefix takes a non-empty string of at most %d bytes, such as {\"prefix\": \"pi_\"}; got %s", MaxStringBytes, describe(arg))
			return condition{}, false
		}
		return condition{kind: condPrefix, str: s}, true
	case "suffix", "equals-ignore-case":
		s, ok := arg.(string)
		if !ok || s == "" || len(s) > MaxStringBytes {
			c.add(at, "%s takes a non-empty string of at most %d bytes, such as {%q: %q}; got %s", op, MaxStringBytes, op, map[string]string{"suffix": "@example.com", "equals-ignore-case": "Paid"}[op], describe(arg))
			return condition{}, false
		}
		if op == "suffix" {
			return condition{kind: condSuffix, str: s}, true
		}
		return condition{kind: condEqualsIgnoreCase, str: s}, true
	case "exists":
		b, ok := arg.(bool)
		if !ok {
			c.add(at, "exists takes true or false; got %s", describe(arg))
			return condition{}, false
		}
		return condition{kind: condExists, exists: b}, true
	case "numeric":
		return c.numeric(at, arg)
	case "anything-but":
		return c.anythingBut(at, arg)
	}
	c.add(at, "operator %q is not supported; use prefix, suffix, equals-ignore-case, numeric, exists or anything-but (or a plain string or number for an exact match)", op)
	return condition{}, false
}

func (c *compiler) number(at []string, n json.Number) (float64, bool) {
	f, err := strconv.ParseFloat(string(n), 64)
	if err != nil || math.Abs(f) > MaxNumber {
		c.add(at, "%s is out of range; SNS compares numbers from -1e9 to 1e9", n)
		return 0, false
	}
	s := strings.ToLower(string(n))
	if i := strings.IndexByte(s, '.'); i >= 0 && !strings.ContainsAny(s, "e") && len(s)-i-1 > MaxDecimals {
		c.add(at, "%s has more than %d decimal places, the precision SNS compares numbers with; round it", n, MaxDecimals)
		return 0, false
	}
	return f, true
}

var lowerOps, upperOps = []string{">", ">="}, []string{"<", "<="}

func (c *compiler) numeric(at []string, arg any) (condition, bool) {
	list, ok := arg.([]any)
	bad := func() (condition, bool) {
		c.add(at, "numeric takes an operator and a number, or a lower and an upper bound: [\"=\", 100], [\">\", 0], [\">=\", 10, \"<\", 20]; got %s", describe(arg))
		return condition{}, false
	}
	if !ok || (len(list) != 2 && len(list) != 4) {
		return bad()
	}
	cond := condition{kind: condNumeric}
	for i := 0; i < len(list); i += 2 {
		op, okOp := list[i].(string)
		num, okNum := list[i+1].(json.Number)
		if !okOp || !okNum {
			return bad()
		}
		v, ok := c.number(at, num)
		if !ok {
			return condition{}, false
		}
		cond.numeric = append(cond.numeric, comparison{op: op, value: v})
	}
	first := cond.numeric[0]
	switch {
	case len(cond.numeric) == 1 && (first.op == "=" || slices.Contains(lowerOps, first.op) || slices.Contains(upperOps, first.op)):
		return cond, true
	case len(cond.numeric) == 2 && slices.Contains(lowerOps, first.op) && slices.Contains(upperOps, cond.numeric[1].op):
		if first.value >= cond.numeric[1].value {
			c.add(at, "numeric range [%s %g, %s %g] is empty; put the lower bound first and below the upper", first.op, first.value, cond.numeric[1].op, cond.numeric[1].value)
			return condition{}, false
		}
		return cond, true
	}
	return bad()
}

func (c *compiler) anythingBut(at []string, arg any) (condition, bool) {
	bad := func() (condition, bool) {
		c.add(at, "anything-but takes a string, a number, a non-empty list of strings or of numbers, or {\"prefix\": \"…\"}; got %s", describe(arg))
		return condition{}, false
	}
	switch v := arg.(type) {
	case string:
		return condition{kind: condAnythingBut, strs: []string{v}}, true
	case json.Number:
		n, ok := c.number(at, v)
		return condition{kind: condAnythingBut, nums: []float64{n}}, ok
	case map[string]any:
		p, ok := v["prefix"].(string)
		if len(v) != 1 || !ok || p == "" {
			return bad()
		}
		return condition{kind: condAnythingButPrefix, str: p}, true
	case []any:
		if len(v) == 0 {
			return bad()
		}
		cond := condition{kind: condAnythingBut}
		for _, e := range v {
			switch e := e.(type) {
			case string:
				cond.strs = append(cond.strs, e)
			case json.Number:
				n, ok := c.number(at, e)
				if !ok {
					return condition{}, false
				}
				cond.nums = append(cond.nums, n)
			default:
				return bad()
			}
		}
		if cond.strs != nil && cond.nums != nil {
			c.add(at, "anything-but mixes strings and numbers; list one kind")
			return condition{}, false
		}
		return cond, true
	}
	return bad()
}

func describe(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case bool:
		return strconv.FormatBool(v)
	case string:
		return "the string " + strconv.Quote(truncate(v, 64))
	case json.Number:
		return "the number " + string(v)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// checkDuplicateNames refuses a policy with a repeated key in one object:
// encoding/json would keep the last silently.
func checkDuplicateNames(policy []byte) error {
	dec := jsontext.NewDecoder(bytes.NewReader(policy))
	for {
		_, err := dec.ReadToken()
		if err == nil {
			continue
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
		var se *jsontext.SyntacticError
		if errors.As(err, &se) {
			return fmt.Errorf("%s", strings.TrimPrefix(se.Error(), "jsontext: "))
		}
		return err
	}
}
