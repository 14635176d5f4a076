// Package delta encodes a record's new bytes as the few changes from its previous bytes, for
// the storage backends that write a record as what changed (logstore, etcdstore).
package delta

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math/bits"
)

// A delta rebuilds a record's new bytes from its previous bytes. It is a sequence of
// instructions, each a uvarint n<<1|c: c = 0 is a literal of n bytes that follow; c = 1
// copies n bytes of the previous record from the uvarint offset that follows.
//
// A journal grows at its end and each persisted step changes a small part of it, but the
// envelope holds the revision near its start and the tag at its end, so the encoder looks
// for the previous bytes again at a few shifts around two alignments: the one of the last
// copy, and the one that lines the two ends up.

const (
	// minCopy is the shortest run worth a copy instruction.
	minCopy = 12
	// maxShift is how far from an alignment a run of the previous bytes is looked for.
	maxShift = 4
	// giveUpAfter is how many unmatched bytes in a row end the search: the rest is a literal.
	giveUpAfter = 8 << 10
)

// Append appends the delta that rebuilds cur from prev to dst. It reports false when the
// delta would not be much smaller than cur, which is then better written whole.
func Append(dst, prev, cur []byte) ([]byte, bool) {
	start := len(dst)
	lit := 0   // start of the pending literal in cur
	shift := 0 // prev offset minus cur offset of the last copy
	tail := len(prev) - len(cur)
	for i := 0; i < len(cur); {
		if i-lit >= giveUpAfter {
			break
		}
		best, bestOff := longest(prev, cur, i, i+shift, 0, 0)
		if tail != shift {
			best, bestOff = longest(prev, cur, i, i+tail, best, bestOff)
		}
		if best < minCopy {
			i++
			continue
		}
		dst = appendLiteral(dst, cur[lit:i])
		dst = binary.AppendUvarint(dst, uint64(best)<<1|1)
		dst = binary.AppendUvarint(dst, uint64(bestOff))
		i += best
		lit, shift = i, bestOff+best-i
	}
	dst = appendLiteral(dst, cur[lit:])
	return dst, len(dst)-start < len(cur)*3/4
}

// longest returns the longest run of prev at an offset within maxShift of at that matches
// cur from i, if longer than best at bestOff (the first of equal runs is kept). Most offsets
// do not match cur[i] at all, so the window's bytes are compared with it eight at a time.
func longest(prev, cur []byte, i, at, best, bestOff int) (int, int) {
	lo, hi := max(at-maxShift, 0), min(at+maxShift+1, len(prev))
	if lo >= hi {
		return best, bestOff
	}
	c := cur[i]
	for lo < hi {
		var hits uint64
		n := min(hi-lo, 8)
		if n == 8 {
			hits = equalBytes(binary.LittleEndian.Uint64(prev[lo:]), c)
		} else if prev[lo] == c {
			hits, n = 0x80, 1
		} else {
			n = 1
		}
		for hits != 0 {
			off := lo + bits.TrailingZeros64(hits)/8
			hits &= hits - 1
			if k := commonPrefix(prev[off:], cur[i:]); k > best {
				best, bestOff = k, off
			}
		}
		lo += n
	}
	return best, bestOff
}

// equalBytes returns the word with the top bit of each byte of w that equals c set, and no
// other bit.
func equalBytes(w uint64, c byte) uint64 {
	const low7 = 0x7f7f7f7f7f7f7f7f
	x := w ^ (0x0101010101010101 * uint64(c))
	return ^((x&low7 + low7) | x | low7)
}

func appendLiteral(dst, lit []byte) []byte {
	if len(lit) == 0 {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(lit))<<1)
	return append(dst, lit...)
}

// commonPrefix returns the length of the longest common prefix of a and b. A copy usually
// runs for most of a record, so after the first words it compares blocks with bytes.Equal
// (vectorized), then words, then bytes, where the blocks differ.
func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	i := 0
	for ; i < 32; i += 8 {
		if i+8 > n {
			return i + tailPrefix(a[i:], b[i:])
		}
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	for i+prefixBlock <= n && bytes.Equal(a[i:i+prefixBlock], b[i:i+prefixBlock]) {
		i += prefixBlock
	}
	for ; i+8 <= n; i += 8 {
		if x := binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:]); x != 0 {
			return i + bits.TrailingZeros64(x)/8
		}
	}
	return i + tailPrefix(a[i:], b[i:])
}

// prefixBlock is the block commonPrefix compares at once.
const prefixBlock = 256

// tailPrefix is commonPrefix of a and b of equal length, one byte at a time.
func tailPrefix(a, b []byte) int {
	i := 0
	for i < len(a) && a[i] == b[i] {
		i++
	}
	return i
}

// ErrBadDelta is the failure of a delta that does not apply.
var ErrBadDelta = errors.New("record delta does not apply to the previous record")

// Apply rebuilds the size bytes a delta describes from prev.
func Apply(prev, delta []byte, size int) ([]byte, error) {
	out := make([]byte, 0, size)
	for len(delta) > 0 {
		op, k := binary.Uvarint(delta)
		if k <= 0 {
			return nil, ErrBadDelta
		}
		delta = delta[k:]
		n := op >> 1
		if n > uint64(size-len(out)) {
			return nil, ErrBadDelta
		}
		if op&1 == 0 {
			if n > uint64(len(delta)) {
				return nil, ErrBadDelta
			}
			out = append(out, delta[:n]...)
			delta = delta[n:]
			continue
		}
		off, k := binary.Uvarint(delta)
		if k <= 0 || off > uint64(len(prev)) || n > uint64(len(prev))-off {
			return nil, ErrBadDelta
		}
		delta = delta[k:]
		out = append(out, prev[off:off+n]...)
	}
	if len(out) != size {
		return nil, ErrBadDelta
	}
	return out, nil
}
