package config

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The configuration is decoded by go-json-experiment/json, which refuses
// a member that names no field, a name that matches a field only when
// case is ignored (encoding/json would take "secretname" for secretName)
// and a name written twice in one object (encoding/json would let the
// last win), and says where with a JSON pointer. This file turns its
// errors into the configuration's style: the field's path as validation
// writes it (destinations[0].retry.schedule), what is wrong, and the fix.
//
// The library stops at its first problem. To report every one at once, as
// Validate does, the member at fault is left out of the document (an
// array element at fault is replaced by its type's zero value, so that
// the indexes after it stay true) and the document is decoded again, up
// to maxDecodeProblems times.

// maxDecodeProblems bounds the problems reported, and the decodes run, for
// one document.
const maxDecodeProblems = 20

// decodeOptions are the library's strict settings; the last two are its
// defaults, said here because the checks depend on them.
func decodeOptions() json.Options {
	return json.JoinOptions(
		json.RejectUnknownMembers(true),
		json.MatchCaseInsensitiveNames(false),
		jsontext.AllowDuplicateNames(false),
	)
}

// decodeStrict decodes the JSON document data into v, a pointer. root
// names the document in the paths of its problems: "" for the
// configuration, whose fields are at the top, or a name such as "sources"
// for an environment variable's slice of it.
func decodeStrict(data []byte, v any, root string) error {
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return errors.New("decode config: empty document; want a JSON object")
	}
	rv := reflect.ValueOf(v).Elem()
	var p problems
	doc := data
	tried := map[jsontext.Pointer]bool{}
	for {
		rv.SetZero()
		err := json.Unmarshal(doc, v, decodeOptions())
		if err == nil {
			return errors.Join(p...)
		}
		ptr, repeats, problem := describeDecodeError(doc, err, rv.Type(), root)
		if problem == nil {
			// A syntax error, or trailing data: the document is read
			// through to find it with its line and column (only the
			// first document, the user's, can hold one: an edited one
			// is re-encoded from tokens the library read).
			if _, serr := edit(doc, "", false, nil); serr != nil {
				return serr
			}
			return fmt.Errorf("decode config: %w", err)
		}
		if tried[ptr] {
			// Left out or replaced by its zero value, the value still
			// fails: the problem is already told.
			return errors.Join(p...)
		}
		p = append(p, problem)
		if ptr == "" {
			return errors.Join(p...)
		}
		if len(p) == maxDecodeProblems {
			p = append(p, fmt.Errorf("decode config: stopped after the first %d problems; there may be more", maxDecodeProblems))
			return errors.Join(p...)
		}
		tried[ptr] = true
		next, err := edit(doc, ptr, repeats, zeroValue(typeAt(rv.Type(), ptr)))
		if err != nil {
			return err
		}
		doc = next
	}
}

// describeDecodeError says what is wrong at the JSON pointer ptr and what
// to do. problem is nil for a syntax error; repeats is true when the
// problem is a name written twice (the first is kept).
func describeDecodeError(doc []byte, err error, t reflect.Type, root string) (ptr jsontext.Pointer, repeats bool, problem error) {
	var synErr *jsontext.SyntacticError
	if errors.As(err, &synErr) {
		if !errors.Is(synErr.Err, jsontext.ErrDuplicateName) {
			return "", false, nil
		}
		return synErr.JSONPointer, true, fmt.Errorf("%s: is set twice in the same object; keep one", fieldPath(t, synErr.JSONPointer, root))
	}
	var semErr *json.SemanticError
	if !errors.As(err, &semErr) {
		return "", false, fmt.Errorf("decode config: %w", err)
	}
	ptr = semErr.JSONPointer
	at := fieldPath(t, ptr, root)
	if errors.Is(semErr.Err, json.ErrUnknownName) {
		return ptr, false, fmt.Errorf("%s: unknown field; %s", at, suggestField(t, ptr))
	}
	return ptr, false, fmt.Errorf("%s: %s", at, describeTypeError(doc, semErr))
}

// suggestField is the fix for the unknown member at ptr: the name of a
// field of the same object that the member resembles, or where to look.
func suggestField(t reflect.Type, ptr jsontext.Pointer) string {
	key := ptr.LastToken()
	var names []string
	if parent := typeAt(t, ptr.Parent()); parent != nil && parent.Kind() == reflect.Struct {
		for _, f := range jsonFields(parent) {
			names = append(names, f.name)
		}
	}
	for _, name := range names {
		if strings.EqualFold(name, key) {
			return fmt.Sprintf("did you mean %s? (field names are case-sensitive)", name)
		}
	}
	if name := closest(key, names); name != "" {
		return fmt.Sprintf("did you mean %s?", name)
	}
	return "check its spelling against the configuration reference, docs/configuration.md#configuration-reference"
}

// closest is the name in names that key most likely misspells: the
// nearest within an edit distance of a third of key's length (at least 1,
// at most 2), or else the one name that begins with key ("timeout" for
// timeoutSeconds); "" when none does.
func closest(key string, names []string) string {
	lk := strings.ToLower(key)
	limit := min(2, max(1, utf8.RuneCountInString(key)/3))
	best, bestDist := "", limit+1
	for _, name := range names {
		if d := editDistance(lk, strings.ToLower(name)); d < bestDist {
			best, bestDist = name, d
		}
	}
	if best != "" {
		return best
	}
	if utf8.RuneCountInString(key) < 4 {
		return ""
	}
	var prefixed []string
	for _, name := range names {
		if strings.HasPrefix(strings.ToLower(name), lk) {
			prefixed = append(prefixed, name)
		}
	}
	if len(prefixed) == 1 {
		return prefixed[0]
	}
	return ""
}

// editDistance counts the insertions, deletions, substitutions and swaps
// of adjacent characters that turn a into b (optimal string alignment).
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

// describeTypeError says which value has the wrong JSON type and what the
// field takes: `"10" is a string; want a number`.
func describeTypeError(doc []byte, e *json.SemanticError) string {
	value := e.JSONValue
	if len(value) == 0 && e.ByteOffset >= 0 && e.ByteOffset < int64(len(doc)) {
		dec := jsontext.NewDecoder(bytes.NewReader(doc[e.ByteOffset:]), jsontext.AllowDuplicateNames(true))
		value, _ = dec.ReadValue()
	}
	kind := e.JSONKind
	if len(value) > 0 {
		kind = value.Kind()
	}
	want := describeGoType(e.GoType)
	var got string
	switch kind {
	case '"', '0', 't', 'f', 'n':
		got = shortValue(value)
	}
	switch {
	case got == "":
		return fmt.Sprintf("got %s; want %s", describeKind(kind), want)
	case e.GoType == durationType && kind == '"':
		return fmt.Sprintf("%s is not a duration; want %s", got, want)
	case e.GoType == durationType:
	case kind == '0' && isInteger(e.GoType) && strings.ContainsAny(got, ".eE"):
		return fmt.Sprintf("%s is not a whole number; write one without a fraction or exponent", got)
	case kind == '0' && isInteger(e.GoType):
		return fmt.Sprintf("%s is out of range; want %s", got, want)
	}
	switch {
	default:
		return fmt.Sprintf("%s is %s; want %s", got, describeKind(kind), want)
	}
}

func isInteger(t reflect.Type) bool {
	if t == nil {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}

// shortValue is a scalar JSON value as written, cut to 40 characters.
func shortValue(v jsontext.Value) string {
	s := string(v)
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	r := []rune(s)
	return string(r[:39]) + "…"
}

func describeKind(k jsontext.Kind) string {
	switch k {
	case '"':
		return "a string"
	case '0':
		return "a number"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	case '{':
		return "an object"
	case '[':
		return "an array"
	}
	return "a JSON value"
}

func describeGoType(t reflect.Type) string {
	if t == nil {
		return "another JSON type"
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch {
	case t == durationType:
		return `a duration string such as "30s", "2m" or "1h30m"`
	case t == bodyFilterType:
		return "a filter policy object"
	case isInteger(t):
		if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
			return "a whole number, 0 or more"
		}
		return "a whole number"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	default:
		return "an object"
	}
}

var bodyFilterType = reflect.TypeFor[BodyFilter]()

// zeroValue is the zero value of t as the library writes it, or null.
func zeroValue(t reflect.Type) jsontext.Value {
	if t == nil {
		return jsontext.Value("null")
	}
	v, err := json.Marshal(reflect.Zero(t).Interface())
	if err != nil {
		return jsontext.Value("null")
	}
	return v
}

// fieldPath renders a JSON pointer into the document of Go type t as the
// configuration names fields: destinations[0].retry.schedule.
func fieldPath(t reflect.Type, ptr jsontext.Pointer, root string) string {
	var b strings.Builder
	b.WriteString(root)
	for tok := range ptr.Tokens() {
		for t != nil && t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		index := false
		var next reflect.Type
		switch {
		case t == nil || decodesItself(t):
			_, err := strconv.ParseUint(tok, 10, 64)
			index = err == nil
		case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
			index, next = true, t.Elem()
		case t.Kind() == reflect.Struct:
			next = fieldType(t, tok)
		case t.Kind() == reflect.Map:
			next = t.Elem()
		}
		switch {
		case index:
			fmt.Fprintf(&b, "[%s]", tok)
		case tok != "" && isFieldPath(tok) && !strings.Contains(tok, "."):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(tok)
		default:
			fmt.Fprintf(&b, "[%q]", tok)
		}
		t = next
	}
	if b.Len() == 0 {
		return "(top level)"
	}
	return b.String()
}

// typeAt is the Go type of the value at ptr in a document of type t, or
// nil where the document holds what no Go type describes (the inside of
// a body filter).
func typeAt(t reflect.Type, ptr jsontext.Pointer) reflect.Type {
	for tok := range ptr.Tokens() {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		if decodesItself(t) {
			return nil
		}
		switch t.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map:
			t = t.Elem()
		case reflect.Struct:
			t = fieldType(t, tok)
		default:
			return nil
		}
		if t == nil {
			return nil
		}
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
}

// decodesItself reports whether t reads its own JSON (a body filter, a
// duration): what is inside has no Go type.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[json.UnmarshalerFrom]())
}

type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists a struct's members by their JSON names, as the library
// names them: the tag's name, or else the Go name; an embedded struct
// without a name has its fields inlined.
func jsonFields(t reflect.Type) []jsonField {
	var out []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, _, _ := strings.Cut(tag, ",")
		if tag == "-" {
			continue
		}
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				out = append(out, jsonFields(ft)...)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out = append(out, jsonField{name, f.Type})
	}
	return out
}

func fieldType(t reflect.Type, name string) reflect.Type {
	for _, f := range jsonFields(t) {
		if f.name == name {
			return f.typ
		}
	}
	return nil
}

// edit copies doc without the object member at ptr (without the ones
// after the first, with repeats), or with zero for the array element at
// ptr. It reads the whole document, so it reports the syntax error or the
// trailing data that a decode stopped before, with its line and column.
func edit(doc []byte, ptr jsontext.Pointer, repeats bool, zero jsontext.Value) ([]byte, error) {
	dec := jsontext.NewDecoder(bytes.NewReader(doc), jsontext.AllowDuplicateNames(true))
	var out bytes.Buffer
	enc := jsontext.NewEncoder(&out, jsontext.AllowDuplicateNames(true))
	if err := copyValue(dec, enc, "", ptr, repeats, zero); err != nil {
		return nil, fmt.Errorf("decode config: %w", DescribeSyntaxError(doc, err))
	}
	if rest := bytes.TrimLeft(doc[dec.InputOffset():], " \t\r\n"); len(rest) > 0 {
		line, col := LineColumn(doc, int64(len(doc)-len(rest)))
		return nil, fmt.Errorf("decode config: unexpected data after the JSON object at line %d, column %d; remove it", line, col)
	}
	return out.Bytes(), nil
}

// copyValue copies the value at the decoder, at pointer at, to the encoder,
// applying edit's change to the value at target.
func copyValue(dec *jsontext.Decoder, enc *jsontext.Encoder, at, target jsontext.Pointer, repeats bool, zero jsontext.Value) error {
	if target == "" || !at.Contains(target) {
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		return enc.WriteValue(v)
	}
	tok, err := dec.ReadToken()
	if err != nil {
		return err
	}
	if err := enc.WriteToken(tok); err != nil {
		return err
	}
	switch tok.Kind() {
	case '{':
		seen := false
		for dec.PeekKind() != '}' {
			name, err := dec.ReadToken()
			if err != nil {
				return err
			}
			p := at.AppendToken(name.String())
			if p == target && (!repeats || seen) {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				continue
			}
			seen = seen || p == target
			if err := enc.WriteToken(name); err != nil {
				return err
			}
			if err := copyValue(dec, enc, p, target, repeats, zero); err != nil {
				return err
			}
		}
	case '[':
		for i := 0; dec.PeekKind() != ']'; i++ {
			p := at.AppendToken(strconv.Itoa(i))
			if p == target {
				if err := dec.SkipValue(); err != nil {
					return err
				}
				if err := enc.WriteValue(zero); err != nil {
					return err
				}
				continue
			}
			if err := copyValue(dec, enc, p, target, repeats, zero); err != nil {
				return err
			}
		}
	default:
		return nil
	}
	end, err := dec.ReadToken()
	if err != nil {
		return err
	}
	return enc.WriteToken(end)
}
