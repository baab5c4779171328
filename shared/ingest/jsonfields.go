package ingest

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"unicode/utf8"
)

// maxJSONDepth matches encoding/json's nesting limit.
const maxJSONDepth = 10000

// maxJSONPaths is how many paths one scan extracts at once.
const maxJSONPaths = 8

var errNotJSON = errors.New("body is not valid JSON")

// jsonPath is a field path into nested objects, e.g. {"event", "type"}.
type jsonPath []string

// jsonValue is the value found at a path.
type jsonValue struct {
	raw  []byte // the value's bytes; strings include their quotes
	kind byte   // 's' string, 'n' number, 'o' anything else (object, array, true, false, null)
}

// text returns a string or number value as text: a string unescaped as
// encoding/json would, a number as written. ok is false for other kinds and
// for absent values.
func (v jsonValue) text() (string, bool) {
	switch v.kind {
	case 'n':
		return string(v.raw), true
	case 's':
		inner := v.raw[1 : len(v.raw)-1]
		if !hasEscapeOrHigh(inner) {
			return string(inner), true
		}
		var s string
		if err := json.Unmarshal(v.raw, &s); err != nil {
			return "", false
		}
		return s, true
	}
	return "", false
}

func hasEscapeOrHigh(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// scanJSON checks that data is one valid JSON value, exactly as
// json.Valid does, and in the same pass records in out[i] the value at
// paths[i], with encoding/json's semantics for a map: keys match exactly,
// and the last of duplicate keys wins. It does not allocate unless a key
// holds an escape.
func scanJSON(data []byte, paths []jsonPath, out []jsonValue) error {
	if len(paths) > maxJSONPaths || len(out) < len(paths) {
		panic("ingest: scanJSON called with too many paths")
	}
	for i := range paths {
		out[i] = jsonValue{}
	}
	s := scanner{data: data, paths: paths, out: out}
	var all uint8
	for i, p := range paths {
		if len(p) > 0 {
			all |= 1 << i
		}
	}
	if err := s.value(all, 0); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return errNotJSON
	}
	return nil
}

type scanner struct {
	data  []byte
	pos   int
	paths []jsonPath
	out   []jsonValue
}

func (s *scanner) skipSpace() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value scans one value. mask holds the paths whose first depth segments
// led here; their next segment is matched against this value's keys.
func (s *scanner) value(mask uint8, depth int) error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return errNotJSON
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(mask, depth+1)
	case c == '[':
		return s.array(depth + 1)
	case c == '"':
		return s.str()
	case c == '-' || ('0' <= c && c <= '9'):
		return s.number()
	case c == 't':
		return s.literal("true")
	case c == 'f':
		return s.literal("false")
	case c == 'n':
		return s.literal("null")
	}
	return errNotJSON
}

func (s *scanner) literal(lit string) error {
	if len(s.data)-s.pos < len(lit) || string(s.data[s.pos:s.pos+len(lit)]) != lit {
		return errNotJSON
	}
	s.pos += len(lit)
	return nil
}

func (s *scanner) object(mask uint8, depth int) error {
	if depth > maxJSONDepth {
		return errNotJSON
	}
	s.pos++ // '{'
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
		return nil
	}
	seg := depth - 1 // index of the path segment matched by this object's keys
	for {
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return errNotJSON
		}
		keyStart := s.pos
		if err := s.str(); err != nil {
			return err
		}
		var capture, descend uint8
		if mask != 0 {
			key := s.data[keyStart+1 : s.pos-1]
			for i, p := range s.paths {
				if mask&(1<<i) == 0 || !keyEquals(key, s.data[keyStart:s.pos], p[seg]) {
					continue
				}
				if len(p) == seg+1 {
					capture |= 1 << i
				} else {
					// A repeated key replaces the whole earlier value, so
					// forget what the earlier one held.
					s.out[i] = jsonValue{}
					descend |= 1 << i
				}
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errNotJSON
		}
		s.pos++
		s.skipSpace()
		start := s.pos
		if err := s.value(descend, depth); err != nil {
			return err
		}
		if capture != 0 {
			v := jsonValue{raw: s.data[start:s.pos], kind: 'o'}
			switch c := s.data[start]; {
			case c == '"':
				v.kind = 's'
			case c == '-' || ('0' <= c && c <= '9'):
				v.kind = 'n'
			}
			for i := range s.paths {
				if capture&(1<<i) != 0 {
					s.out[i] = v
				}
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errNotJSON
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case '}':
			s.pos++
			return nil
		default:
			return errNotJSON
		}
	}
}

// keyEquals reports whether a key (raw: without quotes; quoted: with them)
// decodes to want.
func keyEquals(raw, quoted []byte, want string) bool {
	if !hasEscapeOrHigh(raw) {
		return string(raw) == want
	}
	var k string
	if err := json.Unmarshal(quoted, &k); err != nil {
		return false
	}
	return k == want
}

func (s *scanner) array(depth int) error {
	if depth > maxJSONDepth {
		return errNotJSON
	}
	s.pos++ // '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		return nil
	}
	for {
		if err := s.value(0, depth); err != nil {
			return err
		}
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errNotJSON
		}
		switch s.data[s.pos] {
		case ',':
			s.pos++
		case ']':
			s.pos++
			return nil
		default:
			return errNotJSON
		}
	}
}

// SWAR constants: one byte repeated across a word.
const (
	lsb    = 0x0101010101010101
	msb    = 0x8080808080808080
	quote  = '"' * lsb
	bslash = '\\' * lsb
	space  = 0x20 * lsb
)

// plainWord reports whether none of the 8 bytes in w is a quote, a
// backslash or a control character: the common case inside a string.
func plainWord(w uint64) bool {
	q := w ^ quote  // zero bytes where w has '"'
	b := w ^ bslash // zero bytes where w has '\\'
	hasQuote := (q - lsb) & ^q & msb
	hasSlash := (b - lsb) & ^b & msb
	hasCtl := (w - space) & ^w & msb // bytes below 0x20
	return hasQuote|hasSlash|hasCtl == 0
}

// strSpecial marks the bytes a string cannot hold as they are: the quote,
// the backslash and control characters (read-only).
var strSpecial = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// str scans a string starting at its opening quote: eight bytes at a time
// while none needs a closer look, then byte by byte up to the next special
// byte.
func (s *scanner) str() error {
	data, i := s.data, s.pos+1
	for {
		for i+8 <= len(data) && plainWord(binary.LittleEndian.Uint64(data[i:])) {
			i += 8
		}
		for i < len(data) && !strSpecial[data[i]] {
			i++
		}
		if i >= len(data) {
			return errNotJSON
		}
		switch data[i] {
		case '"':
			s.pos = i + 1
			return nil
		case '\\':
			if i+1 >= len(data) {
				return errNotJSON
			}
			switch data[i+1] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				i += 2
			case 'u':
				if i+6 > len(data) {
					return errNotJSON
				}
				for _, h := range data[i+2 : i+6] {
					if _, ok := hexVal(h); !ok {
						return errNotJSON
					}
				}
				i += 6
			default:
				return errNotJSON
			}
		default: // a control character
			return errNotJSON
		}
	}
}

func hexVal(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// number scans -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (s *scanner) number() error {
	d := s.data
	if d[s.pos] == '-' {
		s.pos++
	}
	switch {
	case s.pos < len(d) && d[s.pos] == '0':
		s.pos++
	case s.pos < len(d) && '1' <= d[s.pos] && d[s.pos] <= '9':
		s.digits()
	default:
		return errNotJSON
	}
	if s.pos < len(d) && d[s.pos] == '.' {
		s.pos++
		if s.digits() == 0 {
			return errNotJSON
		}
	}
	if s.pos < len(d) && (d[s.pos] == 'e' || d[s.pos] == 'E') {
		s.pos++
		if s.pos < len(d) && (d[s.pos] == '+' || d[s.pos] == '-') {
			s.pos++
		}
		if s.digits() == 0 {
			return errNotJSON
		}
	}
	return nil
}

func (s *scanner) digits() int {
	start := s.pos
	for s.pos < len(s.data) && '0' <= s.data[s.pos] && s.data[s.pos] <= '9' {
		s.pos++
	}
	return s.pos - start
}
