package provider

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// field is the value found at one path of a JSON body.
type field struct {
	found bool
	kind  jsontext.Kind // '"' string, '0' number, or another value's kind
	text  string        // a string unescaped, a number as written
	valid bool          // the string is valid UTF-8 after unescaping
}

// readFields reads the values at paths (each a list of nested object keys)
// from a JSON body, as a subscriber's JSON parser reads them: the body must
// be exactly one JSON document (what json.Valid accepts: invalid UTF-8 in
// strings is tolerated, and reported per value), keys match exactly after
// unescaping, and a key on the way to a wanted value, or the wanted key
// itself, that appears twice in the same object is ErrDuplicateKey, since
// parsers disagree on which one counts; a key differing from it only in
// case ("ID" beside "id") counts as a second appearance. Anything but one document is
// ErrNotJSON, which takes precedence.
//
// text reports that the whole body is valid UTF-8. The read checks it as
// it goes (outside strings a JSON document is ASCII), which spares ingest
// a pass over the body; a document with invalid UTF-8 is read a second
// time, tolerating it.
//
// Values no path goes through are read by the tokenizer without being
// decoded: on large bodies this costs about as much as the HMAC.
func readFields(body []byte, paths ...[]string) (fields []field, text bool, err error) {
	fields, err = readDocument(body, paths, jsontext.AllowInvalidUTF8(false))
	if !errors.Is(err, ErrNotJSON) {
		return fields, err == nil, err
	}
	fields, err = readDocument(body, paths, jsontext.AllowInvalidUTF8(true))
	return fields, false, err
}

// readDocument is one read of readFields, with the decoder's UTF-8 option.
func readDocument(body []byte, paths [][]string, utf8Option jsontext.Options) ([]field, error) {
	r := fieldReader{paths: paths, out: make([]field, len(paths)), opts: []jsontext.Options{jsontext.AllowDuplicateNames(true), utf8Option}}
	dec := jsontext.NewDecoder(bytes.NewBuffer(body), r.opts...)
	want := uint64(1)<<len(paths) - 1
	var err error
	if dec.PeekKind() == '{' {
		err = r.object(dec, want, 0)
	} else {
		_, err = dec.ReadValue()
	}
	if err != nil {
		return nil, ErrNotJSON
	}
	if _, err := dec.ReadToken(); err != io.EOF {
		return nil, ErrNotJSON // a second value, or garbage, after the document
	}
	if r.duplicate {
		return nil, ErrDuplicateKey
	}
	return r.out, nil
}

type fieldReader struct {
	paths     [][]string
	out       []field
	opts      []jsontext.Options // the decoder's
	duplicate bool
}

// object reads the object at the decoder's next token, whose keys are the
// depth-th segments of the paths in want.
func (r *fieldReader) object(dec *jsontext.Decoder, want uint64, depth int) error {
	if _, err := dec.ReadToken(); err != nil { // '{'
		return err
	}
	var seen uint64 // the paths whose key this object already had
	for dec.PeekKind() != '}' {
		name, err := dec.ReadToken()
		if err != nil {
			return err
		}
		leaf, deeper, variant := r.match(want, depth, name.String())
		// A key that differs from a wanted one only in case counts as a
		// second copy of it: encoding/json, as many subscribers read a
		// body, matches keys to fields ignoring case and lets the last one
		// win, so {"id":"a","ID":"b"} is event b to them.
		if seen&(leaf|deeper|variant) != 0 {
			r.duplicate = true
		}
		seen |= leaf | deeper | variant
		if leaf|deeper == 0 {
			if _, err := dec.ReadValue(); err != nil {
				return err
			}
			continue
		}
		if leaf == 0 && dec.PeekKind() == '{' {
			if err := r.object(dec, deeper, depth+1); err != nil {
				return err
			}
			continue
		}
		v, err := dec.ReadValue()
		if err != nil {
			return err
		}
		r.record(leaf, v)
		if deeper != 0 && v.Kind() == '{' {
			// One path ends at this key and another goes on into its
			// value (say "data" and "data.id"): read the value again.
			if err := r.object(jsontext.NewDecoder(bytes.NewBuffer(v), r.opts...), deeper, depth+1); err != nil {
				return err
			}
		}
	}
	_, err := dec.ReadToken() // '}'
	return err
}

// match returns the paths in want whose depth-th segment is key: those
// that end there and those that go on; and those whose segment equals key
// only ignoring case (as strings.EqualFold, which is encoding/json's
// matching of keys to fields).
func (r *fieldReader) match(want uint64, depth int, key string) (leaf, deeper, variant uint64) {
	for i, p := range r.paths {
		if want&(1<<i) == 0 {
			continue
		}
		if p[depth] != key {
			if strings.EqualFold(p[depth], key) {
				variant |= 1 << i
			}
			continue
		}
		if len(p) == depth+1 {
			leaf |= 1 << i
		} else {
			deeper |= 1 << i
		}
	}
	return leaf, deeper, variant
}

// record keeps v as the value of the paths in mask.
func (r *fieldReader) record(mask uint64, v jsontext.Value) {
	if mask == 0 {
		return
	}
	f := field{found: true, kind: v.Kind(), valid: true}
	switch f.kind {
	case '"':
		b, err := jsontext.AppendUnquote(nil, v)
		f.text, f.valid = string(b), err == nil
	case '0':
		f.text = string(v)
	}
	for i := range r.out {
		if mask&(1<<i) != 0 {
			r.out[i] = f
		}
	}
}

// str returns a string value; missing when it is absent or not a string,
// invalid when it is not valid UTF-8.
func (f field) str(missing, invalid error) (string, error) {
	switch {
	case !f.found || f.kind != '"':
		return "", missing
	case !f.valid:
		return "", invalid
	}
	return f.text, nil
}

// strOrNumber is str, also taking a number as written.
func (f field) strOrNumber(missing, invalid error) (string, error) {
	if f.found && f.kind == '0' {
		return f.text, nil
	}
	return f.str(missing, invalid)
}
