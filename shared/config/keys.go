package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// encoding/json matches an object's keys to a struct's fields ignoring
// case, so DisallowUnknownFields lets "secretname" through as secretName,
// and of two keys that differ only in case (or of one key written twice)
// the last silently wins. checkKeys walks the document a strict decode
// accepted and refuses both, naming the field by its path.

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// checkKeys reports every key of data that names a field of t's structs
// only when case is ignored, and every key repeated within one object.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	var p problems
	if err := walkKeys(dec, t, "", &p); err != nil {
		return fmt.Errorf("decode config: %w", err)
	}
	return errors.Join(p...)
}

// walkKeys reads the value at the decoder's next token, whose Go type is t.
func walkKeys(dec *json.Decoder, t reflect.Type, at string, p *problems) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	// A type that decodes itself (a body filter, a duration) has no fields.
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return skipRest(dec)
	}
	switch {
	case delim == '{' && t.Kind() == reflect.Struct:
		return walkObject(dec, fieldsOf(t), at, p)
	case delim == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		for i := 0; dec.More(); i++ {
			if err := walkKeys(dec, t.Elem(), fmt.Sprintf("%s[%d]", at, i), p); err != nil {
				return err
			}
		}
		_, err := dec.Token() // ']'
		return err
	default:
		return skipRest(dec)
	}
}

// walkObject reads the members of an object after its '{'.
func walkObject(dec *json.Decoder, fields map[string]reflect.Type, at string, p *problems) error {
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		key, _ := tok.(string)
		path := key
		if at != "" {
			path = at + "." + key
		}
		if seen[key] {
			p.add(path, "is set twice in the same object; keep one (the last would silently win)")
		}
		seen[key] = true
		ft, known := fields[key]
		if !known {
			for name := range fields {
				if strings.EqualFold(name, key) {
					p.add(path, "unknown field; did you mean %s? (field names are case-sensitive)", name)
					break
				}
			}
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		if err := walkKeys(dec, ft, path, p); err != nil {
			return err
		}
	}
	_, err := dec.Token() // '}'
	return err
}

// fieldsOf maps the JSON names of a struct's fields to their types.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	out := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

// skipValue reads one whole value.
func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// skipRest reads the rest of an object or array whose opening token has
// been read.
func skipRest(dec *json.Decoder) error {
	for depth := 1; depth > 0; {
		tok, err := dec.Token()
		if err != nil {
			return err
		}
		if d, ok := tok.(json.Delim); ok {
			if d == '{' || d == '[' {
				depth++
			} else {
				depth--
			}
		}
	}
	return nil
}
