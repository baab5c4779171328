package transform

import (
	"errors"
	"fmt"
	"math/big"
	"reflect"
	"strings"

	"github.com/itchyny/gojq"
)

// What an expression's error says. gojq's messages preview the value they
// failed on ("cannot iterate over: string (\"tok_…\")"), and that value is
// the body's: the kind of the error goes into the delivery record and the
// log line, the preview only into Error.Detail (a DEBUG line).

// kind describes err without any value of the event: gojq's words up to
// the value, then the jq types of the values it names.
func (p *Program) kind(err error) string {
	var he *gojq.HaltError
	if errors.As(err, &he) {
		if he.Value() == nil {
			return "the expression halted without a value"
		}
		return fmt.Sprintf("the expression halted (halt_error) with a %s value, exit code %d", typeName(he.Value()), he.ExitCode())
	}
	var ve gojq.ValueError
	if errors.As(err, &ve) {
		v := ve.Value()
		if s, ok := v.(string); ok && p.literals[s] {
			// A message written in the expression, not taken from the body.
			return "the expression raised an error: " + short(s)
		}
		return fmt.Sprintf("the expression raised an error (error) with a %s value", typeName(v))
	}
	msg := err.Error()
	head, _, _ := strings.Cut(msg, ": ")
	if i := strings.IndexAny(head, `("`); i >= 0 {
		head = strings.TrimSpace(head[:i])
	}
	if types := valueTypes(err); len(types) > 0 {
		return "the expression failed: " + head + ": " + strings.Join(types, " and ")
	}
	return "the expression failed: " + head
}

// valueTypes are the jq types of the values an error of gojq's carries,
// read from its fields' types (never their values).
func valueTypes(err error) []string {
	v := reflect.ValueOf(err)
	for v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if v.Kind() != reflect.Struct {
		return nil
	}
	errType := reflect.TypeFor[error]()
	var types []string
	for i := range v.NumField() {
		f := v.Field(i)
		if f.Kind() != reflect.Interface {
			continue
		}
		if f.IsNil() {
			types = append(types, "null")
			continue
		}
		e := f.Elem()
		if e.Type().Implements(errType) {
			continue
		}
		types = append(types, kindName(e))
	}
	return types
}

// kindName is the jq type of a value of gojq's, from its Go kind.
func kindName(v reflect.Value) string {
	switch v.Kind() {
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int64, reflect.Float64:
		return "number"
	case reflect.String:
		if v.Type().Name() == "Number" {
			return "number"
		}
		return "string"
	case reflect.Slice:
		return "array"
	case reflect.Map:
		return "object"
	case reflect.Pointer:
		if v.Type() == reflect.TypeFor[*big.Int]() {
			return "number"
		}
	}
	return "value"
}

// stringLiterals are the plain strings the expression writes: an error
// raised with one of them is the author's message, safe to record.
func stringLiterals(q *gojq.Query) map[string]bool {
	lits := map[string]bool{}
	// The printed query quotes each literal; parsing the query's terms
	// would repeat the rewriter's walk, so the literals are read from the
	// source through gojq's own string syntax.
	src := q.String()
	for i := 0; i < len(src); i++ {
		if src[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(src) && src[j] != '"' {
			if src[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(src) {
			break
		}
		lit := src[i : j+1]
		if !strings.Contains(lit, `\(`) {
			var s string
			if q, err := gojq.Parse(lit); err == nil {
				if c := mustCode(q); c != nil {
					if v, ok := c.Run(nil).Next(); ok {
						s, _ = v.(string)
					}
				}
			}
			if s != "" {
				lits[s] = true
			}
		}
		i = j
	}
	return lits
}

func mustCode(q *gojq.Query) *gojq.Code {
	c, err := gojq.Compile(q)
	if err != nil {
		return nil
	}
	return c
}
