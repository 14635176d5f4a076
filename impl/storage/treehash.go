package storage

import (
	"encoding/binary"
	"math/bits"
	"sync"

	"lukechampine.com/blake3/guts"
)

// hashBatchBytes is the widest unit the SIMD compressor of lukechampine.com/blake3/guts
// accepts: 16 chunks of 1 KiB.
const hashBatchBytes = guts.MaxSIMD * guts.ChunkSize

// treeHasher computes a 32-byte BLAKE3 hash (plain or keyed) of one contiguous input with the
// primitives of lukechampine.com/blake3/guts, on the calling goroutine and without allocating.
// blake3.Hasher.Write starts a goroutine per subtree of every multi-chunk write and copies
// short subtrees into fresh 16 KiB buffers, which costs more than the hashing for a record of
// a few KiB; this walks the same tree: each full batch of 16 chunks that is not the last is
// one SIMD call pushed onto a stack of subtrees, and the last batch is one SIMD call, or one
// chunk compression when it fits in a chunk. Its output is blake3's (tests compare them).
type treeHasher struct {
	key     [8]uint32
	flags   uint32
	stack   [64][8]uint32 // one chaining value per occupied subtree height
	scratch [hashBatchBytes]byte
	input   []byte // the caller assembles the input here
}

var treeHashers = sync.Pool{New: func() any { return new(treeHasher) }}

// getTreeHasher returns a hasher for a keyed hash under key, or for a plain hash when key is
// nil. Put it back with release, which wipes what it holds.
func getTreeHasher(key *[32]byte) *treeHasher {
	h := treeHashers.Get().(*treeHasher)
	if key == nil {
		h.key, h.flags = guts.IV, 0
	} else {
		for i := range h.key {
			h.key[i] = binary.LittleEndian.Uint32(key[4*i:])
		}
		h.flags = guts.FlagKeyedHash
	}
	h.input = h.input[:0]
	return h
}

func (h *treeHasher) release() {
	h.key, h.stack = [8]uint32{}, [64][8]uint32{}
	clear(h.input)
	if cap(h.input) > 1<<20 {
		h.input = nil
	}
	treeHashers.Put(h)
}

// sum returns the hash of h.input.
func (h *treeHasher) sum() [32]byte {
	data := h.input
	var counter uint64 // chunks hashed so far; bit i set means stack[i] is occupied
	off := 0
	for len(data)-off > hashBatchBytes {
		n := guts.CompressBuffer((*[hashBatchBytes]byte)(data[off:off+hashBatchBytes]), hashBatchBytes, &h.key, counter, h.flags)
		h.push(guts.ChainingValue(n), bits.TrailingZeros(guts.MaxSIMD), &counter)
		off += hashBatchBytes
	}
	rest := data[off:]
	var n guts.Node
	switch {
	case len(rest) <= guts.ChunkSize:
		n = guts.CompressChunk(rest, &h.key, counter, h.flags)
	case cap(data)-off >= hashBatchBytes:
		n = guts.CompressBuffer((*[hashBatchBytes]byte)(data[off:off+hashBatchBytes]), len(rest), &h.key, counter, h.flags)
	default:
		copy(h.scratch[:], rest)
		n = guts.CompressBuffer(&h.scratch, len(rest), &h.key, counter, h.flags)
		clear(h.scratch[:])
	}
	for i := bits.TrailingZeros64(counter); i < bits.Len64(counter); i++ {
		if counter&(1<<i) != 0 {
			n = guts.ParentNode(h.stack[i], guts.ChainingValue(n), &h.key, h.flags)
		}
	}
	n.Flags |= guts.FlagRoot
	words := guts.CompressNode(n)
	var out [32]byte
	for i := range 8 {
		binary.LittleEndian.PutUint32(out[4*i:], words[i])
	}
	return out
}

// push adds the chaining value of a complete subtree of 2^height chunks, merging
// equal-height neighbours; more input always follows, so no merged node is the root.
func (h *treeHasher) push(cv [8]uint32, height int, counter *uint64) {
	i := height
	for *counter&(1<<i) != 0 {
		cv = guts.ChainingValue(guts.ParentNode(h.stack[i], cv, &h.key, h.flags))
		i++
	}
	h.stack[i] = cv
	*counter += 1 << height
}
