package canonjson

// Word-at-a-time scanning of string contents. JSON text is mostly long runs of bytes that a
// string holds verbatim; testing eight of them per step keeps both the reader and the
// writer close to memory speed on such runs.

import "math/bits"

const (
	lowBits  = 0x0101010101010101
	highBits = 0x8080808080808080
)

// load64 returns s[i:i+8] as a little-endian word; the compiler turns it into one load.
func load64(s string, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// escapeMask sets the high bit of the lowest byte of x that is a control byte (below 0x20),
// '"' or '\\', if there is one. Bits above that byte may be set spuriously (a borrow can
// carry into the next byte), so only the lowest set bit is meaningful. High bytes
// (0x80 and above) are never flagged by themselves.
func escapeMask(x uint64) uint64 {
	quote := x ^ ('"' * lowBits)
	backslash := x ^ ('\\' * lowBits)
	return ((x - 0x20*lowBits) | (quote - lowBits) | (backslash - lowBits)) & ^x & highBits
}

// firstFlagged returns the index of the byte whose high bit is the lowest set bit of m,
// which must not be zero.
func firstFlagged(m uint64) int { return bits.TrailingZeros64(m) >> 3 }

// plainASCII reports whether every byte of s is ASCII from 0x20 up, other than '"' and '\\',
// so that its string literal is s between quotes. Strings of up to a word (most keys) are
// checked byte by byte, which is cheaper for them; longer ones a word at a time, the last
// word overlapping the one before.
func plainASCII(s string) bool {
	n := len(s)
	if n <= 8 {
		for i := 0; i < n; i++ {
			if !plainByte[s[i]] {
				return false
			}
		}
		return true
	}
	for i := 0; i+8 < n; i += 8 {
		if w := load64(s, i); escapeMask(w)|w&highBits != 0 {
			return false
		}
	}
	x := load64(s, n-8)
	return escapeMask(x)|x&highBits == 0
}

// skipVerbatim returns the smallest j >= i such that s[j] is a control byte, '"' or '\\'
// (or len(s) if there is none). When ascii is true it also stops at the first byte of
// 0x80 or above.
func skipVerbatim(s string, i int, ascii bool) int {
	var high uint64
	if ascii {
		high = highBits
	}
	for ; i+8 <= len(s); i += 8 {
		x := load64(s, i)
		if m := escapeMask(x) | x&high; m != 0 {
			return i + firstFlagged(m)
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' || c == '\\' || ascii && c >= 0x80 {
			return i
		}
	}
	return i
}

// VerbatimPrefix returns the length of the longest prefix of b that a JSON string literal
// holds as it is (the index of b's first control byte, '"' or '\\', or len(b) if it has none)
// and whether that prefix is all ASCII. It reads b a word at a time and keeps no reference
// to it.
func VerbatimPrefix(b []byte) (n int, ascii bool) {
	s := bytesString(b)
	n = skipVerbatim(s, 0, true)
	if n == len(s) || s[n] < 0x80 {
		return n, true
	}
	return skipVerbatim(s, n, false), false
}

// plainByte[c] is true for printable ASCII other than '"' and '\\'.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()
