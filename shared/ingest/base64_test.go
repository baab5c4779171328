package ingest

import (
	"bytes"
	"encoding/base64"
	"strings"
	"testing"
)

// checkBase64 compares decodeBase64 with encoding/base64 on src.
func checkBase64(t *testing.T, src []byte) {
	t.Helper()
	n := base64.StdEncoding.DecodedLen(len(src))
	want := make([]byte, n)
	wn, werr := base64.StdEncoding.Decode(want, src)
	got := make([]byte, n)
	gn, ascii, gerr := decodeBase64(got, src)
	if (gerr == nil) != (werr == nil) {
		t.Fatalf("decodeBase64(%q) error = %v, encoding/base64 = %v", src, gerr, werr)
	}
	if werr == nil && !bytes.Equal(got[:gn], want[:wn]) {
		t.Fatalf("decodeBase64(%q) = %x, encoding/base64 = %x", src, got[:gn], want[:wn])
	}
	if ascii && (gerr != nil || bytes.ContainsFunc(got[:gn], func(r rune) bool { return r >= 0x80 })) {
		t.Fatalf("decodeBase64(%q) reports ASCII for %x (error %v)", src, got[:gn], gerr)
	}
}

// TestDecodeBase64ASCII checks that the ASCII report is made (not only
// that it is never wrong): for ASCII text of every length up to 40, with and
// without padding, and never with one high byte at any position.
func TestDecodeBase64ASCII(t *testing.T) {
	for n := 1; n <= 40; n++ {
		raw := []byte(strings.Repeat(`{"id":"evt_1"}`, 3)[:n])
		src := []byte(base64.StdEncoding.EncodeToString(raw))
		dst := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
		if got, ascii, err := decodeBase64(dst, src); err != nil || !ascii || string(dst[:got]) != string(raw) {
			t.Errorf("decodeBase64(%s) = %q, ascii %v, %v; want %q, ascii", src, dst[:got], ascii, err, raw)
		}
		for i := range raw {
			high := bytes.Clone(raw)
			high[i] = 0x80 | byte(i)
			src := []byte(base64.StdEncoding.EncodeToString(high))
			if _, ascii, err := decodeBase64(dst, src); err != nil || ascii {
				t.Errorf("decodeBase64 of %x reports ASCII (error %v)", high, err)
			}
		}
	}
}

func TestDecodeBase64(t *testing.T) {
	var inputs []string
	for n := range 40 {
		raw := make([]byte, n)
		for i := range raw {
			raw[i] = byte(i*37 + n)
		}
		enc := base64.StdEncoding.EncodeToString(raw)
		inputs = append(inputs, enc, base64.RawStdEncoding.EncodeToString(raw), base64.URLEncoding.EncodeToString(raw))
		if len(enc) > 4 {
			for _, bad := range []string{"\n", "\r\n", "=", "!", "-", "_", "\x00", "\xff"} {
				at := n % len(enc)
				inputs = append(inputs, enc[:at]+bad+enc[at:], enc[:at]+bad+enc[at+1:])
			}
		}
	}
	inputs = append(inputs, "", "=", "==", "====", "QQ==", "QR==", "QUI=", "QUJ=", "QQ=A", "Q===", "QUJD", "QUJD\n", strings.Repeat("QUJD", 100)+"QQ==")
	for _, in := range inputs {
		checkBase64(t, []byte(in))
	}
}

func FuzzDecodeBase64(f *testing.F) {
	for _, s := range []string{"", "QUJD", "QQ==", "QR==", "QUJD\nRUZH", "eyJpZCI6ImV2dF8xIn0=", "Q===", "QUJD!"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkBase64(t, data)
		// Valid encodings of the same bytes, which the fuzzer rarely finds.
		checkBase64(t, []byte(base64.StdEncoding.EncodeToString(data)))
	})
}

func BenchmarkDecodeBase64(b *testing.B) {
	raw := bytes.Repeat([]byte("0123456789abcdef"), 64)
	src := []byte(base64.StdEncoding.EncodeToString(raw))
	dst := make([]byte, base64.StdEncoding.DecodedLen(len(src)))
	b.Run("ingest", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, _, err := decodeBase64(dst, src); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-base64", func(b *testing.B) {
		b.SetBytes(int64(len(src)))
		for b.Loop() {
			if _, err := base64.StdEncoding.Decode(dst, src); err != nil {
				b.Fatal(err)
			}
		}
	})
}
