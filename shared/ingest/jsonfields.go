package ingest

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math/bits"
	"unicode/utf8"
	"unsafe"
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
//
// A number, and a string without escapes or non-ASCII bytes (ids and types
// almost always), is returned as a view of the body's bytes, not a copy: it
// is valid as long as the body is, which for a base64 request is until the
// handler returns its scratch memory (after the request's log line).
func (v jsonValue) text() (string, bool) {
	switch v.kind {
	case 'n':
		return bodyString(v.raw), true
	case 's':
		inner := v.raw[1 : len(v.raw)-1]
		if !hasEscapeOrHigh(inner) {
			return bodyString(inner), true
		}
		var s string
		if err := json.Unmarshal(v.raw, &s); err != nil {
			return "", false
		}
		return s, true
	}
	return "", false
}

// bodyString views b, a part of a request body, as a string. The body is
// never written while the request is handled.
func bodyString(b []byte) string {
	return unsafe.String(unsafe.SliceData(b), len(b))
}

func hasEscapeOrHigh(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return true
		}
	}
	return false
}

// scanJSON reads the values at paths from a JSON body and records in
// out[i] the value at paths[i]. Keys match as encoding/json decodes them;
// when a key repeats, the first occurrence of a path counts.
//
// It reads only as much as it needs. The body was authenticated before it
// is read (the provider's own bytes), so full validation buys no safety,
// and on large bodies it cost as much as the HMAC. The contract:
//
//   - A body that is not an object (after leading space) cannot hold a
//     field; it is validated in full, exactly as json.Valid does.
//   - An object must start with '{' and end with '}' (space aside), which
//     refuses a truncated body without reading it all.
//   - The top-level object, and each object on the way to a wanted field,
//     is read in order with its syntax checked in full (keys, ':' and ','
//     separators, numbers, literals, and the wanted values themselves) up
//     to the last wanted field it holds.
//   - A value no pending path goes through is stepped over, checking only
//     that its strings are closed and its brackets balanced and matched
//     (nesting at most maxJSONDepth).
//   - Reading stops once every path has been found; the rest is not read.
//     When some path is not found, the object is read to its end and
//     nothing but space may follow it.
//
// Any other input is refused with errNotJSON. A valid JSON document is
// always accepted and gives the values encoding/json's tokenizer finds. It
// does not allocate unless a key on the way holds an escape.
func scanJSON(data []byte, paths []jsonPath, out []jsonValue) error {
	if len(paths) > maxJSONPaths || len(out) < len(paths) {
		panic("ingest: scanJSON called with too many paths")
	}
	s := scanner{data: data, paths: paths}
	defer func() { copy(out, s.out[:len(paths)]) }()
	for i, p := range paths {
		if len(p) > 0 {
			s.pending |= 1 << i
		}
	}
	s.skipSpace()
	if s.pos >= len(data) || data[s.pos] != '{' {
		return s.validDocument()
	}
	if !endsObject(data) {
		return errNotJSON
	}
	if err := s.object(s.pending, 1); err != nil {
		return err
	}
	if s.pending == 0 {
		return nil // every path found: the rest is not read
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return errNotJSON
	}
	return nil
}

// endsObject reports whether data's last byte other than space is '}'.
func endsObject(data []byte) bool {
	for i := len(data) - 1; i >= 0; i-- {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			continue
		case '}':
			return true
		}
		return false
	}
	return false
}

// validDocument checks, from s.pos, that the rest of the data is one valid
// JSON value and space, exactly as json.Valid does.
func (s *scanner) validDocument() error {
	if err := s.valid(0); err != nil {
		return err
	}
	s.skipSpace()
	if s.pos != len(s.data) {
		return errNotJSON
	}
	return nil
}

type scanner struct {
	data    []byte
	pos     int
	paths   []jsonPath
	out     [maxJSONPaths]jsonValue // copied to the caller's at the end, so that it need not escape
	pending uint8                   // the paths not found yet
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

// valid checks one value in full.
func (s *scanner) valid(depth int) error {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return errNotJSON
	}
	switch c := s.data[s.pos]; c {
	case '{', '[':
		return s.container(c, depth+1)
	}
	return s.scalar()
}

// scalar checks a string, number or literal in full.
func (s *scanner) scalar() error {
	switch c := s.data[s.pos]; {
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

// object reads, in full, the object opening at s.pos at nesting depth.
// mask holds the pending paths whose first depth-1 segments led here; their
// next segment is matched against this object's keys. It returns as soon
// as no path is pending any more.
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
		if mask &= s.pending; mask == 0 {
			// Nothing more can be found in here: step over the rest.
			return s.skipRest('}', depth)
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			return errNotJSON
		}
		keyStart := s.pos
		if err := s.str(); err != nil {
			return err
		}
		var capture, descend uint8
		key := s.data[keyStart+1 : s.pos-1]
		plain := !hasEscapeOrHigh(key) // then the key is its bytes
		for i, p := range s.paths {
			if mask&(1<<i) == 0 {
				continue
			}
			if plain && string(key) != p[seg] || !plain && !keyEquals(key, s.data[keyStart:s.pos], p[seg]) {
				continue
			}
			if len(p) == seg+1 {
				capture |= 1 << i
			} else {
				descend |= 1 << i
			}
		}
		s.skipSpace()
		if s.pos >= len(s.data) || s.data[s.pos] != ':' {
			return errNotJSON
		}
		s.pos++
		s.skipSpace()
		if s.pos >= len(s.data) {
			return errNotJSON
		}
		start := s.pos
		switch c := s.data[s.pos]; {
		case capture != 0:
			if err := s.valid(depth); err != nil {
				return err
			}
			end := s.pos
			s.record(capture, s.data[start:end])
			if descend != 0 && c == '{' {
				// One path ends at this key and another goes on into its
				// value (say "a" and "a.b"): read it again for the latter.
				s.pos = start
				if err := s.object(descend, depth+1); err != nil {
					return err
				}
				s.pos = end
			}
			if s.pending == 0 {
				return nil
			}
		case descend != 0 && c == '{':
			if err := s.object(descend, depth+1); err != nil {
				return err
			}
			if s.pending == 0 {
				return nil
			}
		default:
			if err := s.skip(depth); err != nil {
				return err
			}
		}
		if done, err := s.separator('}'); done || err != nil {
			return err
		}
	}
}

// record stores raw, a value checked in full, as found for the paths in
// capture, and marks them found.
func (s *scanner) record(capture uint8, raw []byte) {
	v := jsonValue{raw: raw, kind: 'o'}
	switch c := raw[0]; {
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
	s.pending &^= capture
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

// container checks, in full, the object or array opening at s.pos at
// nesting depth.
func (s *scanner) container(open byte, depth int) error {
	if depth > maxJSONDepth {
		return errNotJSON
	}
	end := byte(']')
	if open == '{' {
		end = '}'
	}
	s.pos++ // '{' or '['
	s.skipSpace()
	if s.pos < len(s.data) && s.data[s.pos] == end {
		s.pos++
		return nil
	}
	for {
		if open == '{' {
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != '"' {
				return errNotJSON
			}
			if err := s.str(); err != nil {
				return err
			}
			s.skipSpace()
			if s.pos >= len(s.data) || s.data[s.pos] != ':' {
				return errNotJSON
			}
			s.pos++
		}
		if err := s.valid(depth); err != nil {
			return err
		}
		if done, err := s.separator(end); done || err != nil {
			return err
		}
	}
}

// skip steps over the value starting at s.pos (not space), in an object
// at nesting depth: a string only up to its closing quote, an object or
// array only checking that its strings close and its brackets balance and
// match. Numbers and literals are short and checked in full.
func (s *scanner) skip(depth int) error {
	switch c := s.data[s.pos]; c {
	case '"':
		return s.skipString()
	case '{', '[':
		if depth+1 > maxJSONDepth {
			return errNotJSON
		}
		s.pos++
		end := byte(']')
		if c == '{' {
			end = '}'
		}
		return s.skipRest(end, depth+1)
	}
	return s.scalar()
}

// structural marks the bytes skipRest stops at (read-only).
var structural = func() (t [256]bool) {
	for _, c := range `"{}[]` {
		t[c] = true
	}
	return t
}()

// skipRest steps over the rest of a container at nesting depth, up to and
// including its closing byte end.
func (s *scanner) skipRest(end byte, depth int) error {
	data := s.data
	for i := s.pos; i < len(data); i++ {
		c := data[i]
		if !structural[c] {
			continue
		}
		switch c {
		case '"':
			j := stringEnd(data, i+1)
			if j < 0 {
				return errNotJSON
			}
			i = j - 1
			continue
		case '{', '[':
			if depth+1 > maxJSONDepth {
				return errNotJSON
			}
			s.pos = i + 1
			inner := byte(']')
			if c == '{' {
				inner = '}'
			}
			if err := s.skipRest(inner, depth+1); err != nil {
				return err
			}
			i = s.pos - 1
		default: // '}' or ']'
			if c != end {
				return errNotJSON
			}
			s.pos = i + 1
			return nil
		}
	}
	return errNotJSON
}

// skipString steps over the string opening at s.pos up to its closing
// quote, honouring backslash escapes but checking nothing else.
func (s *scanner) skipString() error {
	end := stringEnd(s.data, s.pos+1)
	if end < 0 {
		return errNotJSON
	}
	s.pos = end
	return nil
}

// stringEnd returns the index just past the closing quote of the string
// whose contents start at i, or -1 when it does not close. Escapes are
// honoured, not checked. Eight bytes at a time for the first words (most
// strings are short: the end is found without a byte-by-byte loop), then,
// for a long string, at memory speed (bytes.IndexByte).
func stringEnd(data []byte, i int) int {
	for words := 0; i+8 <= len(data); {
		if words == 4 {
			return longStringEnd(data, i)
		}
		w := binary.LittleEndian.Uint64(data[i:])
		q, b := w^quote, w^bslash
		// The lowest set bit marks the first quote or backslash (higher
		// bits may be false positives, and are never used).
		m := ((q-lsb) & ^q | (b-lsb) & ^b) & msb
		if m == 0 {
			i += 8
			words++
			continue
		}
		i += bits.TrailingZeros64(m) / 8
		if data[i] == '"' {
			return i + 1
		}
		i += 2 // the backslash and the byte it escapes
	}
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			return i + 1
		case '\\':
			i++
		}
	}
	return -1
}

// longStringEnd is stringEnd for what remains of a long string, from i (not
// inside an escape): the first quote that no odd run of backslashes
// escapes.
func longStringEnd(data []byte, i int) int {
	for {
		n := bytes.IndexByte(data[i:], '"')
		if n < 0 {
			return -1
		}
		q := i + n
		k := q
		for k > i && data[k-1] == '\\' {
			k--
		}
		if (q-k)%2 == 0 {
			return q + 1
		}
		i = q + 1 // an escaped quote
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

// separator reads what follows a member or element: ',' (more to come) or
// the closing end byte (done), after optional white space.
func (s *scanner) separator(end byte) (done bool, err error) {
	s.skipSpace()
	if s.pos >= len(s.data) {
		return false, errNotJSON
	}
	switch s.data[s.pos] {
	case ',':
		s.pos++
		return false, nil
	case end:
		s.pos++
		return true, nil
	}
	return false, errNotJSON
}
