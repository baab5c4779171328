package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/go-json-experiment/json/jsontext"
)

// What a decoded value is charged, an estimate of its Go size on a 64-bit
// machine (chosen, not measured; TestHostileChargesStayWithinTheBudget
// checks the totals): each value's slot
// in its array (an interface, and room for the array's growth) or object
// (key, value and the map's overhead), a string's or a number's bytes and
// header, an object's or array's header.
const (
	costArrayElem = 40
	costObjectKey = 96
	costString    = 16
	costNumber    = 16
	costObject    = 64
	costArray     = 32
	// checkEvery is how many tokens pass between two looks at the clock.
	checkEvery = 4096
)

// decode reads exactly one JSON value, numbers kept exact (json.Number),
// charging ev token by token: a body too large to transform within the
// budget stops the decoding where it passes it, not after.
func decode(body []byte, ev *evaluation) (any, error) {
	if err := ev.charge(int64(len(body)), fmt.Sprintf("the body (%s)", size(int64(len(body))))); err != nil {
		return nil, tooLarge(len(body), ev)
	}
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), jsontext.AllowDuplicateNames(true), jsontext.AllowInvalidUTF8(true))
	type frame struct {
		arr     []any
		obj     map[string]any
		key     string
		haveKey bool
		isObj   bool
	}
	var (
		stack []frame
		root  any
		done  bool
		n     int
	)
	// put places a finished value in its parent, or makes it the root.
	put := func(v any) {
		if len(stack) == 0 {
			root, done = v, true
			return
		}
		f := &stack[len(stack)-1]
		if f.isObj {
			f.obj[f.key] = v
			f.key, f.haveKey = "", false
			return
		}
		f.arr = append(f.arr, v)
	}
	for !done {
		if n++; n%checkEvery == 0 {
			if err := ev.Err(); err != nil {
				return nil, err
			}
		}
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, notJSON(err)
		}
		var cost int64
		if len(stack) > 0 {
			if f := &stack[len(stack)-1]; f.isObj && !f.haveKey && tok.Kind() == '"' {
				// A member name.
				k := tok.String()
				if err := ev.charge(costObjectKey+int64(len(k)), "the decoded body"); err != nil {
					return nil, tooLarge(len(body), ev)
				}
				f.key, f.haveKey = k, true
				continue
			} else if !f.isObj {
				cost = costArrayElem
			}
		}
		var v any
		switch tok.Kind() {
		case 'n':
			v = nil
		case 't', 'f':
			v = tok.Bool()
		case '"':
			s := tok.String()
			cost += costString + int64(len(s))
			v = s
		case '0':
			s := tok.String()
			cost += costNumber + int64(len(s))
			v = json.Number(s)
		case '{':
			if err := ev.charge(cost+costObject, "the decoded body"); err != nil {
				return nil, tooLarge(len(body), ev)
			}
			stack = append(stack, frame{obj: map[string]any{}, isObj: true})
			continue
		case '[':
			if err := ev.charge(cost+costArray, "the decoded body"); err != nil {
				return nil, tooLarge(len(body), ev)
			}
			stack = append(stack, frame{arr: []any{}})
			continue
		case '}':
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			put(f.obj)
			continue
		case ']':
			f := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			put(f.arr)
			continue
		}
		if err := ev.charge(cost, "the decoded body"); err != nil {
			return nil, tooLarge(len(body), ev)
		}
		put(v)
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, errors.New("the body is not JSON (more than one value, or data after the value); a transform reshapes JSON bodies only")
	}
	return root, nil
}

// tooLarge is the error for a body whose decoding passes the budget.
func tooLarge(n int, ev *evaluation) error {
	return &boundError{fmt.Sprintf("the body (%s) is too large to transform within the memory bound (%s per event: half the function's memory shared by the events it works on at once; raise functions.deliverMemoryMB or lower the lane's batchSize)", size(int64(n)), size(ev.limit))}
}

// notJSON describes a decoding error without quoting the body.
func notJSON(err error) error {
	var se *jsontext.SyntacticError
	var problem string
	switch {
	case errors.Is(err, io.EOF) && !errors.As(err, &se):
		problem = "empty"
	case errors.Is(err, io.ErrUnexpectedEOF):
		problem = "it ends early"
	case errors.As(err, &se):
		problem = fmt.Sprintf("syntax error at byte %d", se.ByteOffset)
	default:
		problem = "unreadable"
	}
	return fmt.Errorf("the body is not JSON (%s); a transform reshapes JSON bodies only", problem)
}
