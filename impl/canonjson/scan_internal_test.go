package canonjson

import (
	"math/rand/v2"
	"testing"
)

// naiveVerbatim is skipVerbatim written byte by byte, the definition the word-at-a-time
// version must agree with.
func naiveVerbatim(s string, i int, ascii bool) int {
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || ascii && c >= 0x80 {
			return i
		}
	}
	return i
}

// Spec: ENC-005, ENC-007, ENC-017
func TestSkipVerbatimMatchesBytewiseScan(t *testing.T) {
	// Bytes around every boundary of the word test: the flagged ones, their neighbours,
	// and the high half.
	alphabet := []byte{0x00, 0x01, 0x1f, 0x20, 0x21, '"', '#', '[', '\\', ']', 'x', 0x7f, 0x80, 0x81, 0xa2, 0xdc, 0xfe, 0xff}
	r := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 40)
	for range 20000 {
		n := r.IntN(len(buf) + 1)
		for k := range n {
			// Mostly plain bytes, so flagged ones land at every offset of a word.
			if r.IntN(6) == 0 {
				buf[k] = alphabet[r.IntN(len(alphabet))]
			} else {
				buf[k] = byte('a' + r.IntN(26))
			}
		}
		s := string(buf[:n])
		start := 0
		if n > 0 {
			start = r.IntN(n + 1)
		}
		for _, ascii := range []bool{false, true} {
			if got, want := skipVerbatim(s, start, ascii), naiveVerbatim(s, start, ascii); got != want {
				t.Fatalf("skipVerbatim(%q, %d, %v) = %d, want %d", s, start, ascii, got, want)
			}
		}
		prefix, ascii := VerbatimPrefix(buf[:n])
		if want := naiveVerbatim(s, 0, false); prefix != want {
			t.Fatalf("VerbatimPrefix(%q) = %d, want %d", s, prefix, want)
		}
		if want := naiveVerbatim(s, 0, true) == prefix; ascii != want {
			t.Fatalf("VerbatimPrefix(%q) says ascii %v, want %v", s, ascii, want)
		}
	}
}
