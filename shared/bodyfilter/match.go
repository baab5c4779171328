package bodyfilter

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
	return obj.object(f.root), nil
}

type valueKind byte

const (
	vOther valueKind = iota // null, true, false, or a structure not read
	vString
	vNumber
	vArray
	vObject
)

// value is the part of a body the filter reads: the values under the
// policy's keys, nothing else.
type value struct {
	kind valueKind
	str  string
	num  float64
	arr  []value
	obj  map[string]value
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
// array whose scalar elements are kept.
func readLeaf(dec *jsontext.Decoder) (value, error) {
	switch dec.PeekKind() {
	case '{':
		return value{kind: vOther}, dec.SkipValue()
	case '[':
		if _, err := dec.ReadToken(); err != nil {
			return value{}, err
		}
		v := value{kind: vArray}
		for dec.PeekKind() != ']' {
			var e value
			var err error
			if k := dec.PeekKind(); k == '{' || k == '[' {
				e, err = value{kind: vOther}, dec.SkipValue()
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
			return value{kind: vOther}, nil // beyond float64: compares with nothing
		}
		return value{kind: vNumber, num: f}, nil
	default:
		return value{kind: vOther}, nil
	}
}

// object reports whether v, an object, satisfies every key of n: a nested
// key needs its parent present (as SNS's MessageBody filtering does); under
// an array of objects, one element must satisfy the whole level.
func (v value) object(n *node) bool {
	for _, name := range n.names {
		got, present := v.obj[name]
		if child, ok := n.children[name]; ok {
			switch {
			case !present:
				return false
			case got.kind == vObject:
				if !got.object(child) {
					return false
				}
			case got.kind == vArray:
				if !slices.ContainsFunc(got.arr, func(e value) bool { return e.kind == vObject && e.object(child) }) {
					return false
				}
			default:
				return false
			}
			continue
		}
		values := []value{got}
		if got.kind == vArray {
			values = got.arr
		}
		if !slices.ContainsFunc(n.leaves[name], func(c condition) bool { return c.match(present, values) }) {
			return false
		}
	}
	return true
}

// match reports whether a key's values (its value, or its array's
// elements) satisfy one condition.
func (c condition) match(present bool, values []value) bool {
	if c.kind == condExists {
		return present == c.exists
	}
	if !present {
		return false
	}
	switch c.kind {
	case condString:
		return slices.ContainsFunc(values, func(v value) bool { return v.kind == vString && v.str == c.str })
	case condNumber:
		return slices.ContainsFunc(values, func(v value) bool { return v.kind == vNumber && v.num == c.num })
	case condPrefix:
		return slices.ContainsFunc(values, func(v value) bool { return v.kind == vString && strings.HasPrefix(v.str, c.str) })
	case condAnythingBut:
		return !slices.ContainsFunc(values, func(v value) bool {
			return v.kind == vString && slices.Contains(c.strs, v.str) || v.kind == vNumber && slices.Contains(c.nums, v.num)
		})
	case condAnythingButPrefix:
		return !slices.ContainsFunc(values, func(v value) bool { return v.kind != vString || strings.HasPrefix(v.str, c.str) })
	case condNumeric:
		return slices.ContainsFunc(values, func(v value) bool { return v.kind == vNumber && c.inRange(v.num) })
	}
	return false
}

func (c condition) inRange(x float64) bool {
	for _, cmp := range c.numeric {
		ok := false
		switch cmp.op {
		case ">":
			ok = x > cmp.value
		case ">=":
			ok = x >= cmp.value
		case "<":
			ok = x < cmp.value
		case "<=":
			ok = x <= cmp.value
		case "=":
			ok = x == cmp.value
		}
		if !ok {
			return false
		}
	}
	return true
}
