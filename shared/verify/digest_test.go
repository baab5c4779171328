package verify

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// TestDecodeHex compares decodeHex with encoding/hex for every byte value
// at either position of a digit pair, and for odd and mismatched lengths.
func TestDecodeHex(t *testing.T) {
	check := func(s string, n int) {
		t.Helper()
		dst := make([]byte, n)
		ok := decodeHex(dst, s)
		want, err := hex.DecodeString(s)
		wantOK := err == nil && len(want) == n
		if ok != wantOK || ok && !bytes.Equal(dst, want) {
			t.Fatalf("decodeHex(%q) = %x, %v; encoding/hex: %x, %v", s, dst, ok, want, err)
		}
	}
	for c := range 256 {
		for _, s := range []string{string([]byte{byte(c), 'a'}), string([]byte{'F', byte(c)}), "00" + string([]byte{'7', byte(c)}) + "ff"} {
			check(s, len(s)/2)
		}
	}
	check("", 0)
	check("abc", 1)
	check("abcd", 1)
	check("ab", 2)
	check("0123456789abcdefABCDEF0123456789abcdefABCDEF0123456789abcdefABCD", 32)
}
