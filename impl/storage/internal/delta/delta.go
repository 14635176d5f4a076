// Package delta encodes a record's new bytes as the few changes from its previous bytes, for
// the storage backends that write a record as what changed (logstore, etcdstore).
package delta

import (
	"encoding/binary"
	"errors"
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
		best, bestOff := 0, 0
		for _, base := range [2]int{shift, tail} {
			for d := -maxShift; d <= maxShift; d++ {
				off := i + base + d
				if off < 0 || off >= len(prev) || prev[off] != cur[i] {
					continue
				}
				if n := commonPrefix(prev[off:], cur[i:]); n > best {
					best, bestOff = n, off
				}
			}
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

func appendLiteral(dst, lit []byte) []byte {
	if len(lit) == 0 {
		return dst
	}
	dst = binary.AppendUvarint(dst, uint64(len(lit))<<1)
	return append(dst, lit...)
}

func commonPrefix(a, b []byte) int {
	n := min(len(a), len(b))
	i := 0
	for i+8 <= n && binary.LittleEndian.Uint64(a[i:]) == binary.LittleEndian.Uint64(b[i:]) {
		i += 8
	}
	for i < n && a[i] == b[i] {
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
