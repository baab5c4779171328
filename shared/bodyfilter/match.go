package bodyfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookfan/hookfan/shared/message"
)

// ErrNotJSON means a body is not one JSON object SNS could read (see the
// package documentation); it matches no body filter.
var ErrNotJSON = errors.New("body is not a JSON object")

// Match reports whether body satisfies the filter. A nil filter matches
// every body. A body that is not one JSON object SNS could read matches no
// filter; err then says why (for the log), wrapping ErrNotJSON.
func (f *Filter) Match(body []byte) (bool, error) {
	if f == nil {
		return true, nil
	}
	// JSON holds no control character but white space, which the decoder
	// checks along with UTF-8; what is left of SQS's set is U+FFFE and
	// U+FFFF, which a body SNS carries cannot hold.
	if !message.JSONText(body) {
		return false, fmt.Errorf("%w: it holds invalid UTF-8, U+FFFE or U+FFFF", ErrNotJSON)
	}
	dec := jsontext.NewDecoder(bytes.NewReader(body))
	if dec.PeekKind() != '{' {
		if _, err := dec.ReadToken(); err != nil {
			return false, fmt.Errorf("%w: %v", ErrNotJSON, err)
		}
		return false, fmt.Errorf("%w: its top level is not an object", ErrNotJSON)
	}
	obj, err := readGuided(dec, f.root)
	if err != nil {
		return false, fmt.Errorf("%w: %v", ErrNotJSON, err)
	}
	if _, err := dec.ReadToken(); !errors.Is(err, io.EOF) {
		return false, fmt.Errorf("%w: data after the object", ErrNotJSON)
	}
	// SNS matches no policy against a body without properties, not even
	// "exists": false (Key matching: it needs at least one present).
	if obj.members == 0 {
		return false, nil
	}
	return obj.object(f.root), nil
}

type valueKind byte

const (
	vNull   valueKind = iota // null
	vBool                    // true or false
	vString                  // a string
	vNumber                  // a number (num is ±Inf beyond float64)
	vArray                   // an array, its elements in arr
	vObject                  // an object, the policy's keys of it in obj
	vStruct                  // an object or array under a key with conditions: not a leaf, not read
)

// value is the part of a body the filter reads: the values under the
// policy's keys, nothing else.
type value struct {
	kind valueKind
	str  string
	num  float64
	arr  []value
	obj  map[string]value
	// members counts an object's members, read or not.
	members int
}

// readGuided reads the next value; objects keep only the names n has
// (nil: none), and arrays are read element by element under the same n.
func readGuided(dec *jsontext.Decoder, n *node) (value, error) {
	switch dec.PeekKind() {
	case '{':
		if _, err := dec.ReadToken(); err != nil {
			return value{}, err
		}
		v := value{kind: vObject}
		for dec.PeekKind() != '}' {
			tok, err := dec.ReadToken()
			if err != nil {
				return value{}, err
			}
			v.members++
			name := tok.String()
			var child *node
			var leaf bool
			if n != nil {
				child = n.children[name]
				_, leaf = n.leaves[name]
			}
			var got value
			switch {
			case child != nil:
				got, err = readGuided(dec, child)
			case leaf:
				got, err = readLeaf(dec)
			default:
				err = dec.SkipValue()
			}
			if err != nil {
				return value{}, err
			}
			if child != nil || leaf {
				if v.obj == nil {
					v.obj = map[string]value{}
				}
				v.obj[name] = got
			}
		}
		_, err := dec.ReadToken()
		return v, err
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return value{}, err
		}
		v := value{kind: vArray}
		for dec.PeekKind() != ']' {
			e, err := readGuided(dec, n)
			if err != nil {
				return value{}, err
			}
			v.arr = append(v.arr, e)
		}
		_, err := dec.ReadToken()
		return v, err
	default:
		return readScalar(dec)
	}
}

// readLeaf reads the value under a key with conditions: a scalar, or an
// array whose scalar elements are kept; an object, or an array in the
// array, is a structure, not a leaf.
func readLeaf(dec *jsontext.Decoder) (value, error) {
	switch dec.PeekKind() {
	case '{':
		return value{kind: vStruct}, dec.SkipValue()
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return value{}, err
		}
		v := value{kind: vArray}
		for dec.PeekKind() != ']' {
			var e value
			var err error
			if k := dec.PeekKind(); k == '{' || k == '[' {
				e, err = value{kind: vStruct}, dec.SkipValue()
			} else {
				e, err = readScalar(dec)
			}
			if err != nil {
				return value{}, err
			}
			v.arr = append(v.arr, e)
		}
		_, err := dec.ReadToken()
		return v, err
	default:
		return readScalar(dec)
	}
}

func readScalar(dec *jsontext.Decoder) (value, error) {
	tok, err := dec.ReadToken()
	if err != nil {
		return value{}, err
	}
	switch tok.Kind() {
	case '"':
		return value{kind: vString, str: tok.String()}, nil
	case '0':
		f, err := tok.Float()
		if err != nil {
			// Beyond float64: a value, outside the range SNS compares.
			f = math.Copysign(math.Inf(1), f)
		}
		return value{kind: vNumber, num: f}, nil
	case 't', 'f':
		return value{kind: vBool}, nil
	default:
		return value{kind: vNull}, nil
	}
}

// object reports whether v, an object, satisfies every key of n.
func (v value) object(n *node) bool {
	for _, name := range n.names {
		got, present := v.obj[name]
		if child, ok := n.children[name]; ok {
			if !got.nested(present, child) {
				return false
			}
			continue
		}
		if !slices.ContainsFunc(n.leaves[name], func(c condition) bool { return c.match(present, got) }) {
			return false
		}
	}
	return true
}

// nested reports whether v, the body's value at a policy key with nested
// keys, satisfies them: an object must; under an array of objects, one
// element must satisfy the whole level. Where the body has no object at
// the key (it is missing, null, a scalar), the nested keys are missing:
// only "exists": false can hold.
func (v value) nested(present bool, child *node) bool {
	if present {
		switch v.kind {
		case vObject:
			return v.object(child)
		case vArray:
			objects := false
			for _, e := range v.arr {
				if e.kind == vObject {
					objects = true
					if e.object(child) {
						return true
					}
				}
			}
			if objects {
				return false
			}
		}
	}
	return value{kind: vObject}.object(child)
}

// leafState is what a key's value is to "exists".
type leafState int

const (
	stateEmpty  leafState = iota // missing, null, "", or an array of no value
	stateValue                   // a non-empty string, a number, a boolean, or an array holding one
	stateStruct                  // an object (or only structures in an array): not a leaf
)

func (v value) state() leafState {
	switch v.kind {
	case vString:
		if v.str == "" {
			return stateEmpty
		}
		return stateValue
	case vNumber, vBool:
		return stateValue
	case vStruct, vObject:
		return stateStruct
	case vArray:
		st := stateEmpty
		for _, e := range v.arr {
			switch e.state() {
			case stateValue:
				return stateValue
			case stateStruct:
				st = stateStruct
			}
		}
		return st
	}
	return stateEmpty
}

// scalars are the values a key's conditions compare: its value, or its
// array's elements.
func (v value) scalars() []value {
	if v.kind == vArray {
		return v.arr
	}
	return []value{v}
}

// match reports whether a key's value satisfies one condition; on an
// array, some element must satisfy it (for anything-but too: some element
// is not one of the values).
func (c condition) match(present bool, v value) bool {
	if c.kind == condExists {
		st := stateEmpty
		if present {
			st = v.state()
		}
		if c.exists {
			return st == stateValue
		}
		return st == stateEmpty
	}
	if !present {
		return false
	}
	return slices.ContainsFunc(v.scalars(), c.matchOne)
}

// matchOne reports whether one scalar satisfies the condition.
func (c condition) matchOne(v value) bool {
	switch c.kind {
	case condString:
		return v.kind == vString && v.str == c.str
	case condPrefix:
		return v.kind == vString && strings.HasPrefix(v.str, c.str)
	case condSuffix:
		return v.kind == vString && strings.HasSuffix(v.str, c.str)
	case condEqualsIgnoreCase:
		return v.kind == vString && strings.EqualFold(v.str, c.str)
	case condAnythingButPrefix:
		return v.kind == vString && !strings.HasPrefix(v.str, c.str)
	case condAnythingBut:
		if c.nums == nil {
			return v.kind == vString && !slices.Contains(c.strs, v.str)
		}
		x, ok := fixed(v)
		return ok && !slices.ContainsFunc(c.nums, func(n float64) bool { y, _ := fixedNum(n); return y == x })
	case condNumber:
		x, ok := fixed(v)
		y, _ := fixedNum(c.num)
		return ok && x == y
	case condNumeric:
		x, ok := fixed(v)
		return ok && c.inRange(x)
	}
	return false
}

// fixed is a number as SNS compares it: within ±1e9, to five decimal
// places. Anything else compares with no number.
func fixed(v value) (int64, bool) {
	if v.kind != vNumber {
		return 0, false
	}
	return fixedNum(v.num)
}

func fixedNum(x float64) (int64, bool) {
	if math.IsNaN(x) || math.Abs(x) > MaxNumber {
		return 0, false
	}
	return int64(math.Round(x * decimalScale)), true
}

// decimalScale is 10^MaxDecimals.
const decimalScale = 1e5

func (c condition) inRange(x int64) bool {
	for _, cmp := range c.numeric {
		bound, _ := fixedNum(cmp.value)
		ok := false
		switch cmp.op {
		case ">":
			ok = x > bound
		case ">=":
			ok = x >= bound
		case "<":
			ok = x < bound
		case "<=":
			ok = x <= bound
		case "=":
			ok = x == bound
		}
		if !ok {
			return false
		}
	}
	return true
}
